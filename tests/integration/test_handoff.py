"""The staff handoff: its repository functions (``db.handoffs``) and its policy in ``ChatService`` (the one
every channel goes through), with the real Telegram desk (``bot.telegram.staff``) talking to the fake Bot API
(a supergroup with topics) and the real database; and a Zalo patient through the Zalo webhook (fake Zalo
OpenAPI), whose staff replies go out through the Zalo outbox sender. A channel the desk cannot deliver to gets
no handoff, and is told how to reach the clinic instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import pytest

from bot import handoff as ho
from bot.runtime import Runtime
from bot.service import ChatService
from bot.telegram.session import build_bot
from bot.telegram.staff import OutboxKicker, TelegramDesk, check_staff_chat
from bot.wiring import build_service
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from bot.zalo.outbox import ZaloOutboxKicker
from db import console_conversations, conversations, feedback, handoffs, outbox, stats, users
from db.settings import SettingsError, load_settings
from testkit.fakes.telegram_server import FakeTelegram
from tests.console_support import CLINICIAN, add_staff, console_server
from tests.integration.test_console import log_in
from tests.integration.worker_helpers import make_ctx
from tests.integration.zalo_support import zalo_harness

STAFF = -1001234500001
TOKEN = "123:ABC"
CHEST_PAIN = "bố tôi đau ngực dữ dội lan ra cánh tay trái, vã mồ hôi lạnh"


async def test_repository_one_open_handoff_per_patient_closed_once(db: asyncpg.Pool) -> None:
    lan = await users.get_or_create(db, "telegram", "501")
    minh = await users.get_or_create(db, "telegram", "502")
    first = await handoffs.open_handoff(db, lan.id, "telegram", STAFF, "human")
    assert first is not None and first.status == "open" and first.topic_id is None
    assert first.external_id == "501"
    assert await handoffs.open_handoff(db, lan.id, "telegram", STAFF, "complaint") is None  # one open
    await handoffs.set_topic(db, first.id, 77)
    assert (await handoffs.open_for_topic(db, STAFF, 77)).id == first.id  # type: ignore[union-attr]
    assert await handoffs.open_for_topic(db, -100999, 77) is None  # another chat, same thread number
    assert (await handoffs.open_for_user(db, lan.id)).topic_id == 77  # type: ignore[union-attr]
    await handoffs.staff_answered(db, first.id)
    closed = await handoffs.close(db, first.id, "staff:42")
    assert closed is not None and closed.status == "closed" and closed.closed_by == "staff:42"
    assert closed.closed_at is not None and closed.staff_answered_at is not None
    assert await handoffs.close(db, first.id, "patient") is None  # twice: nothing happens
    assert await handoffs.open_for_topic(db, STAFF, 77) is None
    again = await handoffs.open_handoff(db, lan.id, "telegram", STAFF, "unanswered")
    assert again is not None  # closed ones do not block a new one
    other = await handoffs.open_handoff(db, minh.id, "telegram", STAFF, "human")
    assert other is not None
    with pytest.raises(ValueError):
        await handoffs.open_handoff(db, minh.id, "telegram", STAFF, "bored")
    await users.erase(db, lan.id)  # /xoadulieu: their handoffs go with them
    assert await handoffs.for_user(db, lan.id) == []
    assert await db.fetchval("SELECT count(*) FROM handoffs") == 1


async def test_worker_reminds_a_topic_nobody_answered_once(db: asyncpg.Pool, tmp_path: Path) -> None:
    job = next(j for j in default_jobs() if j.name == "handoff_reminder")
    assert (await run_job(make_ctx(db, tmp_path), job)).status == "skipped"  # no STAFF_CHAT_ID
    lan = await users.get_or_create(db, "telegram", "601")
    minh = await users.get_or_create(db, "telegram", "602")
    waiting = await handoffs.open_handoff(db, lan.id, "telegram", STAFF, "human")
    answered = await handoffs.open_handoff(db, minh.id, "telegram", STAFF, "complaint")
    assert waiting is not None and answered is not None
    await handoffs.set_topic(db, waiting.id, 11)
    await handoffs.set_topic(db, answered.id, 12)
    await handoffs.staff_answered(db, answered.id)
    await db.execute("UPDATE handoffs SET opened_at = now() - interval '45 minutes'")  # opened 45 minutes ago
    ctx = make_ctx(db, tmp_path, telegram_bot_token=TOKEN, staff_chat_id=STAFF, handoff_remind_minutes=30)
    first = await run_job(ctx, job)
    assert first.status == "ok" and first.counts["reminded"] == 1
    [queued] = await outbox.pending(db)
    assert queued["chat_id"] == str(STAFF) and queued["payload"]["message_thread_id"] == 11
    assert f"BN-{lan.id:05d} đang chờ nhân viên trả lời từ 45 phút" in queued["payload"]["text"]
    assert (await run_job(ctx, job)).counts["reminded"] == 0  # once only


@dataclass
class Desk:
    service: ChatService
    fake: FakeTelegram

    def topics(self) -> dict[int, str]:
        return dict(self.fake.forums[STAFF]["topics"])

    def topic(self, thread: int) -> list[str]:
        return [m.plain for m in self.fake.topic_messages(STAFF, thread)]


@pytest.fixture
async def desk(db: asyncpg.Pool) -> AsyncIterator[Desk]:
    """A ChatService as ``medbot run`` builds it with ``STAFF_CHAT_ID``, its desk on the fake Bot API."""
    async with FakeTelegram(TOKEN) as fake:
        fake.add_forum(STAFF)
        settings = load_settings(
            openai_api_key=None,
            telegram_bot_token=TOKEN,
            telegram_api_base=fake.base_url,
            staff_chat_id=STAFF,
            clinic_name="Nha khoa Hoà Bình",
            clinic_phone="0243 123 456",
            clinic_hours="8:00–17:30, thứ 2 đến thứ 7",
        )
        service = await build_service(Runtime(settings=settings, url="", pool=db))
        bot = build_bot(settings, db)
        await check_staff_chat(bot, STAFF)
        kicker = OutboxKicker(bot, db)
        names = {"patient_dental": "Nha khoa", "patient_diabetes": "Tiểu đường"}
        service.handoff = ho.HandoffDesk(TelegramDesk(bot, db, STAFF, kicker), names, {"telegram": kicker})
        yield Desk(service, fake)
        await kicker.stop()
        await bot.session.close()


async def patient(service: ChatService, chat: int) -> users.User:
    user = await service.user("telegram", chat)
    assert await service.set_role(user, "patient_dental")
    return user


async def test_asking_for_a_person_opens_a_topic_relays_both_ways_and_closes(
    db: asyncpg.Pool, db_url: str, desk: Desk
) -> None:
    service, fake = desk.service, desk.fake
    lan = await patient(service, 8101)
    first = await service.respond(lan, "răng khôn mọc lệch có cần nhổ không", channel="telegram")
    assert not first.handoff_opened and first.text
    opened = await service.respond(lan, "cho tôi gặp bác sĩ", channel="telegram")
    assert opened.handoff_opened and not opened.suggestions
    assert "nhân viên Nha khoa Hoà Bình" in opened.text and "trả lời bạn ngay tại đây" in opened.text
    assert "8:00–17:30" in opened.text and "115" in opened.text
    [(thread, name)] = desk.topics().items()
    assert name == f"BN-{lan.id:05d} · Nha khoa"
    assert "8101" not in name
    [summary] = fake.topic_messages(STAFF, thread)
    assert "răng khôn mọc lệch có cần nhổ không" in summary.plain  # the earlier turn
    assert "cho tôi gặp bác sĩ" in summary.plain and "muốn gặp nhân viên" in summary.plain
    assert summary.button("hoc:")["text"] == ho.END_BUTTON
    row = await handoffs.open_for_user(db, lan.id)
    assert row is not None and row.topic_id == thread and row.reason == "human"

    # While open: relayed to the topic, not answered, and asking again opens nothing more.
    relayed = await service.respond(lan, "em bị đau từ hôm qua", channel="telegram")
    assert relayed.relayed and relayed.text == ""
    again = await service.respond(lan, "cho tôi gặp bác sĩ", channel="telegram")
    assert again.relayed and len(desk.topics()) == 1
    assert desk.topic(thread)[-2:] == [f"👤 BN-{lan.id:05d}: em bị đau từ hôm qua",
                                       f"👤 BN-{lan.id:05d}: cho tôi gặp bác sĩ"]  # fmt: skip
    assert await service.relay_attachment(lan, "photo")
    assert "đã gửi một ảnh" in desk.topic(thread)[-1]
    [listed] = await console_conversations.recent(db, handed_off=True)
    assert listed.handoff == "open"

    # Staff answer in the topic: the patient gets it through the outbox.
    assert await service.relay_to_patient(STAFF, thread, "Chào bạn, bạn đau ở răng nào?")
    [reply] = await fake.wait_for_messages(8101, 1)
    assert reply.plain == "👩‍⚕️ Nhân viên phòng khám: Chào bạn, bạn đau ở răng nào?"
    assert not await service.relay_to_patient(-100999, thread, "tin ở nhóm khác")  # not the staff group
    assert not await service.relay_to_patient(STAFF, thread + 1000, "chủ đề khác")  # no handoff there

    assert await service.close_handoff(STAFF, topic_id=thread, by="staff:42") is True
    assert await service.close_handoff(STAFF, topic_id=thread, by="staff:42") is None  # no open one there
    assert await service.close_handoff(STAFF, handoff_id=row.id, by="staff:43") is False  # the button again
    notice = (await fake.wait_for_messages(8101, 2))[1]
    assert notice.plain == ho.CLOSED_BY_STAFF
    closed = await handoffs.get(db, row.id)
    assert closed is not None and closed.closed_by == "staff:42" and closed.staff_answered_at is not None

    # The bot answers again.
    after = await service.respond(lan, "niềng răng mất bao lâu", channel="telegram")
    assert not after.relayed and after.text and not after.handoff_opened

    # The handoff's messages are the conversation's, in order, each told apart from the bot's exchanges.
    stored = await db.fetch(
        "SELECT id, conversation_id, direction, input_type, text FROM messages WHERE user_id = $1 ORDER BY id",
        lan.id,
    )
    assert len({r["conversation_id"] for r in stored}) == 1
    handoff_part = [(r["direction"], r["input_type"], r["text"]) for r in stored[4:8]]
    assert handoff_part[:2] == [
        ("in", "to_staff", "em bị đau từ hôm qua"),
        ("in", "to_staff", "cho tôi gặp bác sĩ"),
    ]
    assert handoff_part[2][:2] == ("in", "to_staff") and "đã gửi một ảnh" in handoff_part[2][2]
    assert handoff_part[3] == ("out", "staff_reply", "Chào bạn, bạn đau ở răng nào?")
    assert not await feedback.record(db, lan.id, stored[7]["id"], -1)  # a forged 👎 on staff's reply: refused
    assert await feedback.record(db, lan.id, stored[3]["id"], 1)  # the bot's own answers are rated as before
    # Not the bot's memory, nor its statistics: three questions, no more.
    remembered, _, _ = await conversations.memory(db, stored[0]["conversation_id"], 20)
    assert [m["text"] for m in remembered if m["direction"] == "in"] == [
        "răng khôn mọc lệch có cần nhổ không", "cho tôi gặp bác sĩ", "niềng răng mất bao lâu"
    ]  # fmt: skip
    window = await stats.window(db, 1)
    assert (window.users, window.messages) == (1, 3)
    assert "em bị đau từ hôm qua" not in {u.text for u in await stats.unanswered(db, 0.99)}

    # The console shows the handoff, the relayed messages and the staff reply as the staff's.
    await add_staff(db)
    async with (
        console_server(db, db_url) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        await log_in(http, *CLINICIAN)
        listing = (await http.get("/console/conversations?handoff=1")).text
        conv = stored[0]["conversation_id"]
        assert f'/console/conversations/{conv}"' in listing and "Đã chuyển nhân viên" in listing
        page = (await http.get(f"/console/conversations/{conv}")).text
    assert "lý do: Bệnh nhân muốn gặp nhân viên" in page and "bởi nhân viên (Telegram 42)" in page
    staff_item = page.split('class="message staff"')[1].split("</li>")[0]
    assert "Nhân viên phòng khám" in staff_item and "Chào bạn, bạn đau ở răng nào?" in staff_item
    assert page.count('class="message staff"') == 1 and page.count("Chuyển cho nhân viên</span>") == 3


async def test_an_emergency_during_a_handoff_is_relayed_marked_and_recorded(
    db: asyncpg.Pool, desk: Desk
) -> None:
    service = desk.service
    lan = await patient(service, 8102)
    assert (
        await service.respond(lan, "tôi muốn nói chuyện với nhân viên", channel="telegram")
    ).handoff_opened
    [thread] = desk.topics()
    delivered: list[str] = []

    async def handle(emergency: object) -> None:
        reply = await service.respond(lan, CHEST_PAIN, channel="telegram", emergency=emergency)  # type: ignore[arg-type]
        assert reply.relayed and reply.delivered

    async def deliver(text: str) -> None:
        delivered.append(text)
        assert desk.topic(thread)[-1].startswith("🆕")  # the 115 answer before the relay

    await service.guard("telegram", lan.external_id, CHEST_PAIN, deliver, handle)
    assert len(delivered) == 1 and "115" in delivered[0]
    last = desk.topic(thread)[-1]
    assert last.startswith("🚨 KHẨN CẤP") and CHEST_PAIN in last
    stored = await db.fetchval(
        "SELECT count(*) FROM messages WHERE user_id = $1 AND red_flag AND direction = 'out'", lan.id
    )
    assert stored == 1


async def test_the_patient_ends_it_and_erasing_deletes_the_topic(db: asyncpg.Pool, desk: Desk) -> None:
    service = desk.service
    lan = await patient(service, 8103)
    assert await service.end_handoff(lan) == ho.NOTHING_OPEN
    assert (
        await service.respond(lan, "tôi chờ hai tiếng rồi mà chưa ai khám", channel="telegram")
    ).handoff_opened
    [thread] = desk.topics()
    assert (await handoffs.open_for_user(db, lan.id)).reason == "complaint"  # type: ignore[union-attr]
    assert await service.end_handoff(lan) == ho.CLOSED_BY_PATIENT
    assert desk.topic(thread)[-1] == ho.TOPIC_CLOSED_BY_PATIENT
    assert await service.end_handoff(lan) == ho.NOTHING_OPEN  # twice: harmless
    assert await service.relay_to_patient(STAFF, thread, "tin cũ") is False  # closed: nothing stored
    await service.erase(lan)
    assert desk.topics() == {} and desk.fake.topic_messages(STAFF, thread) == []
    assert await db.fetchval("SELECT count(*) FROM handoffs") == 0


async def test_two_unanswered_questions_offer_a_person(db: asyncpg.Pool, desk: Desk) -> None:
    service = desk.service
    lan = await patient(service, 8104)
    one = await service.respond(lan, "uống thuốc kháng sinh bị nổi mẩn đỏ thì sao", channel="telegram")
    assert one.input_type == "medical_question" and not one.citations  # the empty KB has no answer
    assert ho.ASK_PERSON not in one.suggestions
    two = await service.respond(lan, "vết thương sau nhổ răng bị sưng mủ phải làm gì", channel="telegram")
    assert two.suggestions[0] == ho.ASK_PERSON and ho.ASK_PERSON in two.text
    assert await handoffs.open_for_user(db, lan.id) is None  # offered, not started
    tapped = await service.suggestion_text(lan, two.suggestion_set_id or 0, 0)
    assert tapped == ho.ASK_PERSON
    opened = await service.respond(lan, tapped, channel="telegram")  # a tap is handled like typing it
    assert opened.handoff_opened


async def test_no_topic_no_promise_and_zalo_gets_the_clinic_phone(db: asyncpg.Pool, desk: Desk) -> None:
    service, fake = desk.service, desk.fake
    lan = await patient(service, 8105)
    fake.inject_error("createForumTopic", 400, description="Bad Request: not enough rights to create a topic")
    reply = await service.respond(lan, "cho tôi gặp bác sĩ", channel="telegram")
    assert not reply.handoff_opened and "0243 123 456" in reply.text and "đã chuyển" not in reply.text
    assert await handoffs.for_user(db, lan.id) == []

    # An opening that died between its row and its topic (a crash): the next message is answered as usual.
    await handoffs.open_handoff(db, lan.id, "telegram", STAFF, "human")
    reply = await service.respond(lan, "niềng răng mất bao lâu", channel="telegram")
    assert not reply.relayed and reply.text
    assert await handoffs.for_user(db, lan.id) == []

    # A process whose desk has no Zalo sender (Telegram polling, Zalo served elsewhere): no promise either.
    zalo = await service.user("zalo", "z-8106")
    assert await service.set_role(zalo, "patient_dental")
    reply = await service.respond(zalo, "cho tôi gặp bác sĩ", channel="zalo")
    assert not reply.handoff_opened and "0243 123 456" in reply.text
    assert await handoffs.for_user(db, zalo.id) == []


async def test_a_zalo_patient_is_handed_off_and_staff_replies_go_out_through_zalo(db: asyncpg.Pool) -> None:
    async with FakeTelegram(TOKEN) as fake:
        fake.add_forum(STAFF)
        telegram = {"telegram_bot_token": TOKEN, "telegram_api_base": fake.base_url, "staff_chat_id": STAFF}
        async with zalo_harness(db, seed=False, **telegram) as z:
            bot = build_bot(z.settings, db)
            zalo_kick = ZaloOutboxKicker(z.channel.client, db)
            desk = TelegramDesk(bot, db, STAFF, OutboxKicker(bot, db))
            z.service.handoff = ho.HandoffDesk(desk, {"patient_dental": "Nha khoa"}, {"zalo": zalo_kick})
            try:
                await z.choose_role("zp1")
                await z.say("zp1", "cho tôi gặp nhân viên tư vấn")
                told = z.fake.to("zp1")[-1]
                assert "Nhân viên sẽ trả lời bạn ngay tại đây" in told.text
                assert [b["payload"] for b in told.buttons] == ["#ketthuc"]
                [(thread, name)] = fake.forums[STAFF]["topics"].items()
                assert name.endswith("· Nha khoa") and "zp1" not in name
                assert "Kênh: Zalo" in fake.topic_messages(STAFF, thread)[0].plain

                n = len(z.fake.to("zp1"))
                await z.say("zp1", "răng hàm dưới đau nhức")
                assert fake.topic_messages(STAFF, thread)[-1].plain.endswith(": răng hàm dưới đau nhức")
                await z.post(z.event("zp1", name="user_send_image"))
                assert "đã gửi một ảnh" in fake.topic_messages(STAFF, thread)[-1].plain
                assert len(z.fake.to("zp1")) == n  # not answered by the bot

                assert await z.service.relay_to_patient(STAFF, thread, "Bạn ghé phòng khám chiều nay nhé.")
                got = await z.fake.wait_for_messages(n + 1, "zp1")
                assert got[n].text == "👩‍⚕️ Nhân viên phòng khám: Bạn ghé phòng khám chiều nay nhé."

                await z.say("zp1", "#ketthuc")
                assert z.fake.to("zp1")[-1].text == ho.CLOSED_BY_PATIENT
                assert fake.topic_messages(STAFF, thread)[-1].plain == ho.TOPIC_CLOSED_BY_PATIENT
            finally:
                await zalo_kick.stop()
                await bot.session.close()


async def test_start_up_refuses_a_group_without_topics_or_rights(db: asyncpg.Pool) -> None:
    async with FakeTelegram(TOKEN) as fake:
        fake.add_forum(-1001, is_forum=False)
        fake.add_forum(-1002, bot_admin=False)
        bot = build_bot(load_settings(telegram_bot_token=TOKEN, telegram_api_base=fake.base_url), db)
        try:
            with pytest.raises(SettingsError, match=r"STAFF_CHAT_ID: .*topics turned on"):
                await check_staff_chat(bot, -1001)
            with pytest.raises(SettingsError, match="STAFF_CHAT_ID: make the bot an administrator"):
                await check_staff_chat(bot, -1002)
            with pytest.raises(SettingsError, match="STAFF_CHAT_ID: the bot cannot open chat"):
                await check_staff_chat(bot, -1003)
        finally:
            await bot.session.close()
    with pytest.raises(SettingsError, match="STAFF_CHAT_ID"):
        load_settings(staff_chat_id=12345)  # a user id, not a group
