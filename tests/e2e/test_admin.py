"""Admin flows end to end: spreadsheet import (dry run → confirm → progress → summary), refusals for
non-admins, /stats with its chart, /unanswered → answer → KB entry, /kb_add, /reload."""

from __future__ import annotations

import asyncpg

from db import kb
from testkit.bot_process import ADMIN_ID
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard

CSV = (
    "code,question,answer,topic,keywords\n"
    "K001,Răng khôn mọc lệch có cần nhổ không?,Nên chụp phim để bác sĩ đánh giá.,Răng khôn,răng khôn;nhổ răng\n"
    "K002,Bao lâu nên thay bàn chải?,Khoảng 3 tháng một lần.,Vệ sinh,bàn chải\n"
    "K003,Có nên dùng chỉ nha khoa?,Nên dùng mỗi ngày sau khi chải răng.,Vệ sinh,chỉ nha khoa\n"
).encode()


async def test_admin_imports_a_spreadsheet(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    chat = ADMIN_ID
    await onboard(fake, chat)
    before = await kb.count_active(db)
    await fake.send_document(chat, CSV, "kb.csv")
    report = (await fake.wait_for_messages(chat, 2))[1]
    await fake.wait_for(lambda: report.buttons, what="dry-run report with buttons")
    assert "3 dòng hợp lệ" in report.plain
    assert await kb.count_active(db) == before  # a dry run changes nothing

    cq = await fake.tap(chat, report.message_id, report.button("imp:ok")["callback_data"])
    await fake.wait_callback_answered(cq)
    await fake.wait_for(lambda: any("Đã nhập 3" in m.plain for m in fake.messages[chat]), what="summary")
    progress = next(m for m in fake.messages[chat] if "Đã nhập 3" in m.plain)
    assert progress.edits and "Đang nhập" in progress.edits[0]  # the progress message was edited in place
    assert not report.buttons  # used-up buttons are removed
    assert await kb.count_active(db, "patient_dental") == before + 3

    # A second tap on the same (stale) confirmation imports nothing more and is answered politely.
    bad_csv = "code,question,answer\n,Câu hỏi chưa có mã?,Có câu trả lời.\nK009,Câu hỏi K009?,\n".encode()
    await fake.send_document(chat, bad_csv, "bad.csv")
    bad = await fake.wait_for(
        lambda: next((m for m in fake.messages[chat] if "2 lỗi" in m.plain), None), what="rejected report"
    )
    assert not bad.buttons  # nothing to confirm
    # each problem names the row and the entry's code, or says the row has none
    assert "– bad.csv, dòng 2 (không có mã số), cột A (code): Thiếu mã số." in bad.plain, bad.plain
    assert "– bad.csv, dòng 3 (mã K009), cột C (answer): Thiếu câu trả lời." in bad.plain, bad.plain
    assert await kb.count_active(db, "patient_dental") == before + 3


async def test_non_admin_is_refused_and_nothing_changes(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    chat = 4001
    await onboard(fake, chat)
    before = await kb.count_active(db)
    downloads = fake.count_calls("getFile")
    for command in (
        "/import",
        "/stats",
        "/kb_add patient_dental Câu hỏi? | Trả lời",
        "/unanswered",
        "/reload",
    ):
        await fake.send_text(chat, command)
    await fake.send_document(chat, CSV, "kb.csv")
    msgs = await fake.wait_for_messages(chat, 7)
    assert all("quản trị viên" in m.plain for m in msgs[1:]), [m.plain for m in msgs[1:]]
    assert not any(m.buttons for m in msgs[1:])
    assert await kb.count_active(db) == before
    # no pending import
    assert (
        await db.fetchval(
            "SELECT count(*) FROM chat_states, jsonb_object_keys(data) AS k WHERE k LIKE 'import:%'"
        )
        == 0
    )
    assert fake.count_calls("getFile") == downloads  # the document was never even downloaded


async def test_admin_stats_unanswered_kb_add(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    patient = 4002
    await onboard(fake, patient)
    await fake.send_text(patient, "Bị hôi miệng kéo dài phải làm gì?")  # nothing in the KB
    await fake.send_text(patient, "Niềng răng mất bao lâu thì xong?")
    msgs = await fake.wait_for_messages(patient, 3)
    cq = await fake.tap(
        patient, msgs[2].message_id, msgs[2].button("fb:")["callback_data"].rsplit(":", 1)[0] + ":-1"
    )
    await fake.wait_callback_answered(cq)

    admin = ADMIN_ID
    await onboard(fake, admin)
    await fake.send_text(admin, "/stats")
    photo = await fake.wait_for(
        lambda: next((m for m in fake.messages[admin] if m.kind == "photo"), None), what="stats chart"
    )
    assert photo.file_bytes and photo.file_bytes[:8] == b"\x89PNG\r\n\x1a\n"
    text = next(m for m in fake.messages[admin] if "Thống kê" in m.plain)
    assert "Tin nhắn: 2" in text.plain and "👎 1" in text.plain

    await fake.send_text(admin, "/unanswered")
    listing = await fake.wait_for(
        lambda: next((m for m in fake.messages[admin] if "cần xem lại" in m.plain), None), what="unanswered"
    )
    assert "hôi miệng" in listing.plain and "Niềng răng" in listing.plain
    n = len(fake.messages[admin])
    cq = await fake.tap(admin, listing.message_id, listing.button("ua:")["callback_data"])
    await fake.wait_callback_answered(cq)
    prompt = (await fake.wait_for_messages(admin, n + 1))[-1]
    assert prompt.reply_markup and prompt.reply_markup.get("force_reply")
    assert "Niềng răng mất bao lâu thì xong?" in prompt.plain  # the patient's words, as a draft to edit
    # An answer alone adds nothing yet: the bot asks whether the patient's wording may be the KB question.
    n = len(fake.messages[admin])
    await fake.send_text(admin, "Thường từ 18 đến 24 tháng, tuỳ từng trường hợp.", reply_to=prompt.message_id)
    confirm = (await fake.wait_for_messages(admin, n + 1))[n]
    assert "nguyên văn" in confirm.plain and "Niềng răng mất bao lâu thì xong?" in confirm.plain
    assert await kb.count_active(db, "patient_dental") == len(DENTAL)
    # Confirmed explicitly as the admin's own wording: the entry is added with it.
    use = confirm.button("kbd:ok:")["callback_data"]
    await fake.wait_callback_answered(await fake.tap(admin, confirm.message_id, use))
    await fake.wait_for(lambda: "Đã thêm vào KB" in fake.messages[admin][-1].plain, what="KB entry added")
    assert not confirm.buttons  # used up
    added = [
        (e.question, e.answer)
        for e in await kb.active_entries(db, "patient_dental")
        if e.code.startswith("TG")
    ]
    assert added == [("Niềng răng mất bao lâu thì xong?", "Thường từ 18 đến 24 tháng, tuỳ từng trường hợp.")]
    # The same confirmation tapped again (a double tap that beat the removal of the buttons) adds nothing more.
    again = await fake.wait_callback_answered(await fake.tap(admin, confirm.message_id, use, forged=True))
    assert "hết hạn" in again.get("text", "")
    assert await kb.count_active(db, "patient_dental") == len(DENTAL) + 1

    n = len(fake.messages[admin])
    await fake.send_text(
        admin, "/kb_add patient_diabetes Đường huyết bao nhiêu là cao? | Trên 7 mmol/L lúc đói."
    )
    added = (await fake.wait_for_messages(admin, n + 1))[n]
    assert "Đã thêm vào KB" in added.plain and "Tiểu đường" in added.plain
    entries = await kb.active_entries(db, "patient_diabetes")
    assert [e.answer for e in entries] == ["Trên 7 mmol/L lúc đói."]
    assert await kb.version(db, "patient_diabetes") >= 1

    await fake.send_text(admin, "/reload")
    await fake.wait_for(lambda: "tải lại" in fake.messages[admin][-1].plain, what="reload")
    assert not fake.errors


async def test_two_answer_prompts_each_take_their_own_reply(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    """With two ✍️ prompts open, a reply answers the question of the prompt it replies to (the chat state
    remembers which prompt asks about which message), whatever the order."""
    fake = shared_fake
    await add_kb(db, DENTAL)
    patient = 4003
    await onboard(fake, patient)
    await fake.send_text(patient, "Bị hôi miệng kéo dài phải làm gì?")  # nothing in the KB: unanswered
    await fake.send_text(patient, "Răng bị ố vàng có tẩy trắng được không?")
    await fake.wait_for_messages(patient, 3)
    admin = ADMIN_ID
    n = len(fake.messages[admin])
    await fake.send_text(admin, "/unanswered")
    listing = (await fake.wait_for_messages(admin, n + 1))[n]
    asks = [b["callback_data"] for b in listing.buttons if str(b.get("callback_data", "")).startswith("ua:")]
    assert len(asks) == 2, listing.plain
    prompts = []
    for data in asks:
        n = len(fake.messages[admin])
        await fake.wait_callback_answered(await fake.tap(admin, listing.message_id, data))
        prompts.append(((await fake.wait_for_messages(admin, n + 1))[n], int(data.split(":")[1])))
    (first, first_id), (second, second_id) = prompts
    # The second prompt is answered first, then the first one.
    for prompt, message_id, entry in (
        (second, second_id, "Câu hỏi thứ hai? | Trả lời thứ hai."),
        (first, first_id, "Câu hỏi thứ nhất? | Trả lời thứ nhất."),
    ):
        n = len(fake.messages[admin])
        await fake.send_text(admin, entry, reply_to=prompt.message_id)
        done = (await fake.wait_for_messages(admin, n + 1))[n]
        assert "Đã thêm vào KB" in done.plain and f"TG{message_id}" in done.plain
    added = {
        e.code: e.question for e in await kb.active_entries(db, "patient_dental") if e.code.startswith("TG")
    }
    assert added == {f"TG{second_id}": "Câu hỏi thứ hai?", f"TG{first_id}": "Câu hỏi thứ nhất?"}
    # Both prompts are answered: the chat waits for nothing any more.
    assert await db.fetchval("SELECT state FROM chat_states WHERE chat_id = $1", admin) is None
