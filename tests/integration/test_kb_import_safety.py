"""Import safety (issue 16 §3), against the real database and the real ``medbot`` command:

* a partial file never hides a large share of a role without an explicit confirmation (``--force``), and the
  first line of the summary says what was hidden;
* the last import of a role can be undone, every column of every entry back exactly as it was (embeddings,
  flags, timestamps), and undoing again steps back one more import;
* the template's example row never reaches the KB.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import asyncpg
import openpyxl

from db import kb
from kb_import.example import EXAMPLE
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.sample import SAMPLE_PATH
from kb_import.undo import undo_last_import
from tests.kb_files import HEADERS, entry, rows, write_xlsx
from tests.medbot_cli import run_medbot

ROOT = Path(__file__).resolve().parents[2]
URGENT_HEADERS = [*HEADERS, "KHẨN CẤP"]


async def entries(db: asyncpg.Pool, role: str) -> list[dict[str, Any]]:
    """Every column of every entry of ``role`` (active or not), vectors as exact float lists, by code."""
    columns = await db.fetch(
        "SELECT column_name, udt_name FROM information_schema.columns "
        "WHERE table_name = 'kb_entries' AND table_schema = current_schema() ORDER BY ordinal_position"
    )
    select = ", ".join(
        f"{c['column_name']}::real[] AS {c['column_name']}" if c["udt_name"] == "vector" else c["column_name"]
        for c in columns
    )
    found = await db.fetch(f"SELECT {select} FROM kb_entries WHERE role = $1 ORDER BY code", role)
    return [dict(r) for r in found]


async def active_codes(db: asyncpg.Pool, role: str) -> set[str]:
    return {r["code"] for r in await db.fetch("SELECT code FROM kb_entries WHERE role = $1 AND active", role)}


async def imp(db: asyncpg.Pool, path: Path, embedder: Any = None, **opts: Any) -> ImportReport:
    return await run_import(db, [path], ImportOptions(**opts), embedder=embedder)


def _medbot(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_medbot(db_url, *args, timeout=180)


THREE_NEW = [
    entry("NK-901", "Bọc răng sứ giữ được bao lâu?", "Thường 10–15 năm nếu vệ sinh tốt và khám định kỳ."),
    entry("NK-902", "Có nên dùng nước súc miệng hằng ngày?", "Có thể dùng, nhưng không thay cho chải răng."),
    entry("NK-903", "Trẻ mấy tuổi thì bỏ bú bình?", "Nên tập cho trẻ bỏ bú bình khoảng 12–18 tháng tuổi."),
]


# --- a partial file against a 43-entry role: refused, forced, undone ----------------------------------------


async def test_partial_file_is_refused_then_forced_then_undone_exactly(
    db, db_url, embedder, sample_vectors_cached, tmp_path
):
    # The sample KB's entries as `medbot setup` loads them: patient_dental holds 43 entries (urgent ones among
    # them), sample-marked, embedded. Without the four roles' calibrations (kb_calibrations, which neither the
    # guard nor the undo reads or writes; re-estimating them costs seconds): the forced import re-estimates
    # patient_dental's as any import does.
    setup = await run_import(
        db,
        [SAMPLE_PATH],
        ImportOptions(requested_by="setup", sample=True, calibrate=False),
        embedder=embedder,
    )
    assert setup.ok, setup.message
    before = await entries(db, "patient_dental")
    assert len(before) == 43 and all(e["active"] and e["sample"] and e["embedding"] for e in before)
    assert any(e["urgent"] for e in before)
    others = {
        role: await entries(db, role) for role in ("patient_diabetes", "doctor_dental", "doctor_endocrine")
    }
    version = await kb.version(db, "patient_dental")
    three = write_xlsx(tmp_path / "ba_muc_moi.xlsx", {"patient_dental": THREE_NEW})

    # Without --force: refused, nothing changed, and the message says how many would be hidden, in Vietnamese.
    proc = await asyncio.to_thread(_medbot, db_url, "import", str(three))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "sẽ ẩn 43/43 mục đang dùng của vai trò patient_dental" in proc.stdout, proc.stdout
    assert "kho kiến thức chưa thay đổi" in proc.stdout and "--force" in proc.stdout
    assert "mass_deactivation" in proc.stdout and "ba_muc_moi.xlsx" in proc.stdout
    assert await entries(db, "patient_dental") == before
    assert await kb.version(db, "patient_dental") == version
    refused = await db.fetchrow("SELECT status, errors FROM kb_imports ORDER BY id DESC LIMIT 1")
    assert refused["status"] == "rejected"
    assert [(e["code"], e["severity"], e["sheet"]) for e in refused["errors"]] == [
        ("mass_deactivation", "fatal", "patient_dental")
    ]

    # With --force: applied; the summary's first line says what was hidden.
    proc = await asyncio.to_thread(_medbot, db_url, "import", str(three), "--force")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]  # in Vietnamese for clinic staff; the English message is logged
    assert first.startswith("ĐÃ NHẬP Đã ẩn 43 mục của vai trò patient_dental"), first
    assert "medbot kb undo patient_dental" in proc.stdout
    assert await active_codes(db, "patient_dental") == {"NK-901", "NK-902", "NK-903"}

    # One command undoes it: the 43 exactly as they were (every column, embeddings included), the 3 gone.
    proc = await asyncio.to_thread(_medbot, db_url, "kb", "undo", "patient_dental")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "43 mục trở lại đúng như trước lần nhập" in proc.stdout
        and "3 mục do lần nhập đó thêm vào" in proc.stdout
    )
    assert await entries(db, "patient_dental") == before
    assert {role: await entries(db, role) for role in others} == others
    assert await kb.version(db, "patient_dental") > version  # running bots reload the role
    undo = await db.fetchrow("SELECT status, requested_by, counts FROM kb_imports ORDER BY id DESC LIMIT 1")
    assert undo["status"] == "undo" and undo["requested_by"].startswith("cli:")
    assert (undo["counts"]["restored"], undo["counts"]["removed"]) == (43, 3)


async def test_what_needs_a_confirmation(db, tmp_path):
    """Large share = more than 10 entries, or more than 20 % of the role's active entries."""
    cases = [  # (active entries, entries kept by the next file, refused without force?)
        (50, 40, False),  # hides 10: exactly the cap
        (50, 39, True),  # hides 11
        (5, 4, False),  # hides 1 of 5: exactly 20 %
        (4, 3, True),  # hides 1 of 4: 25 %
    ]
    for active, kept, refused in cases:
        await db.execute("TRUNCATE kb_entries, kb_versions, kb_imports CASCADE")
        assert (await imp(db, write_xlsx(tmp_path / "all.xlsx", {"patient_dental": rows(active)}))).ok
        before = await entries(db, "patient_dental")
        partial = write_xlsx(tmp_path / "part.xlsx", {"patient_dental": rows(kept)})
        dry = await imp(db, partial, dry_run=True)
        hidden = active - kept
        assert dry.ok and dry.needs_confirmation == refused, (active, kept)
        assert dry.message_vi.startswith(f"Kiểm tra thử: sẽ ẩn {hidden}/{active} mục đang dùng của vai trò "
                                         "patient_dental"), dry.message_vi  # fmt: skip
        report = await imp(db, partial)
        if refused:
            assert not report.ok and report.status == "rejected", (active, kept)
            assert report.message_vi.startswith(f"Chưa nhập: lần nhập này sẽ ẩn {hidden}/{active} mục")
            assert await entries(db, "patient_dental") == before
            report = await imp(db, partial, force=True)
        assert report.ok and report.status == "applied", (active, kept, report.message)
        assert report.message_vi.startswith(f"Đã ẩn {hidden} mục của vai trò patient_dental"), (
            report.message_vi
        )
        assert len(await active_codes(db, "patient_dental")) == kept

    # Add and update only (--keep-missing) never hides anything, so it needs no confirmation.
    report = await imp(
        db, write_xlsx(tmp_path / "new.xlsx", {"patient_dental": rows(2, "N")}), keep_missing=True
    )
    assert report.ok and report.totals.deactivated == 0 and report.totals.added == 2


