"""Fair use (issue 16 §5) on Zalo, end to end in one process: signed events over real HTTP into the webhook app,
the real engine and PostgreSQL, replies out to the fake Zalo OpenAPI; and the counters' clean-up.

Windows are ended by moving the sender's counter row back in time (a minute, a day): the test's stand-in for
waiting, on our own real table, never a sleep.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from bot.fair_use import DAY_NOTICE, MINUTE_NOTICE
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db import rate_limits
from db.pool import create_pool
from tests.integration.worker_helpers import make_ctx
from tests.integration.zalo_support import zalo_harness

QUESTION = "Răng bị ê buốt khi uống nước lạnh là bệnh gì?"
ANSWER_PART = "mòn men răng"  # D001's answer, as the patient reads it
EMERGENCY = "Bố tôi đau ngực dữ dội, khó thở, vã mồ hôi"
CLINIC_PHONE = "028 3999 1234"


def is_emergency_card(text: str) -> bool:
    return "115" in text and "CẤP CỨU" in text


async def test_minute_limit_one_notice_per_window_and_emergencies_still_answered(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, rate_limit_per_minute=4, rate_limit_per_day=0) as z:
        await z.choose_role("p1")  # 1 (a tapped button counts like typed text)
        for _ in range(3):  # 2, 3, 4
            await z.say("p1", QUESTION)
        sent = z.fake.to("p1")
        assert len(sent) == 4 and all(ANSWER_PART in m.text for m in sent[1:])

        await z.say("p1", QUESTION)  # 5: over the limit → the notice, once
        notice = z.fake.to("p1")[4:]
        assert [m.text for m in notice] == [MINUTE_NOTICE.format(limit=4)]
        assert "hơi nhanh" in notice[0].text and "115" in notice[0].text
        await z.say("p1", QUESTION)  # 6, 7: nothing more in this window, not even the notice
        await z.post(z.event("p1", name="user_send_sticker"))
        assert len(z.fake.to("p1")) == 5

        await z.say("p1", EMERGENCY)  # an emergency is always answered
        card = z.fake.to("p1")[5:]
        assert len(card) == 1 and is_emergency_card(card[0].text)

        # Someone else is not affected.
        await z.choose_role("p2")
        await z.say("p2", QUESTION)
        assert ANSWER_PART in z.fake.to("p2")[-1].text

        # The next minute window answers again.
        await db.execute("UPDATE rate_counters SET minute_start = minute_start - interval '1 minute'")
        await z.say("p1", QUESTION)
        assert ANSWER_PART in z.fake.to("p1")[-1].text and len(z.fake.to("p1")) == 7
        # Refused questions were not answered, so they were not stored either.
        stored = await db.fetchval("SELECT count(*) FROM messages m JOIN users u ON u.id = m.user_id "
                                   "WHERE u.external_id = 'p1' AND m.direction = 'in' AND m.text = $1", QUESTION)  # fmt: skip
        assert stored == 4


async def test_day_limit_emergencies_not_counted_notice_names_the_clinic(db: asyncpg.Pool) -> None:
    async with zalo_harness(
        db, rate_limit_per_minute=0, rate_limit_per_day=3, clinic_phone=CLINIC_PHONE
    ) as z:
        await z.choose_role("d1")  # 1
        await z.say("d1", QUESTION)  # 2
        await z.say("d1", EMERGENCY)  # not counted
        assert is_emergency_card(z.fake.to("d1")[-1].text)
        await z.say("d1", QUESTION)  # 3: still answered
        assert ANSWER_PART in z.fake.to("d1")[-1].text
        n = len(z.fake.to("d1"))

        await z.say("d1", QUESTION)  # 4: over the day's limit
        notice = z.fake.to("d1")[n:]
        assert [m.text for m in notice] == [
            DAY_NOTICE.format(limit=3, call=f"gọi phòng khám qua số {CLINIC_PHONE}")
        ]
        assert "ngày mai" in notice[0].text and CLINIC_PHONE in notice[0].text
        await z.say("d1", QUESTION)  # silent for the rest of the day
        await z.say("d1", "#sq:1:0")
        assert len(z.fake.to("d1")) == n + 1
        await z.say("d1", EMERGENCY)
        assert len(z.fake.to("d1")) == n + 2 and is_emergency_card(z.fake.to("d1")[-1].text)

        await db.execute("UPDATE rate_counters SET day = day - 1")  # the next day
        await z.say("d1", QUESTION)
        assert ANSWER_PART in z.fake.to("d1")[-1].text


async def test_clinic_staff_are_not_limited(db: asyncpg.Pool) -> None:
    async with zalo_harness(
        db, rate_limit_per_minute=2, rate_limit_per_day=2, clinician_ids="zalo:staff1"
    ) as z:
        for uid in ("staff1", "patient"):
            await z.choose_role(uid)
            for _ in range(4):
                await z.say(uid, QUESTION)
        assert sum(ANSWER_PART in m.text for m in z.fake.to("staff1")) == 4
        assert sum(ANSWER_PART in m.text for m in z.fake.to("patient")) == 1
        assert await db.fetchval("SELECT count(*) FROM rate_counters WHERE external_id = 'staff1'") == 0


async def test_a_burst_from_more_users_than_the_pool_has_connections_is_answered(
    db_url: str, db: asyncpg.Pool
) -> None:
    """24 patients write at once to a process whose pool has 6 connections. Unbounded, every connection ended
    up held by a chat lock whose handler waited for one more, and nobody was answered; bounded, everyone is."""
    pool = await create_pool(db_url, max_size=6)
    try:
        async with zalo_harness(pool) as z:
            patients = [f"b{i}" for i in range(24)]
            for uid in patients:
                await z.choose_role(uid)
            # Generous: the answers take well under a second in all; this only stops a deadlocked run.
            async with asyncio.timeout(120):
                responses = await asyncio.gather(*(z.post(z.event(uid, QUESTION)) for uid in patients))
            assert [r.status_code for r in responses] == [200] * len(patients)
            for uid in patients:
                assert ANSWER_PART in z.fake.to(uid)[-1].text, uid
    finally:
        try:
            await asyncio.wait_for(pool.close(), 10)
        except TimeoutError:
            pool.terminate()


async def test_an_emergency_is_answered_while_every_handling_slot_is_busy(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        await z.choose_role("e1")
        slots, taken = z.channel.slots, 0
        while not slots.locked():  # every slot busy, as under a burst
            await slots.acquire()
            taken += 1
        posted = asyncio.create_task(z.post(z.event("e1", EMERGENCY)))
        sent = await z.fake.wait_for_messages(2, "e1")  # the role's confirmation, then the card
        assert is_emergency_card(sent[-1].text)
        assert not posted.done()  # the rest (recording it) waits for a slot
        for _ in range(taken):
            slots.release()
        assert (await posted).status_code == 200
        assert len(z.fake.to("e1")) == 2  # the card once


async def test_cleanup_deletes_counters_whose_day_is_over(db: asyncpg.Pool, tmp_path: Path) -> None:
    for sender in ("yesterday", "today"):
        await rate_limits.count_message(db, "zalo", sender, 20, 200)
    await rate_limits.add_llm_calls(db, "zalo", "today", 3)
    await db.execute("UPDATE rate_counters SET day = day - 1 WHERE external_id = 'yesterday'")
    job = next(j for j in default_jobs() if j.name == "cleanup")
    result = await run_job(make_ctx(db, tmp_path), job)
    assert result.status == "ok" and result.counts["rate_counters"] == 1
    assert await db.fetchval("SELECT array_agg(external_id) FROM rate_counters") == ["today"]
    assert await rate_limits.llm_calls_today(db, "zalo", "today") == 3
