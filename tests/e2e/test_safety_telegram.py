"""Telegram hardening end to end (the bot as a subprocess on the fake Bot API, real PostgreSQL): forged or
garbled callback payloads are answered and logged quietly, ``#Q`` answers are taken only as replies to the
bot's own prompts, and admin commands show no data outside a private chat."""

from __future__ import annotations

import re

import asyncpg

from bot.telegram import texts
from db import users
from testkit.bot_process import ADMIN_ID
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard, shared_bot

ERROR_LINE = re.compile(r"^\S+ (ERROR|CRITICAL)\b|^Traceback", re.MULTILINE)
FORGED = [
    "sq:abc:0",  # not a number
    "fb:99999999999999999999:1",  # beyond bigint: used to reach SQL and fail there
    "fb:1:5",  # a rating no button carries
    "sq:1",  # a part missing
    "sq:-4:0",
    "erase:maybe",
    "nope:1",  # unknown prefix
    "vf:a:99999999999999999999:0",
    "imp:ok:abc",
    "ua:99999999999999999999",
]
GROUP = -1001234


async def _make_admin(db: asyncpg.Pool, chat_id: int) -> None:
    user = await users.get_or_create(db, "telegram", str(chat_id))
    await users.set_admin(db, user.id, True)


async def test_forged_callbacks_are_answered_without_errors(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake, log_path = shared_fake, shared_bot().log_path  # the shared bot: its log from here on is this test's
    start = log_path.stat().st_size
    patient = 5191  # a chat of its own (the shared bot serves other tests too)
    await onboard(fake, patient)
    sent = {chat: len(fake.messages[chat]) for chat in (patient, ADMIN_ID)}
    rows = await db.fetchval("SELECT count(*) FROM feedback") + await db.fetchval(
        "SELECT count(*) FROM messages"
    )
    for chat in (patient, ADMIN_ID):  # a patient and an admin (whose admin buttons reach their handlers)
        for data in FORGED:
            cq = await fake.tap_forged(chat, data)
            answer = await fake.wait_callback_answered(cq, timeout=10)
            assert answer.get("text") == texts.BUTTON_EXPIRED, (chat, data, answer)
    assert not fake.unanswered_callbacks  # no button left spinning
    assert {chat: len(fake.messages[chat]) for chat in sent} == sent  # nothing sent, nothing shown
    assert await db.fetchval("SELECT count(*) FROM feedback") + await db.fetchval(
        "SELECT count(*) FROM messages"
    ) == rows  # fmt: skip
    with log_path.open("rb") as f:
        f.seek(start)
        log = f.read().decode(errors="replace")
    assert not ERROR_LINE.search(log), log[-4000:]
    assert log.count("callback.unhandled") == 2 * len(FORGED)  # one quiet WARNING line per forged tap


async def test_q_answer_only_as_reply_to_the_bots_own_prompt(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    patient, attacker, admin = 5201, 5202, 5203
    # an admin flagged in the database (the shared bot's ADMIN_ID has its own tests)
    await _make_admin(db, admin)
    await onboard(fake, patient)
    await fake.send_text(patient, "Bị hôi miệng kéo dài phải làm gì?")  # nothing in the KB: unanswered
    await fake.wait_for_messages(patient, 2)
    victim = await db.fetchval("SELECT max(id) FROM messages WHERE direction = 'in'")
    code = f"TG{victim}"

    # A patient plants "#Q<id>" in a question and rates the answer 👎: it shows up in the admin's
    # /unanswered listing.
    await onboard(fake, attacker)
    await fake.send_text(attacker, f"#Q{victim} Niềng răng mất bao lâu thì xong?")
    answered = (await fake.wait_for_messages(attacker, 2))[1]
    down = answered.button("fb:")["callback_data"].rsplit(":", 1)[0] + ":-1"
    await fake.wait_callback_answered(await fake.tap(attacker, answered.message_id, down))
    await onboard(fake, admin)
    await fake.send_text(admin, "/unanswered")
    listing = await fake.wait_for(
        lambda: next((m for m in fake.messages[admin] if "cần xem lại" in m.plain), None), what="unanswered"
    )
    assert f"#Q{victim}" in listing.plain

    # Replying to the listing (a bot message, but not a prompt) does not add a KB entry.
    n = len(fake.messages[admin])
    await fake.send_text(admin, "Cần hỏi lại bác sĩ Lan về ca này.", reply_to=listing.message_id)
    reply = (await fake.wait_for_messages(admin, n + 1))[n]
    assert "Đã thêm vào KB" not in reply.plain
    # Nor does replying to a message of one's own that says "#Q<id>".
    n = len(fake.messages[admin])
    await fake.send_text(admin, f"#Q{victim}")
    await fake.wait_for_messages(admin, n + 1)
    typed = fake.user_messages[admin][-1]
    update = fake.make_message_update(admin, "Súc miệng nước muối là khỏi.", reply_to_message=typed)
    await fake.deliver(update)
    assert await fake.wait_delivered(update["update_id"]) == 200
    assert not any("Đã thêm vào KB" in m.plain for m in fake.messages[admin][n:])
    assert await db.fetchval("SELECT count(*) FROM kb_entries WHERE code = $1", code) == 0

    # The bot's own prompt still works.
    cq = await fake.tap(admin, listing.message_id, f"ua:{victim}")
    await fake.wait_callback_answered(cq)
    prompt = await fake.wait_for(
        lambda: next((m for m in fake.messages[admin] if (m.reply_markup or {}).get("force_reply")), None),
        what="prompt",
    )
    await fake.send_text(
        admin,
        "Hôi miệng kéo dài phải làm sao? | Hôi miệng kéo dài nên khám nha sĩ.",
        reply_to=prompt.message_id,
    )
    await fake.wait_for(lambda: "Đã thêm vào KB" in fake.messages[admin][-1].plain, what="KB entry added")
    assert await db.fetchval("SELECT answer FROM kb_entries WHERE code = $1", code) == (
        "Hôi miệng kéo dài nên khám nha sĩ."
    )


async def test_admin_commands_show_no_data_in_a_group(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    patient = 5301
    await onboard(fake, patient)
    secret = "Bị hôi miệng kéo dài phải làm gì?"
    await fake.send_text(patient, secret)
    await fake.wait_for_messages(patient, 2)
    asked = await db.fetchval("SELECT max(id) FROM messages WHERE direction = 'in'")
    admin = 5302
    await _make_admin(db, admin)
    group = {"id": GROUP, "type": "supergroup", "title": "Phòng khám"}
    for command in ("/unanswered", "/stats", "/unanswered@medbot_vn_bot"):
        await fake.deliver(fake.make_message_update(admin, command, chat=group))
    cq = await fake.tap_forged(GROUP, f"ua:{asked}", from_id=admin, chat_type="supergroup")
    answer = await fake.wait_callback_answered(cq)
    assert answer.get("text") == texts.ADMIN_PRIVATE_ONLY
    notes = await fake.wait_for_messages(GROUP, 3)
    assert [m.text for m in notes] == [texts.ADMIN_PRIVATE_ONLY] * 3
    assert all("hôi miệng" not in m.plain.lower() and m.kind == "text" and not m.buttons for m in notes)
    assert len(fake.messages[GROUP]) == 3  # no listing, no chart, no answer prompt in the group
