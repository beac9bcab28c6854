"""The Telegram admin flow, end to end against the fake Bot API: a spreadsheet that would undo changes doctors
made in the clinic console lists them (the first few per specialty, then "… và N mục khác") right above the
buttons, whose first is "🛡 Chỉ nhập các mục chưa sửa trên trang quản trị"; tapping it imports the rest of
the file and leaves the doctors' entries as they are."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from db import kb_edit
from engine.embedding import E5Embedder
from kb_import import curate
from kb_import.job import ImportOptions, run_import
from testkit.bot_process import SECOND_ADMIN_ID
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import onboard
from tests.kb_files import entry, rows, write_csv

ROLE = "patient_dental"
DOCTOR = "lan@phongkham.vn"
FIXED = "Bác sĩ đã sửa: chải răng 2 lần mỗi ngày bằng kem có fluor."


async def console_edit(db: asyncpg.Pool, code: str, who: int, **changes: str) -> None:
    """A doctor's edit as the console's entry form saves it (``kb_import.curate``)."""
    entry_id = await db.fetchval("SELECT id FROM kb_entries WHERE role = $1 AND code = $2", ROLE, code)
    stored = await kb_edit.read_entry(db, int(entry_id))
    assert stored is not None
    values = {**curate.form_values(stored.snapshot()), **changes}
    assert await curate.edit(db, E5Embedder(), stored.id, values, seen=stored.updated_at, staff_id=who)


async def test_an_older_file_lists_the_console_edits_and_can_import_around_them(
    db: asyncpg.Pool, shared_fake: FakeTelegram, tmp_path: Path
) -> None:
    fake = shared_fake
    old = write_csv(tmp_path / "kb.csv", rows(8, "NK-"))
    assert (await run_import(db, [old], ImportOptions(role=ROLE, requested_by="test"))).ok
    who = int(
        await db.fetchval(
            "INSERT INTO staff_accounts (email, role, password_hash) VALUES ($1, 'clinician', 'x') RETURNING id",
            DOCTOR,
        )
    )
    await console_edit(db, "NK-001", who, answer=FIXED)
    for n in range(2, 8):  # six more entries re-filed under another topic
        await console_edit(db, f"NK-{n:03d}", who, topic="Phòng ngừa")
    newer = write_csv(
        tmp_path / "kb_cu.csv", [*rows(7, "NK-"), entry("NK-008", answer="Bản mới của NK-008.")]
    )

    chat = SECOND_ADMIN_ID
    await onboard(fake, chat)
    n = len(fake.messages[chat])
    await fake.send_document(chat, newer.read_bytes(), "kb_cu.csv")
    report = (await fake.wait_for_messages(chat, n + 1))[n]
    await fake.wait_for(lambda: report.buttons, what="dry-run report with buttons")
    text = report.plain
    assert "⚠️ Cảnh báo: tệp này sẽ làm mất 7 thay đổi đã làm trên trang quản trị" in text.splitlines()[0]
    listing = text[text.index("⚠️ Tệp này sẽ làm mất 7 thay đổi đã làm trên trang quản trị:") :].splitlines()
    assert listing[1] == "patient_dental (Bệnh nhân nha khoa):"
    assert listing[2].startswith(f"– NK-001 “Câu hỏi NK-001?” — sửa trên trang quản trị bởi {DOCTOR} lúc ")
    assert listing[2].endswith(": file này sẽ ghi đè nội dung đã sửa"), listing[2]
    assert [line[:8] for line in listing[3:7]] == ["– NK-002", "– NK-003", "– NK-004", "– NK-005"]
    assert listing[7] == "… và 2 mục khác"
    assert listing[8].startswith("Bấm “🛡 Chỉ nhập các mục chưa sửa trên trang quản trị”")
    assert len(listing) == 9  # the list is the end of the message, right above the buttons
    assert [b["text"] for b in report.buttons] == [
        "🛡 Chỉ nhập các mục chưa sửa trên trang quản trị",
        "⚠️ Nhập cả tệp (bỏ 7 thay đổi trên trang quản trị)",
        "✖️ Huỷ",
    ]

    cq = await fake.tap(chat, report.message_id, report.button("imp:edits:")["callback_data"])
    await fake.wait_callback_answered(cq)
    done = await fake.wait_for(
        lambda: next((m for m in fake.messages[chat] if m.plain.startswith("Đã nhập:")), None), what="summary"
    )
    assert done.plain.startswith("Đã nhập: thêm 0, cập nhật 1, khôi phục 0, ẩn 0"), done.plain
    assert "🛡 Đã giữ nguyên 7 mục đã thay đổi trên trang quản trị:" in done.plain
    kb = {
        r["code"]: (r["topic"], r["answer"])
        for r in await db.fetch("SELECT code, topic, answer FROM kb_entries WHERE role = $1", ROLE)
    }
    assert kb["NK-001"] == ("Chung", FIXED)
    assert all(kb[f"NK-{n:03d}"][0] == "Phòng ngừa" for n in range(2, 8))
    assert kb["NK-008"] == ("Chung", "Bản mới của NK-008.")
    assert not fake.errors, fake.errors
