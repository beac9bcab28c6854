"""Hostile uploads against the real import paths and a real PostgreSQL: every file is refused with a
Vietnamese message naming the limit, and the KB (entries and versions) is exactly as it was.

The chat upload (``bot.telegram.kb_adapter``), the watched folder (``folder_import`` job) and ``medbot
import`` all call ``kb_import.job.run_import``, which reads every file in a memory-capped child process.
"""

from __future__ import annotations

import asyncio
import csv
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.telegram import kb_adapter
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db import guidelines
from engine.verify.documents import DocumentError
from kb_import.guidelines import import_document
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.limits import ReadLimits
from kb_import.validate import Problem
from tests import hostile_files as hf
from tests.integration.worker_helpers import make_ctx
from tests.verify_support import embedder

ROOT = Path(__file__).resolve().parents[2]
FOLDER_IMPORT = next(j for j in default_jobs() if j.name == "folder_import")


async def kb_state(db: asyncpg.Pool) -> list[tuple[Any, ...]]:
    entries = await db.fetch(
        "SELECT role, code, question, answer, content_hash, active FROM kb_entries ORDER BY 1, 2"
    )
    versions = await db.fetch("SELECT role, version FROM kb_versions ORDER BY role")
    return [tuple(r) for r in entries] + [tuple(v) for v in versions]


@pytest.fixture
async def seeded(db: asyncpg.Pool, tmp_path: Path) -> list[tuple[Any, ...]]:
    """Two entries already in the KB; returns the state every rejected import must leave unchanged."""
    path = tmp_path / "base.csv"
    path.write_text(
        "MÃ SỐ,CÂU HỎI,CÂU TRẢ LỜI\nNK-1,Răng ê buốt?,Dùng kem chống ê buốt.\nNK-2,Nhổ răng khôn?,Khám nha sĩ.\n",
        encoding="utf-8",
    )
    report = await run_import(db, [path], ImportOptions(role="patient_dental", embed=False))
    assert report.ok, report.message
    return await kb_state(db)


async def rejected(db: asyncpg.Pool, path: Path, code: str, **options: Any) -> Problem:
    """Import ``path``; it must be rejected with a fatal problem ``code``, which is returned."""
    report: ImportReport = await run_import(
        db, [path], ImportOptions(embed=False, role="patient_dental", **options)
    )
    assert report.status == "rejected" and not report.ok, report.message
    fatal = [p for p in report.problems if p.severity == "fatal"]
    assert [p.code for p in fatal] == [code], [(p.code, p.message) for p in report.problems]
    assert report.message_vi.startswith("Tệp bị từ chối")
    return fatal[0]


async def shown_to_admin(db: asyncpg.Pool, path: Path) -> kb_adapter.ImportReport:
    """The dry-run report an admin reads in the chat after sending ``path`` to the bot."""
    return await kb_adapter.dry_run(db, path.read_bytes(), path.name, requested_by="telegram:1",
                                    default_role="patient_dental", roles=["patient_dental"])  # fmt: skip


async def test_zzzzz1_cell_reference_is_refused_not_padded(db, seeded, tmp_path):
    row = hf.row(
        2, hf.cell("A2", "NK-9"), hf.cell("B2", "Hỏi?"), hf.cell("C2", "Đáp."), hf.cell("ZZZZZ2", "x")
    )
    path = hf.write_xlsx(tmp_path / "cot.xlsx", [hf.header_row(), row])
    assert path.stat().st_size < 2000  # the old reader built a 12-million-cell row from this
    problem = await rejected(db, path, "too_many_columns")
    assert problem.message_vi == "Bảng tính có quá nhiều cột: tối đa 1.000 cột (có dữ liệu ở cột ZZZZZ)."
    # located like a row's other problems: the row, the entry's code, the column
    assert problem.location_vi() == "cot.xlsx, trang “patient_dental”, dòng 2 (mã NK-9), cột ZZZZZ"
    assert await kb_state(db) == seeded
    # what an admin who sends it to the bot reads
    shown = await shown_to_admin(db, path)
    assert not shown.ok
    assert (
        "– cot.xlsx, trang “patient_dental”, dòng 2 (mã NK-9), cột ZZZZZ: Bảng tính có quá nhiều cột: tối đa "
        "1.000 cột (có dữ liệu ở cột ZZZZZ)."
    ) in shown.text.splitlines(), shown.text
    assert await kb_state(db) == seeded