# --- undo -----------------------------------------------------------------------------------------------------


async def test_undo_restores_every_column_and_steps_back(db, embedder, tmp_path):
    def sheet(data: list[list[Any]], urgent: set[str] = frozenset()) -> list[list[Any]]:
        return [[*r, "x" if r[2] in urgent else ""] for r in data]

    def book(name: str, data: list[list[Any]], **sheets: list[list[Any]]) -> Path:
        return write_xlsx(tmp_path / name, {"patient_dental": data, **sheets}, URGENT_HEADERS)

    base = [entry(f"Q{i:03d}") for i in range(1, 7)]
    doctor = sheet([entry("BS-001", "Chỉ định nhổ răng khôn?")])
    v1 = await imp(db, book("v1.xlsx", sheet(base, {"Q002"}), doctor_dental=doctor), embedder, sample=True)
    assert v1.ok, v1.message
    after_v1 = await entries(db, "patient_dental")
    v2 = await imp(db, book("v2.xlsx", sheet(base[:5], {"Q002"})), embedder, sample=True)  # hides Q006
    assert v2.ok and v2.totals.deactivated == 1, v2.message
    before = await entries(db, "patient_dental")
    doctor_before = await entries(db, "doctor_dental")

    # The clinic's own file: a new question (new vector), the urgent mark removed, Q004 hidden, Q006 back, a new
    # entry; every written row becomes the clinic's own (sample flag cleared).
    v3_rows = [list(r) for r in base if r[2] != "Q004"]
    v3_rows[0][3] = "Câu hỏi đã sửa lại cho rõ hơn?"
    v3_rows.append(entry("Q007"))
    v3_path = book("v3.xlsx", sheet(v3_rows))
    v3 = await imp(db, v3_path, embedder)
    t = v3.totals
    assert v3.status == "applied" and (t.added, t.reactivated, t.deactivated) == (1, 1, 1), v3.message
    changed = {e["code"]: e for e in await entries(db, "patient_dental")}
    assert changed["Q001"]["embedding"] != before[0]["embedding"] and not changed["Q002"]["urgent"]
    assert not changed["Q004"]["active"] and changed["Q006"]["active"] and not changed["Q003"]["sample"]

    # the Vietnamese label works
    undone = await undo_last_import(db, "Bệnh nhân nha khoa", requested_by="test")
    assert undone.ok and undone.undone is not None and undone.undone.import_id == v3.import_id
    assert (undone.restored, undone.removed) == (6, 1)
    assert undone.message_vi.startswith(f"Đã hoàn tác lần nhập #{v3.import_id} (tệp v3.xlsx")
    assert await entries(db, "patient_dental") == before
    assert await entries(db, "doctor_dental") == doctor_before

    # The KB moved on, so the same file applies again (not an "identical import" no-op); undone again.
    again = await imp(db, v3_path, embedder)
    assert again.status == "applied" and again.totals.added == 1, again.message
    assert (await undo_last_import(db, "patient_dental", requested_by="test")).ok
    assert await entries(db, "patient_dental") == before

    # Undoing again steps back: v2, then v1 (whose entries it created are removed), then nothing is left.
    second = await undo_last_import(db, "patient_dental", requested_by="test")
    assert second.undone is not None and second.undone.import_id == v2.import_id
    assert await entries(db, "patient_dental") == after_v1
    third = await undo_last_import(db, "patient_dental", requested_by="test")
    assert third.undone is not None and third.undone.import_id == v1.import_id and third.removed == 6
    assert await entries(db, "patient_dental") == []
    assert await entries(db, "doctor_dental") == doctor_before  # v1 is undone for this role only
    versions = await kb.version(db, "patient_dental")
    nothing = await undo_last_import(db, "patient_dental", requested_by="test")
    assert not nothing.ok and "không có lần nhập nào để hoàn tác" in nothing.message_vi
    assert await kb.version(db, "patient_dental") == versions
    unknown = await undo_last_import(db, "khong_co", requested_by="test")
    assert unknown.role is None and "Không tìm thấy vai trò “khong_co”" in unknown.message_vi


