"""An import's dry run names the clinic console's changes the file would undo, and "Chỉ nhập các mục chưa sửa
trên trang quản trị" applies the file around them, against the real database: entries are changed through
the console's own code path (``kb_import.curate``), imported through the real job, the console's import page
over HTTP, ``medbot import`` as a subprocess; undo still puts the KB back exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import httpx

from db import kb_edit
from engine.embedding import CachedEmbedder
from kb_import import curate
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.undo import undo_last_import
from tests.console_support import ADMIN
from tests.integration.test_console import log_in
from tests.integration.test_console_import import apply, check, kb_state
from tests.kb_files import entry, rows, write_csv
from tests.medbot_cli import run_medbot

ROLE = "patient_dental"
DOCTOR = "lan@phongkham.vn"
FIXED = "Bác sĩ đã sửa: súc miệng nước muối ấm và đi khám nếu đau quá 2 ngày."


async def staff_id(db: asyncpg.Pool, email: str = DOCTOR) -> int:
    found = await db.fetchval("SELECT id FROM staff_accounts WHERE email = $1", email)
    if found is None:
        found = await db.fetchval(
            "INSERT INTO staff_accounts (email, role, password_hash) VALUES ($1, 'clinician', 'x') RETURNING id",
            email,
        )
    return int(found)


async def entry_id(db: asyncpg.Pool, code: str) -> int:
    return int(await db.fetchval("SELECT id FROM kb_entries WHERE role = $1 AND code = $2", ROLE, code))


async def console_edit(
    db: asyncpg.Pool, embedder: CachedEmbedder, code: str, who: int, **changes: str
) -> None:
    """A doctor's edit as the console's entry form saves it."""
    stored = await kb_edit.read_entry(db, await entry_id(db, code))
    assert stored is not None
    values = {**curate.form_values(stored.snapshot()), **changes}
    assert await curate.edit(db, embedder, stored.id, values, seen=stored.updated_at, staff_id=who)


async def import_file(db: asyncpg.Pool, path: Path, **options: Any) -> ImportReport:
    return await run_import(db, [path], ImportOptions(role=ROLE, requested_by="test", **options))


async def answers(db: asyncpg.Pool) -> dict[str, tuple[str, bool]]:
    found = await db.fetch("SELECT code, answer, active FROM kb_entries WHERE role = $1", ROLE)
    return {r["code"]: (r["answer"], r["active"]) for r in found}


async def doctors_changes(db: asyncpg.Pool, embedder: CachedEmbedder, tmp_path: Path) -> Path:
    """NK-001…NK-005 imported from ``cu.csv`` (returned), then in the console: NK-002's answer corrected,
    NK-003 hidden, NK-004 edited and edited back (no net change), NK-006 created."""
    old = write_csv(tmp_path / "cu.csv", rows(5, "NK-"))
    assert (await import_file(db, old)).status == "applied"
    who = await staff_id(db)
    await console_edit(db, embedder, "NK-002", who, answer=FIXED)
    await curate.set_hidden(db, await entry_id(db, "NK-003"), True, staff_id=who)
    await console_edit(db, embedder, "NK-004", who, topic="Tạm")
    await console_edit(db, embedder, "NK-004", who, topic="Chung")
    values = {
        **curate.form_values({}),
        "question": "Răng khôn mọc lệch có cần nhổ?",
        "answer": "Tuỳ phim X-quang.",
    }
    await curate.create(db, embedder, ROLE, "NK-006", values, staff_id=who)
    return old


async def test_a_dry_run_lists_what_an_older_file_would_undo_and_changes_nothing(
    db: asyncpg.Pool, embedder: CachedEmbedder, tmp_path: Path
) -> None:
    old = await doctors_changes(db, embedder, tmp_path)
    before = await kb_state(db)

    report = await import_file(db, old, dry_run=True)
    assert report.ok and report.status == "dry_run"
    listed = {c.code: c.what_vi() for c in report.console_changes}
    assert listed == {
        "NK-002": "file này sẽ ghi đè nội dung đã sửa",
        "NK-003": "file này sẽ hiện lại mục đã bị ẩn",
        "NK-006": "file này không có mã này nên sẽ ẩn mục",
    }
    line = report.console_changes[0].line_vi()
    assert line.startswith(f"NK-002 “Câu hỏi NK-002?” — sửa trên trang quản trị bởi {DOCTOR} lúc "), line
    assert line.endswith(": file này sẽ ghi đè nội dung đã sửa"), line
    assert report.console_changes[2].line_vi().startswith("NK-006 “Răng khôn mọc lệch có cần nhổ?” — tạo ")
    assert "⚠️ Cảnh báo: tệp này sẽ làm mất 3 thay đổi đã làm trên trang quản trị" in report.message_vi
    assert await kb_state(db) == before

    # A file that holds the console's own text for NK-002 and NK-006 and lacks the hidden NK-003: nothing lost.
    created = ["", "", "NK-006", "Răng khôn mọc lệch có cần nhổ?", "Tuỳ phim X-quang.", ""]  # no topic: first
    current = [created, entry("NK-001"), entry("NK-002", answer=FIXED), entry("NK-004"), entry("NK-005")]
    report = await import_file(db, write_csv(tmp_path / "moi.csv", current), dry_run=True)
    assert report.ok and report.console_changes == [], [c.line_vi() for c in report.console_changes]
    assert "trang quản trị" not in report.message_vi

    # A file that lacks NK-002: the doctor's corrected entry would be hidden.
    lacking = [created, entry("NK-001"), entry("NK-004"), entry("NK-005")]
    report = await import_file(db, write_csv(tmp_path / "thieu.csv", lacking), dry_run=True)
    assert [(c.code, c.action) for c in report.console_changes] == [("NK-002", "hide")]
    assert await kb_state(db) == before


async def test_keeping_console_edits_applies_the_rest_and_undo_puts_everything_back(
    db: asyncpg.Pool, embedder: CachedEmbedder, tmp_path: Path
) -> None:
    await doctors_changes(db, embedder, tmp_path)
    newer = write_csv(tmp_path / "cu2.csv", [*rows(4, "NK-"), entry("NK-005", answer="Bản mới của NK-005.")])
    before = await db.fetch("SELECT to_jsonb(e) - 'embedding' AS row FROM kb_entries e ORDER BY code")

    report = await import_file(db, newer, keep_console_edits=True)
    assert report.ok and report.status == "applied", report.message
    assert report.roles[ROLE].kept_edits == 3 and report.roles[ROLE].deactivated == 0
    assert "Đã giữ nguyên 3 mục đã thay đổi trên trang quản trị" in report.message_vi
    kb = await answers(db)
    assert kb["NK-002"] == (FIXED, True)  # the doctor's correction stays
    assert kb["NK-003"][1] is False  # still hidden, as the doctor left it
    assert kb["NK-006"] == ("Tuỳ phim X-quang.", True)  # the doctor's entry stays shown
    assert kb["NK-005"] == ("Bản mới của NK-005.", True)  # the rest of the file is applied

    assert (await undo_last_import(db, ROLE, requested_by="test")).ok
    assert await db.fetch("SELECT to_jsonb(e) - 'embedding' AS row FROM kb_entries e ORDER BY code") == before

    # The plain import does undo them, says so, and after it nothing is a console change any more …
    report = await import_file(db, newer)
    assert report.ok and len(report.console_changes) == 3
    assert "đã ghi đè hoặc ẩn 3 mục đã thay đổi trên trang quản trị" in report.message_vi
    kb = await answers(db)
    assert kb["NK-002"] == ("Trả lời cho NK-002.", True) and kb["NK-003"][1] and not kb["NK-006"][1]
    assert (await import_file(db, newer, dry_run=True)).console_changes == []
    # … until its undo brings the doctor's correction back, which the next dry run names again.
    assert (await undo_last_import(db, ROLE, requested_by="test")).ok
    assert (await answers(db))["NK-002"] == (FIXED, True)
    history = await kb_edit.history(db, await entry_id(db, "NK-002"))  # the undo kept the entry's history
    assert [(h.kind, h.changed_by, h.result["answer"]) for h in history] == [("edit", DOCTOR, FIXED)]
    again = await import_file(db, newer, dry_run=True)
    assert [c.code for c in again.console_changes] == ["NK-002", "NK-003", "NK-006"]


async def test_the_console_import_page_warns_next_to_apply_and_can_keep_the_edits(
    http: httpx.AsyncClient, db: asyncpg.Pool, embedder: CachedEmbedder, tmp_path: Path
) -> None:
    await doctors_changes(db, embedder, tmp_path)
    before = await answers(db)
    newer = write_csv(tmp_path / "cu2.csv", [*rows(4, "NK-"), entry("NK-005", answer="Bản mới của NK-005.")])
    await log_in(http, *ADMIN)
    page = await check(http, "cu2.csv", newer.read_bytes())
    assert page.status_code == 200
    text = page.text
    warning = text.index("⚠️ Tệp này sẽ làm mất 3 thay đổi đã làm trên trang quản trị")
    # the list comes right before the buttons, the safe choice first
    assert warning < text.index('value="edits"') < text.index('value="ok"')
    assert "Chỉ nhập các mục chưa sửa trên trang quản trị" in text
    assert "Áp dụng cả tệp (bỏ 3 thay đổi trên trang quản trị)" in text
    for code, what in (
        ("NK-002", "File này sẽ ghi đè nội dung đã sửa"),
        ("NK-003", "File này sẽ hiện lại mục đã bị ẩn"),
        ("NK-006", "File này không có mã này nên sẽ ẩn mục"),
    ):
        row = text[text.index(f"<td>{code}</td>") :]
        assert what in row[: row.index("</tr>")], code
    assert f"Sửa bởi {DOCTOR} lúc" in text and f"Tạo bởi {DOCTOR} lúc" in text
    assert await answers(db) == before

    done = await apply(http, page, "edits")
    assert done.status_code == 303
    after = await answers(db)
    assert after == {**before, "NK-005": ("Bản mới của NK-005.", True)}  # the rest of the file, no more
    history = await http.get(done.headers["Location"])
    assert "các mục đã sửa trên trang quản trị được giữ nguyên" in history.text


class SavingMeanwhile:
    """The real embedder; while the import computes its vectors, a doctor saves an edit in the console."""

    def __init__(self, inner: CachedEmbedder, save: Any) -> None:
        self.inner, self.save, self.name = inner, save, inner.name

    async def embed_passages(self, texts: list[str], progress: Any = None) -> Any:
        await self.save()
        return await self.inner.embed_passages(texts, progress=progress)


async def test_keeping_console_edits_refuses_when_a_doctor_saves_during_the_import(
    db: asyncpg.Pool, embedder: CachedEmbedder, tmp_path: Path
) -> None:
    await doctors_changes(db, embedder, tmp_path)
    newer = write_csv(tmp_path / "cu2.csv", [*rows(4, "NK-"), entry("NK-005", answer="Bản mới của NK-005.")])
    who = await staff_id(db)

    async def save() -> None:
        await console_edit(db, embedder, "NK-001", who, topic="Sửa giữa chừng")

    report = await run_import(
        db,
        [newer],
        ImportOptions(role=ROLE, requested_by="test", keep_console_edits=True),
        embedder=SavingMeanwhile(embedder, save),
    )
    assert report.status == "rejected" and not report.ok
    assert report.message_vi.startswith("Chưa nhập: trong lúc nhập, trang quản trị vừa có thay đổi")
    kb = await answers(db)
    assert kb["NK-005"] == ("Trả lời cho NK-005.", True)  # nothing of the file was written
    assert await db.fetchval("SELECT topic FROM kb_entries WHERE code = 'NK-001'") == "Sửa giữa chừng"


async def test_medbot_import_dry_run_prints_the_list_and_keep_console_edits_applies_around_it(
    db: asyncpg.Pool, db_url: str, embedder: CachedEmbedder, tmp_path: Path
) -> None:
    old = await doctors_changes(db, embedder, tmp_path)
    before = await answers(db)
    dry = run_medbot(db_url, "import", str(old), "--role", ROLE, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    out = dry.stdout
    assert "⚠️ Tệp này sẽ làm mất 3 thay đổi đã làm trên trang quản trị" in out
    assert "patient_dental (Bệnh nhân nha khoa):" in out
    assert f"– NK-002 “Câu hỏi NK-002?” — sửa trên trang quản trị bởi {DOCTOR} lúc " in out
    assert "– NK-003 “Câu hỏi NK-003?” — ẩn trên trang quản trị" in out and "sẽ hiện lại mục đã bị ẩn" in out
    assert "chạy lại với --keep-console-edits" in out
    assert await answers(db) == before

    kept = run_medbot(db_url, "import", str(old), "--role", ROLE, "--keep-console-edits", "--no-embed")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "Giữ nguyên 3 mục đã thay đổi trên trang quản trị" in kept.stdout
    assert await answers(db) == before