async def test_zip_bomb_xlsx_is_refused_before_it_is_unpacked(db, seeded, tmp_path):
    path = hf.write_xlsx(
        tmp_path / "bom.xlsx", [hf.header_row(), hf.data_row(2, "NK-9"), *hf.blank(50 * 2**20)]
    )
    assert path.stat().st_size < 100_000  # 50 MB once unpacked
    problem = await rejected(db, path, "zip_ratio")
    assert problem.message_vi.startswith("Tệp bị nén với tỉ lệ bất thường (")
    assert "tối đa 100 lần), dấu hiệu của tệp độc hại" in problem.message_vi
    assert await kb_state(db) == seeded


async def test_too_many_rows(db, seeded, tmp_path):
    path = tmp_path / "dong.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["ĐỀ MỤC", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI"])
        writer.writerows([f"Chủ đề {i}", "", "", ""] for i in range(200_000))  # 200,001 rows with a value
    problem = await rejected(db, path, "too_many_rows")
    assert problem.message_vi == (
        "Tệp có quá nhiều dòng: tối đa 200.000 dòng có dữ liệu trong một tệp; hãy chia thành nhiều tệp nhỏ hơn."
    )
    assert await kb_state(db) == seeded


async def test_too_long_cell_in_csv_and_xlsx(db, seeded, tmp_path):
    path = tmp_path / "o.csv"
    path.write_text(f"MÃ SỐ,CÂU HỎI,CÂU TRẢ LỜI\nNK-9,Hỏi?,{'Đáp án rất dài. ' * 2500}\n", encoding="utf-8")
    problem = await rejected(db, path, "cell_too_long")
    assert problem.message_vi == "Ô quá dài: tối đa 32.767 ký tự một ô."
    assert problem.location_vi() == "o.csv, dòng 2 (mã NK-9), cột C (CÂU TRẢ LỜI)"
    path = hf.write_xlsx(tmp_path / "o.xlsx", [hf.header_row(), hf.data_row(2, "NK-9", answer="a" * 40_000)])
    problem = await rejected(db, path, "cell_too_long")
    assert problem.message_vi == "Ô quá dài: tối đa 32.767 ký tự một ô."
    assert problem.location_vi() == "o.xlsx, trang “patient_dental”, dòng 2 (mã NK-9), cột C (CÂU TRẢ LỜI)"
    assert await kb_state(db) == seeded