# --- the template's example row -------------------------------------------------------------------------------


async def test_template_example_row_never_reaches_the_kb(db, db_url, tmp_path):
    template = tmp_path / "mau.xlsx"
    proc = await asyncio.to_thread(_medbot, db_url, "import", "--template", str(template))
    assert proc.returncode == 0 and template.exists()
    wb = openpyxl.load_workbook(template)
    assert [c.value for c in wb["KB"][2]][2] == "VD-MẪU"

    # The template as written: nothing to import, and the report says the example row was skipped.
    proc = await asyncio.to_thread(_medbot, db_url, "import", str(template), "--role", "patient_dental")
    assert proc.returncode == 1, proc.stdout
    assert "example_row" in proc.stdout and "KB" in proc.stdout and "C (MÃ SỐ)" in proc.stdout
    assert await db.fetchval("SELECT count(*) FROM kb_entries") == 0

    # Filled in below the example, which is left in place: only the clinic's row is imported.
    wb["KB"].append(
        ["Răng khôn", "", "NK-050", "Răng khôn mọc lệch có cần nhổ không?", "Nên chụp phim để quyết định."]
    )
    wb.save(template)
    report = await imp(db, template, role="patient_dental")
    assert report.ok and report.totals.added == 1, report.message
    assert [(p.code, p.sheet, p.row, p.column) for p in report.warnings if p.code == "example_row"] == [
        ("example_row", "KB", 2, "C")
    ]
    assert "Bỏ qua dòng ví dụ của tệp mẫu (mã “VD-MẪU”)" in report.warnings[0].message_vi
    assert report.warnings[0].location_vi() == "mau.xlsx, trang “KB”, dòng 2 (mã VD-MẪU), cột C (MÃ SỐ)"
    assert await active_codes(db, "patient_dental") == {"NK-050"}


async def test_old_template_example_does_not_overwrite_a_real_entry(db, tmp_path):
    """Templates written before the reserved code carried the example under NK-001: it is recognised by its
    text, skipped, and the clinic's real NK-001 is neither overwritten nor hidden."""
    real = entry("NK-001", "Răng bị ê buốt khi uống nước lạnh là bị gì?", "Câu trả lời thật của phòng khám.")
    assert (await imp(db, write_xlsx(tmp_path / "kb.xlsx", {"patient_dental": [real, entry("NK-002")]}))).ok
    before = await entries(db, "patient_dental")
    old_example = [
        "Răng nhạy cảm",
        "Ê buốt",
        "NK-001",
        EXAMPLE["question"],
        EXAMPLE["answer"],
        EXAMPLE["keywords"],
    ]
    old = write_xlsx(tmp_path / "mau_cu.xlsx", {"patient_dental": [old_example, entry("NK-002")]})
    report = await imp(db, old)
    assert report.ok and report.status == "unchanged", report.message
    assert [p.code for p in report.warnings] == ["example_row"]
    assert await entries(db, "patient_dental") == before
