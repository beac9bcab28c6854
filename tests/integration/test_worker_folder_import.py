"""Watched-folder import through the real KB import job (``kb_import.job``, issue 3).

Skipped until that job is merged; after the merge it must pass as is (or with the adapter in
``kb_import/folder_import.py`` adjusted to the job's API).
"""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from kb_import.job import ImportOptions, run_import
from tests.integration.worker_helpers import make_ctx
from tests.kb_files import rows, write_xlsx

pytest.importorskip("kb_import.job")

HEADER = "role,ĐỀ MỤC,CHỦ ĐỀ CON,MÃ SỐ,CÂU HỎI,CÂU TRẢ LỜI,keywords\n"
GOOD = HEADER + (
    "patient_dental,Răng miệng,,W001,Răng ê buốt khi uống nước lạnh phải làm sao?,"
    "Bạn nên dùng kem đánh răng dành cho răng nhạy cảm và đi khám nha sĩ nếu kéo dài.,ê buốt;nhạy cảm\n"
    "patient_dental,Răng miệng,,W002,Bao lâu nên cạo vôi răng một lần?,"
    "Thường 6 tháng một lần theo chỉ định của nha sĩ.,cạo vôi;lấy cao răng\n"
)
BROKEN = HEADER + (
    "patient_dental,Răng miệng,,W003,Có nên dùng chỉ nha khoa không?,Có, mỗi ngày một lần.,chỉ nha khoa\n"
    "patient_dental,Răng miệng,,W004,Câu hỏi không có câu trả lời,,thiếu\n"
)

FOLDER_IMPORT = next(j for j in default_jobs() if j.name == "folder_import")


async def _kb(db: asyncpg.Pool) -> list[tuple]:
    rows = await db.fetch("SELECT role, code, question, answer, active FROM kb_entries ORDER BY role, code")
    return [tuple(r) for r in rows]


async def test_dropped_spreadsheet_is_imported_and_broken_one_rejected(
    db: asyncpg.Pool, tmp_path: Path
) -> None:
    ctx = make_ctx(db, tmp_path, admin_ids=[111])
    folder = ctx.settings.kb_import_dir
    folder.mkdir(parents=True)
    (folder / "kb_rang.csv").write_text(GOOD, encoding="utf-8")

    result = await run_job(ctx, FOLDER_IMPORT)
    assert result.status == "ok", result.error
    assert result.counts["imported"] == 1
    assert not (folder / "kb_rang.csv").exists()
    assert (folder / "done" / "kb_rang.csv").exists()
    report = (folder / "done" / "kb_rang.csv.report.txt").read_text(encoding="utf-8")
    assert "ĐÃ NHẬP" in report
    assert [r[1] for r in await _kb(db)] == ["W001", "W002"]

    before = await _kb(db)
    (folder / "kb_hong.csv").write_text(BROKEN, encoding="utf-8")
    result = await run_job(ctx, FOLDER_IMPORT)
    assert result.status == "ok", result.error
    assert result.counts["rejected"] == 1
    assert (folder / "rejected" / "kb_hong.csv").exists()
    rejected_report = (folder / "rejected" / "kb_hong.csv.report.txt").read_text(encoding="utf-8")
    assert "BỊ TỪ CHỐI" in rejected_report
    assert "kb_hong.csv" in rejected_report
    # the reason names the row and the entry's code, in the table too ("mã số" column)
    assert "– kb_hong.csv, dòng 3 (mã W004), cột F (CÂU TRẢ LỜI): Thiếu câu trả lời." in rejected_report
    assert "mã số" in rejected_report
    assert any("W004" in line and "missing_answer" in line for line in rejected_report.splitlines())
    assert await _kb(db) == before  # strict: nothing from the broken file, nothing else changed

    notices = await db.fetch("SELECT chat_id, payload FROM outbox ORDER BY id")
    assert [n["chat_id"] for n in notices] == ["111", "111"]
    assert "✅" in notices[0]["payload"]["text"] and "kb_rang.csv" in notices[0]["payload"]["text"]
    assert "❌" in notices[1]["payload"]["text"] and "kb_hong.csv" in notices[1]["payload"]["text"]
    assert "dòng 3 (mã W004)" in notices[1]["payload"]["text"]


async def test_watched_folder_refuses_to_hide_a_large_share(db: asyncpg.Pool, tmp_path: Path) -> None:
    """A partial file dropped in the folder would hide 43 entries: refused (the folder never confirms that),
    the KB unchanged, and the report says why and how to import it by hand."""
    seeded = await run_import(db, [write_xlsx(tmp_path / "kb.xlsx", {"patient_dental": rows(43, "NK-")})],
                              ImportOptions())  # fmt: skip
    assert seeded.ok
    before = await _kb(db)
    ctx = make_ctx(db, tmp_path, admin_ids=[111])
    folder = ctx.settings.kb_import_dir
    folder.mkdir(parents=True)
    (folder / "ba_muc.csv").write_text(GOOD.replace("W00", "NK-9"), encoding="utf-8")

    result = await run_job(ctx, FOLDER_IMPORT)
    assert result.status == "ok", result.error
    assert result.counts["rejected"] == 1 and result.counts["imported"] == 0
    assert await _kb(db) == before
    report = (folder / "rejected" / "ba_muc.csv.report.txt").read_text(encoding="utf-8")
    assert "BỊ TỪ CHỐI" in report
    assert "sẽ ẩn 43/43 mục đang dùng của vai trò patient_dental" in report
    assert "medbot import ba_muc.csv --force" in report and "--keep-missing" in report
    notice = (await db.fetchrow("SELECT payload FROM outbox ORDER BY id DESC LIMIT 1"))["payload"]["text"]
    assert "❌" in notice and "sẽ ẩn 43/43 mục" in notice and "--force" in notice