async def test_a_stop_in_a_row_names_the_entrys_code_for_the_admin(db, seeded, tmp_path):
    """In the template's layout the code (MÃ SỐ) sits right of ĐỀ MỤC: a huge topic cell still names the
    row's code; a row without one says so, as the other problems of a row do."""
    titles = {"A1": "ĐỀ MỤC", "B1": "MÃ SỐ", "C1": "CÂU HỎI", "D1": "CÂU TRẢ LỜI"}
    header = hf.row(1, *(hf.cell(ref, title) for ref, title in titles.items()))
    ok = ("Răng", "NK-1", "Hỏi?", "Đáp.")
    fine = hf.row(2, *(hf.cell(f"{c}2", text) for c, text in zip("ABCD", ok, strict=True)))
    huge = ("Răng " * 8000, "NK-002", "Hỏi?", "Đáp.")
    huge_topic = hf.row(3, *(hf.cell(f"{c}3", text) for c, text in zip("ABCD", huge, strict=True)))
    path = hf.write_xlsx(tmp_path / "de_muc.xlsx", [header, fine, huge_topic])
    shown = await shown_to_admin(db, path)
    assert not shown.ok
    assert (
        "– de_muc.xlsx, trang “patient_dental”, dòng 3 (mã NK-002), cột A (ĐỀ MỤC): Ô quá dài: tối đa 32.767 ký "
        "tự một ô."
    ) in shown.text.splitlines(), shown.text
    no_code = hf.row(3, hf.cell("A3", "Răng"), hf.cell("C3", "Hỏi?"), hf.cell("D3", "Đáp " * 10_000))
    path = hf.write_xlsx(tmp_path / "khong_ma.xlsx", [header, fine, no_code])
    shown = await shown_to_admin(db, path)
    assert (
        "– khong_ma.xlsx, trang “patient_dental”, dòng 3 (không có mã số), cột D (CÂU TRẢ LỜI): Ô quá dài: tối "
        "đa 32.767 ký tự một ô."
    ) in shown.text.splitlines(), shown.text
    path = tmp_path / "cot.csv"
    wide = "MÃ SỐ,CÂU HỎI,CÂU TRẢ LỜI\nNK-1,Hỏi?,Đáp.\nNK-002,Hỏi?,Đáp." + "," * 1200 + "x\n"
    path.write_text(wide, encoding="utf-8")
    shown = await shown_to_admin(db, path)
    assert (
        "– cot.csv, dòng 3 (mã NK-002), cột ATG: Bảng tính có quá nhiều cột: tối đa 1.000 cột (có dữ liệu ở cột "
        "ATG)."
    ) in shown.text.splitlines(), shown.text
    # a stop in the header row is about no entry: no code
    path = tmp_path / "tieu_de.csv"
    path.write_text(f"MÃ SỐ,CÂU HỎI,CÂU TRẢ LỜI,{'x' * 40_000}\nNK-1,Hỏi?,Đáp.\n", encoding="utf-8")
    shown = await shown_to_admin(db, path)
    assert "– tieu_de.csv, dòng 1, cột D: Ô quá dài: tối đa 32.767 ký tự một ô." in shown.text.splitlines()
    assert await kb_state(db) == seeded


async def test_huge_shared_strings(db, seeded, tmp_path):
    strings = (f"chuỗi {i}" for i in range(1_000_001))
    path = hf.write_xlsx(tmp_path / "chuoi.xlsx", [hf.header_row()], shared_strings=strings, level=1)
    problem = await rejected(db, path, "too_many_shared_strings")
    assert problem.message_vi == "Bảng tính có quá nhiều chuỗi văn bản: tối đa 1.000.000 chuỗi."
    # 3,000 cells using one 17,000-character string: 51 million characters for the import to hold
    long_text = "Đánh răng hai lần mỗi ngày. " * 600
    rows = (
        f'<row r="{i}"><c r="A{i}" t="s"><v>0</v></c><c r="C{i}" t="s"><v>1</v></c></row>'
        for i in range(2, 3002)
    )
    path = hf.write_xlsx(tmp_path / "lap.xlsx", [hf.header_row(), *rows], shared_strings=["NK", long_text])
    assert path.stat().st_size < 100_000
    problem = await rejected(db, path, "too_much_text")
    assert problem.message_vi.startswith("Tệp chứa quá nhiều văn bản: tối đa 50.000.000 ký tự")
    assert await kb_state(db) == seeded


