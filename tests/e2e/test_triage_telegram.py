"""Triage first on Telegram, end to end: an emergency gets the 115 answer before anything else, in every chat
state (no role yet, right after /xoadulieu, inside /verify, replying to an admin prompt), and when the
database is gone and the LLM hangs."""

from __future__ import annotations

import asyncpg

from db import users
from testkit.bot_process import SECOND_ADMIN_ID, StartBot
from testkit.fakes.openai_server import FakeOpenAI, Reply
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard
from tests.netcut import PgRelay

CHEST_PAIN = "bố tôi đau ngực dữ dội lan ra cánh tay trái, vã mồ hôi lạnh"
COLLAPSE = "cuu voi me toi nga xuong bat tinh khong tho nua"
KB_CSV = (
    "code,question,answer,topic\nK001,Bao lâu nên thay bàn chải?,Khoảng 3 tháng một lần.,Vệ sinh\n".encode()
)


def is_emergency_card(text: str) -> bool:
    return "115" in text and "CẤP CỨU" in text and "Trong lúc chờ cấp cứu" in text


async def test_emergency_before_picking_a_role(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    chat = 5101
    update = await fake.send_text(chat, COLLAPSE)  # no /start, no role
    first, second = await fake.wait_for_messages(chat, 2)
    await fake.wait_delivered(update)  # the exchange is recorded after the answer: let it finish
    assert is_emergency_card(first.plain), first.plain
    assert "ép tim" in first.plain  # not breathing: compressions, not only the recovery position
    assert "chuyên khoa" in second.plain and second.buttons  # then the role picker, as before
    stored = await db.fetchval(
        "SELECT count(*) FROM messages m JOIN users u ON u.id = m.user_id "
        "WHERE u.external_id = $1 AND m.red_flag AND m.direction = 'out'",
        str(chat),
    )
    assert stored == 1  # recorded like any answer


async def test_emergency_right_after_erasing_data(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    chat = 5102
    await onboard(fake, chat)
    n = len(fake.messages[chat])
    await fake.send_text(chat, "/xoadulieu")
    confirm = (await fake.wait_for_messages(chat, n + 1))[n]
    cq = await fake.tap(chat, confirm.message_id, "erase:1")
    await fake.wait_callback_answered(cq)
    await fake.wait_for(lambda: "Đã xoá" in fake.messages[chat][-1].plain, what="erase confirmed")
    assert await users.get(db, "telegram", str(chat)) is None
    n = len(fake.messages[chat])
    update = await fake.send_text(chat, CHEST_PAIN)
    card = (await fake.wait_for_messages(chat, n + 1))[n]
    assert is_emergency_card(card.plain) and "aspirin" in card.plain, card.plain
    await fake.wait_delivered(update)


async def test_emergency_inside_verify_and_admin_prompts(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    """The clinician's /verify waits for an article and an admin's import waits for "Nhập": an emergency typed
    there is still answered first. (The shared bot's second admin: ADMIN_ID's chat is counted by other tests.)"""
    fake = shared_fake
    chat = SECOND_ADMIN_ID
    n = len(fake.messages[chat]) + 1
    await fake.wait_delivered(await fake.send_text(chat, "/verify"))
    await fake.wait_for_messages(chat, n)
    update = await fake.send_text(chat, "giúp với, con tôi đang co giật, gọi không tỉnh")
    after = await fake.wait_for_messages(chat, n + 1)
    await fake.wait_delivered(update)
    assert is_emergency_card(after[n].plain), after[n].plain
    assert "không nhét" in after[n].plain.lower() or "không cho" in after[n].plain.lower()

    # An admin with a dry-run import awaiting "Nhập" types an emergency: answered first, the import still waits.
    await fake.wait_delivered(await fake.send_document(chat, KB_CSV, "kb.csv"))
    report = await fake.wait_for(
        lambda: next((m for m in fake.messages[chat] if m.buttons and "dòng hợp lệ" in m.plain), None),
        what="dry-run report",
    )
    m = len(fake.messages[chat])
    update = await fake.send_text(chat, "vợ tôi vừa uống cả lọ thuốc ngủ, giờ lơ mơ")
    card = (await fake.wait_for_messages(chat, m + 1))[m]
    await fake.wait_delivered(update)
    assert "115" in card.plain, card.plain
    assert report.buttons  # the pending import is untouched
    assert (
        await db.fetchval(
            "SELECT count(*) FROM chat_states, jsonb_object_keys(data) AS k WHERE k LIKE 'import:%'"
        )
        == 1
    )


async def test_emergency_answered_with_the_database_down_and_the_llm_hanging(
    db: asyncpg.Pool, db_url: str, fake: FakeTelegram, start_bot: StartBot
) -> None:
    llm = FakeOpenAI()
    await llm.start()
    llm.default = Reply(content="{}", delay=60)  # every LLM call hangs
    await add_kb(db, DENTAL)
    try:
        async with PgRelay(db_url) as relay:
            await start_bot(
                env={"DATABASE_URL": relay.url, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": llm.base_url,
                     "CLINIC_PHONE": "028 3999 1234"}
            )  # fmt: skip
            chat = 5104
            await onboard(fake, chat)
            # LLM hanging, database up: the emergency does not wait for the model.
            n = len(fake.messages[chat])
            await fake.send_text(chat, "con toi bi hoc keo, tho khong duoc, mat tim tai")
            card = (await fake.wait_for_messages(chat, n + 1, timeout=10))[n]
            assert is_emergency_card(card.plain), card.plain
            assert "vỗ lưng" in card.plain.lower() and "028 3999 1234" in card.plain

            relay.cut()  # PostgreSQL is gone for this bot
            n = len(fake.messages[chat])
            await fake.send_text(chat, CHEST_PAIN)
            card = (await fake.wait_for_messages(chat, n + 1, timeout=10))[n]
            assert is_emergency_card(card.plain), card.plain
            assert "aspirin" in card.plain
    finally:
        await llm.stop()
