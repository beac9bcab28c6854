"""The staff handoff end to end on Telegram: ``medbot run`` (a subprocess, webhook) with ``STAFF_CHAT_ID``, the
fake Bot API playing the patient's private chat and the staff supergroup with topics, and the real database.

A patient asks for a person → a topic named by a pseudonymous label gets the summary; the patient's next
message is relayed there and not answered; a staff reply in the topic reaches the patient; an emergency gets
the 115 answer first and reaches the topic marked 🚨; messages of another chat (even in a thread with the
same number), bot commands and the bot's own posts are not relayed; /xong closes and the bot answers again.
The buttons: the patient's "Kết thúc hỗ trợ", and the staff's under the summary (a second tap is harmless).
"""

from __future__ import annotations

import asyncpg

from bot import handoff as ho
from db import handoffs, users
from testkit.bot_process import StartBot
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard, shows

STAFF = -1005550001
OTHER_GROUP = -1005550002  # another forum the bot is in: not the staff's
NURSE = 4242  # a member of the staff group (in no staff list: the group is what authorises)
PATIENT = 8201
CHEST_PAIN = "bố tôi đau ngực dữ dội lan ra cánh tay trái, vã mồ hôi lạnh"


async def test_handoff_round_trip(db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot) -> None:
    await add_kb(db, DENTAL)
    fake.add_forum(STAFF)
    fake.add_forum(OTHER_GROUP, title="Nhóm khác")
    await start_bot(env={"STAFF_CHAT_ID": str(STAFF), "CLINIC_HOURS": "8:00–17:30, thứ 2 đến thứ 7"})
    await onboard(fake, PATIENT)

    # A patient asks for a person: told a staff member answers here; a topic with the summary.
    n = len(fake.messages[PATIENT])
    await fake.send_text(PATIENT, "cho tôi gặp bác sĩ được không")
    told = (await fake.wait_for_messages(PATIENT, n + 1))[n]
    assert "Nhân viên sẽ trả lời bạn ngay tại đây" in told.plain and "8:00–17:30" in told.plain
    assert told.button("hoe")["text"] == ho.END_BUTTON
    patient = await users.get(db, "telegram", str(PATIENT))
    assert patient is not None
    [(thread, name)] = fake.forums[STAFF]["topics"].items()
    assert name == f"BN-{patient.id:05d} · Nha khoa" and str(PATIENT) not in name and "Lan" not in name
    [summary] = fake.topic_messages(STAFF, thread)
    assert (
        "cho tôi gặp bác sĩ được không" in summary.plain
        and "Lý do: bệnh nhân muốn gặp nhân viên" in summary.plain
    )

    # The patient's next message goes to the topic; the bot does not answer it.
    n = len(fake.messages[PATIENT])
    await fake.wait_delivered(await fake.send_text(PATIENT, "Răng bị ê buốt khi uống nước lạnh thì làm sao?"))
    assert fake.topic_messages(STAFF, thread)[-1].plain == (
        f"👤 BN-{patient.id:05d}: Răng bị ê buốt khi uống nước lạnh thì làm sao?"
    )

    # Not relayed: a member of another group in a thread with the same number, a bot command in the topic.
    await fake.wait_delivered(
        await fake.send_group_text(OTHER_GROUP, NURSE, "tin nhóm khác", thread_id=thread)
    )
    await fake.wait_delivered(await fake.send_group_text(STAFF, NURSE, "/help", thread_id=thread))
    # A staff reply in the topic reaches the patient (through the outbox); nothing else came before it.
    await fake.send_group_text(STAFF, NURSE, "Chào bạn, bạn đến khám lúc 15 giờ nhé.", thread_id=thread)
    staff_reply = (await fake.wait_for_messages(PATIENT, n + 1))[n]
    assert staff_reply.plain == "👩‍⚕️ Nhân viên phòng khám: Chào bạn, bạn đến khám lúc 15 giờ nhé."
    assert len(fake.messages[PATIENT]) == n + 1
    relayed_in = [m.plain for m in fake.topic_messages(STAFF, thread)]
    assert not any("tin nhóm khác" in t or "/help" in t for t in relayed_in)  # nor echoed to the staff

    # An emergency during the handoff: the 115 answer first, and the staff see it marked.
    n = len(fake.messages[PATIENT])
    update = await fake.send_text(PATIENT, CHEST_PAIN)
    card = (await fake.wait_for_messages(PATIENT, n + 1))[n]
    await fake.wait_delivered(update)
    assert "115" in card.plain and "CẤP CỨU" in card.plain
    marked = fake.topic_messages(STAFF, thread)[-1].plain
    assert marked.startswith("🚨 KHẨN CẤP") and CHEST_PAIN in marked
    assert len(fake.messages[PATIENT]) == n + 1  # the card only: no answer from the bot

    # /xong in the topic closes it; the patient is told, and the bot answers the next question again.
    n = len(fake.messages[PATIENT])
    await fake.send_group_text(STAFF, NURSE, "/xong", thread_id=thread)
    closed = (await fake.wait_for_messages(PATIENT, n + 1))[n]
    assert closed.plain == ho.CLOSED_BY_STAFF
    await fake.wait_for(
        lambda: fake.topic_messages(STAFF, thread)[-1].plain.startswith("✅"), what="closed note"
    )
    row = (await handoffs.for_user(db, patient.id))[0]
    assert row.status == "closed" and row.staff_answered_at is not None
    assert row.closed_by == handoffs.by_telegram(NURSE, "Hoa")  # who closed it: the member's id and name
    who = await db.fetchval("SELECT staff_by FROM messages WHERE input_type = 'staff_reply' AND user_id = $1",
                            patient.id)  # fmt: skip
    assert who == handoffs.by_telegram(NURSE, "Hoa")  # and who answered
    topic_count = len(fake.topic_messages(STAFF, thread))
    await fake.send_text(PATIENT, "Răng bị ê buốt khi uống nước lạnh thì làm sao?")
    answer = (await fake.wait_for_messages(PATIENT, n + 2))[n + 1]
    assert shows(answer.plain, "D001")
    assert len(fake.topic_messages(STAFF, thread)) == topic_count  # no longer relayed

    # The patient ends a new handoff with their button; the staff see it in the topic.
    n = len(fake.messages[PATIENT])
    await fake.send_text(PATIENT, "tôi muốn nói chuyện với nhân viên")
    told = (await fake.wait_for_messages(PATIENT, n + 1))[n]
    second = next(t for t in fake.forums[STAFF]["topics"] if t != thread)
    await fake.wait_callback_answered(
        await fake.tap(PATIENT, told.message_id, told.button("hoe")["callback_data"])
    )
    assert (await fake.wait_for_messages(PATIENT, n + 2))[n + 1].plain == ho.CLOSED_BY_PATIENT
    assert fake.topic_messages(STAFF, second)[-1].plain == ho.TOPIC_CLOSED_BY_PATIENT

    # A third one, closed by a staff member's button under the summary; tapping it again changes nothing.
    n = len(fake.messages[PATIENT])
    await fake.send_text(PATIENT, "cho tôi gặp bác sĩ")
    await fake.wait_for_messages(PATIENT, n + 1)
    third = next(t for t in fake.forums[STAFF]["topics"] if t not in (thread, second))
    summary = fake.topic_messages(STAFF, third)[0]
    close = summary.button("hoc")["callback_data"]
    await fake.wait_callback_answered(await fake.tap(STAFF, summary.message_id, close, from_id=NURSE))
    assert (await fake.wait_for_messages(PATIENT, n + 2))[n + 1].plain == ho.CLOSED_BY_STAFF
    again = await fake.wait_callback_answered(await fake.tap(STAFF, summary.message_id, close, from_id=NURSE))
    assert again.get("text") == ho.TOPIC_ALREADY_CLOSED
    assert [h.status for h in await handoffs.for_user(db, patient.id)] == ["closed"] * 3