async def test_a_reader_that_runs_out_of_memory_leaves_the_kb_and_this_process_alone(db, seeded, tmp_path):
    words = "chải răng nhẹ nhàng hai lần mỗi ngày kem có fluor nha sĩ khám định kỳ nướu lợi sâu".split()
    rng = random.Random(3)
    rows = [hf.header_row()]
    for i in range(2, 10_002):  # 1,900 characters a row: 19 million in 10,000 rows
        rows.append(hf.data_row(i, f"T-{i}", answer=" ".join(rng.choices(words, k=400))[:1900]))
    path = hf.write_xlsx(tmp_path / "nang.xlsx", rows)
    tight = ReadLimits(memory_bytes=48 * 2**20)  # the reading child gets too little for 10,000 such rows
    problem = await rejected(db, path, "unsafe_file", limits=tight)
    assert problem.message_vi.startswith("Không thể đọc tệp một cách an toàn (")  # (needed more than 48 MB)
    assert problem.message_vi.endswith("nên đã dừng lại; tệp không được nhập, kho kiến thức giữ nguyên.")
    assert await kb_state(db) == seeded
    report = await run_import(db, [path], ImportOptions(dry_run=True, role="patient_dental"))
    assert report.ok and report.totals.added == 10_000  # the same file reads well within the normal limits


async def test_watched_folder_refuses_a_file_over_the_size_cap(db, seeded, tmp_path):
    ctx = make_ctx(db, tmp_path, admin_ids=[111])
    folder = ctx.settings.kb_import_dir
    folder.mkdir(parents=True)
    big = folder / "kb_lon.csv"
    with big.open("wb") as fh:
        fh.write("MÃ SỐ,CÂU HỎI,CÂU TRẢ LỜI\nNK-9,Hỏi?,Đáp.\n".encode())
        fh.truncate(21 * 2**20)  # 21 MB (sparse: no disk space used)
    result = await run_job(ctx, FOLDER_IMPORT)
    assert result.status == "ok", result.error
    assert result.counts["rejected"] == 1 and not big.exists()
    report = (folder / "rejected" / "kb_lon.csv.report.txt").read_text(encoding="utf-8")
    assert "BỊ TỪ CHỐI" in report and "Tệp quá lớn: tối đa 20 MB (tệp này 21 MB)." in report
    notice = await db.fetchval("SELECT payload->>'text' FROM outbox WHERE chat_id = '111'")
    assert "kb_lon.csv" in notice and "Tệp quá lớn: tối đa 20 MB" in notice
    assert await kb_state(db) == seeded


def _cli(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": db_url, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "bot.cli", "import", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)  # fmt: skip


async def test_cli_refuses_the_same_files(db, db_url, seeded, tmp_path):
    row = hf.row(2, hf.cell("A2", "NK-9"), hf.cell("ZZZZZ2", "x"))
    path = hf.write_xlsx(tmp_path / "cot.xlsx", [hf.header_row(), row])
    proc = await asyncio.to_thread(_cli, db_url, str(path), "--role", "patient_dental")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        "BỊ TỪ CHỐI" in proc.stdout
        and "too_many_columns" in proc.stdout
        and "tối đa 1.000 cột" in proc.stdout
    )
    # the problem's line of the table names the row and the entry's code, as for any other row's problem
    (line,) = [line for line in proc.stdout.splitlines() if "too_many_columns" in line]
    assert "NK-9" in line and " 2 " in line and "ZZZZZ" in line, proc.stdout
    assert await kb_state(db) == seeded


async def test_guideline_zip_bomb_changes_no_guideline(db, tmp_path):
    await import_document(db, embedder(), "# Răng\n\nChải răng hai lần mỗi ngày.".encode(), "rang.md")
    documents = await guidelines.list_documents(db)
    chunks = await db.fetch("SELECT document_id, ord, text FROM guideline_chunks ORDER BY 1, 2")
    bomb = hf.write_docx(tmp_path / "rang.docx", [hf.paragraph("Chải răng."), *hf.blank(30 * 2**20)])
    with pytest.raises(DocumentError) as caught:
        await import_document(db, embedder(), bomb.read_bytes(), "rang.docx")
    assert str(caught.value).startswith("tệp bị nén với tỉ lệ bất thường (")
    assert await db.fetch("SELECT document_id, ord, text FROM guideline_chunks ORDER BY 1, 2") == chunks
    assert await guidelines.list_documents(db) == documents
