"""KB import against the real database: formats, validation, upserts, no-ops, concurrency, the CLI."""

from __future__ import annotations

import asyncio
import codecs
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import asyncpg
import openpyxl

from engine.types import KBEntry
from kb_import.add import add_entries
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.readers import decode_bytes, sniff_delimiter
from tests.kb_files import HEADERS, entry, rows, write_csv, write_xlsx
from tests.medbot_cli import run_medbot

ROOT = Path(__file__).resolve().parents[2]


async def kb_state(db: asyncpg.Pool) -> list[tuple[Any, ...]]:
    """Everything an import may change, for before/after comparisons."""
    entries = await db.fetch(
        "SELECT role, code, question, answer, content_hash, active, embedding IS NOT NULL AS e "
        "FROM kb_entries ORDER BY role, code"
    )
    versions = await db.fetch("SELECT role, version FROM kb_versions ORDER BY role")
    return [tuple(r) for r in entries] + [tuple(v) for v in versions]


async def imp(db: asyncpg.Pool, *files: Any, embedder: Any = None, **opts: Any) -> ImportReport:
    return await run_import(db, list(files), ImportOptions(**opts), embedder=embedder)


# --- formats ------------------------------------------------------------------------------------------------


async def test_three_role_sheets_import_into_three_roles(db, embedder, tmp_path):
    path = write_xlsx(
        tmp_path / "kb.xlsx",
        {
            "patient_dental": [entry("NK-001", "Răng khôn mọc lệch có cần nhổ không?")],
            "Bác sĩ nha khoa": [entry("BSNK-001", "Chỉ định nhổ răng khôn mọc lệch?")],
            "patient_diabetes": [entry("TD-001", "Đường huyết lúc đói bao nhiêu là bình thường?")],
        },
    )
    wb = openpyxl.load_workbook(path)
    wb.create_sheet("Ghi chú").append(["Tệp này gồm ba vai trò, mỗi trang một vai trò."])
    wb.save(path)
    report = await imp(db, path, embedder=embedder)
    assert report.ok and report.status == "applied", report.problems
    assert sorted(report.roles) == ["doctor_dental", "patient_dental", "patient_diabetes"]
    assert report.totals.added == 3 and report.embedded == 3
    rows_ = await db.fetch(
        "SELECT role, code, embedding_model, import_id FROM kb_entries WHERE embedding IS NOT NULL"
    )
    assert {(r["role"], r["code"]) for r in rows_} == {
        ("patient_dental", "NK-001"),
        ("doctor_dental", "BSNK-001"),
        ("patient_diabetes", "TD-001"),
    }
    assert all(r["import_id"] == report.import_id and r["embedding_model"] == embedder.name for r in rows_)
    versions = {r["role"]: r["version"] for r in await db.fetch("SELECT * FROM kb_versions")}
    assert versions == {role: counts.version for role, counts in report.roles.items()}
    assert set(versions) == {"doctor_dental", "patient_dental", "patient_diabetes"}
    rec = await db.fetchrow("SELECT * FROM kb_imports WHERE id = $1", report.import_id)
    assert rec["status"] == "applied" and rec["counts"]["added"] == 3 and rec["sha256"]
    assert any(p.code == "sheet_skipped" and p.sheet == "Ghi chú" for p in report.warnings)


def _variant_files(tmp_path: Path) -> dict[str, Path]:
    data = rows(3)
    spaced = ["ĐỀ  MỤC", "CHỦ  ĐỀ  CON", "MÃ  SỐ", "CÂU  HỎI", "CÂU  TRẢ    LỜI", "keywords"]
    plain = ["DEMUC", "CHUDECON", "MASO", "CAUHOI", "CAUTRALOI", "keywords", "GIAITHICH"]
    english = ["Topic", "Subtopic", "Code", "Question", "Answer", "Keywords", "Explanation"]
    stt = ["STT", "Đề mục", "Câu hỏi", "Câu trả lời", "Từ khóa"]
    stt_rows = [[i, "Chung", f"Câu hỏi {i}?", f"Trả lời {i}.", "a; b"] for i in (1, 2, 3)]
    with_expl = [[*r, f"Giải thích {r[2]}"] for r in data]
    files = {
        "doubled spaces": write_xlsx(tmp_path / "spaced.xlsx", {"patient_dental": data}, spaced),
        "no diacritics + GIAITHICH": write_xlsx(
            tmp_path / "plain.xlsx", {"patient_dental": with_expl}, plain
        ),
        "english": write_csv(tmp_path / "english.csv", with_expl, english),
        "STT": write_xlsx(tmp_path / "stt.xlsx", {"patient_dental": stt_rows}, stt),
        "BOM csv": write_csv(tmp_path / "bom.csv", data, encoding="utf-8-sig"),
        "semicolon csv": write_csv(tmp_path / "semi.csv", data, delimiter=";"),
        "tab utf-16 (Excel Unicode text)": write_csv(
            tmp_path / "u16.txt", data, encoding="utf-16", delimiter="\t"
        ),
    }
    titled = tmp_path / "titled.xlsx"  # a title line and a blank line above the table
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    ws.append(["KHO KIẾN THỨC NHA KHOA – PHÒNG KHÁM A"])
    ws.append([])
    ws.append(HEADERS)
    for r in data:
        ws.append(r)
    wb.save(titled)
    files["title row above"] = titled
    return files


async def test_header_variants_all_import(db, tmp_path):
    for label, path in _variant_files(tmp_path).items():
        report = await imp(db, path, role="patient_dental")
        assert report.ok, (label, [str(p) for p in report.problems])
        assert report.rows_valid == 3, label
        codes = await db.fetch(
            "SELECT code, question, explanation FROM kb_entries WHERE active ORDER BY code"
        )
        assert len(codes) == 3, label
        if label == "STT":
            assert [c["code"] for c in codes] == ["1", "2", "3"]
            assert codes[0]["question"] == "Câu hỏi 1?"
        else:
            assert codes[0]["question"] == "Câu hỏi Q001?", label
        if "GIAITHICH" in label or label == "english":
            assert codes[0]["explanation"] == "Giải thích Q001", label
        await db.execute("TRUNCATE kb_entries, kb_versions, kb_imports CASCADE")


async def test_topic_fills_down_and_keywords_split(db, tmp_path):
    data = [
        ["Sâu răng", "", "", "", "", ""],  # a section heading row
        ["", "", "S1", "Sâu răng là gì?", "Là bệnh…", "sâu răng; sau rang;  lỗ sâu ;sâu răng"],
        ["", "", "S2", "Trám răng có đau không?", "Thường không…", "trám, tram rang"],
    ]
    report = await imp(db, write_xlsx(tmp_path / "f.xlsx", {"patient_dental": data}))
    assert report.ok, report.problems
    got = {r["code"]: r for r in await db.fetch("SELECT code, topic, keywords, search_text FROM kb_entries")}
    assert got["S1"]["topic"] == got["S2"]["topic"] == "Sâu răng"
    assert got["S1"]["keywords"] == ["sâu răng", "sau rang", "lỗ sâu"]
    assert got["S2"]["keywords"] == ["trám", "tram rang"]
    assert "sau rang la gi" in got["S1"]["search_text"]


# --- malformed inputs ---------------------------------------------------------------------------------------


def _malformed(tmp_path: Path, kind: str) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """(file, import options, expected problem fields) for one kind of bad input."""
    good = rows(3)
    if kind == "missing_answer":
        data = [*good[:1], entry("Q002", answer=""), *good[2:]]
        return (
            write_xlsx(tmp_path / "a.xlsx", {"patient_dental": data}),
            {},
            dict(sheet="patient_dental", row=3, column="E", header="CÂU TRẢ LỜI", entry_code="Q002"),
        )
    if kind == "missing_question":
        data = [*good[:2], entry("Q003", question="")]
        return (
            write_xlsx(tmp_path / "q.xlsx", {"patient_dental": data}),
            {},
            dict(row=4, column="D", entry_code="Q003"),
        )
    if kind == "missing_code":
        data = [*good[:1], entry("")]
        return (
            write_csv(tmp_path / "c.csv", data),
            {"role": "patient_dental"},
            dict(sheet=None, row=3, column="C", entry_code=""),
        )
    if kind == "duplicate_code":
        data = [*good, entry("Q002", "Một câu khác?")]
        return (
            write_xlsx(tmp_path / "d.xlsx", {"patient_dental": data}),
            {},
            dict(row=5, column="C", entry_code="Q002"),
        )
    if kind == "too_long":
        data = [*good[:2], entry("Q003", answer="Rất dài. " * 1200)]
        return (
            write_xlsx(tmp_path / "l.xlsx", {"patient_dental": data}),
            {},
            dict(row=4, column="E", entry_code="Q003"),
        )
    if kind == "excel_error":
        data = [*good[:1], entry("Q002", answer="#N/A")]
        return (
            write_xlsx(tmp_path / "e.xlsx", {"patient_dental": data}),
            {},
            dict(row=3, column="E", entry_code="Q002"),
        )
    if kind == "code_excel_error":  # the code cell itself is unreadable: the row has no code to show
        data = [*good[:1], entry("#REF!")]
        return (
            write_xlsx(tmp_path / "ce.xlsx", {"patient_dental": data}),
            {},
            dict(row=3, column="C", entry_code=""),
        )
    if kind == "formula_no_value":
        data = [*good[:2], entry("Q003", answer='=CONCATENATE("a","b")')]
        return (
            write_xlsx(tmp_path / "f.xlsx", {"patient_dental": data}),
            {},
            dict(row=4, column="E", entry_code="Q003"),
        )
    if kind == "control_chars":
        data = [*good[:1], entry("Q002", question="Răng \x07ê buốt?")]
        return (
            write_csv(tmp_path / "x.csv", data),
            {"role": "patient_dental"},
            dict(row=3, column="D", entry_code="Q002"),
        )
    if kind == "unknown_role":
        headers = [*HEADERS, "VAI TRÒ"]
        data = [[*good[0], "patient_dental"], [*good[1], "bệnh nhân tim mạch"]]
        return (
            write_xlsx(tmp_path / "r.xlsx", {"Sheet1": data}, headers),
            {},
            dict(row=3, column="G", entry_code="Q002"),
        )
    if kind == "missing_role":
        return write_xlsx(tmp_path / "m.xlsx", {"Sheet1": good}), {}, dict(sheet="Sheet1", severity="fatal")
    if kind == "missing_column":
        headers = ["ĐỀ MỤC", "CHỦ ĐỀ CON", "MÃ SỐ", "CÂU HỎI", "GHI CHÚ", "keywords"]
        return (
            write_xlsx(tmp_path / "h.xlsx", {"patient_dental": good}, headers),
            {},
            dict(row=1, severity="fatal"),
        )
    if kind == "empty_file":
        path = tmp_path / "empty.csv"
        path.write_bytes(b"")
        return path, {"role": "patient_dental"}, dict(severity="fatal")
    if kind == "empty_workbook":
        return (
            write_xlsx(tmp_path / "blank.xlsx", {"patient_dental": []}, headers=[]),
            {},
            dict(severity="fatal"),
        )
    if kind == "not_a_spreadsheet":
        path = tmp_path / "photo.xlsx"
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 10)
        return path, {}, dict(severity="fatal")
    if kind == "zip_not_xlsx":
        path = tmp_path / "report.xlsx"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("word/document.xml", "<w:document/>")
        return path, {}, dict(severity="fatal")
    raise AssertionError(kind)


MALFORMED = {
    "missing_answer": "missing_answer",
    "missing_question": "missing_question",
    "missing_code": "missing_code",
    "duplicate_code": "duplicate_code",
    "too_long": "too_long",
    "excel_error": "excel_error",
    "code_excel_error": "excel_error",
    "formula_no_value": "formula_no_value",
    "control_chars": "control_chars",
    "unknown_role": "unknown_role",
    "missing_role": "missing_role",
    "missing_column": "missing_column",
    "empty_file": "empty_file",
    "empty_workbook": "empty_file",
    "not_a_spreadsheet": "not_a_spreadsheet",
    "zip_not_xlsx": "not_a_spreadsheet",
}


async def test_malformed_inputs_are_rejected_and_change_nothing(db, tmp_path):
    baseline = await imp(db, write_xlsx(tmp_path / "base.xlsx", {"patient_dental": rows(4, "B")}))
    assert baseline.ok
    before = await kb_state(db)
    for kind, code in MALFORMED.items():
        path, options, where = _malformed(tmp_path, kind)
        report = await imp(db, path, **options)
        assert not report.ok and report.status == "rejected", kind
        hits = [p for p in report.problems if p.code == code]
        assert hits, (kind, [str(p) for p in report.problems])
        problem = hits[0]
        assert problem.file == path.name and problem.message and problem.message_vi, kind
        for key, value in where.items():
            assert getattr(problem, key) == value, (kind, key, problem)
        # a row's problem names the entry's code (or says the row has none); a file's or sheet's names none
        assert problem.entry_code == where.get("entry_code"), (kind, problem)
        place = problem.location_vi()
        if problem.entry_code:
            assert f"dòng {problem.row} (mã {problem.entry_code})" in place, (kind, place)
        elif problem.entry_code == "":
            assert f"dòng {problem.row} (không có mã số)" in place, (kind, place)
        else:
            assert "mã" not in place, (kind, place)
        assert await kb_state(db) == before, kind
        rec = await db.fetchrow("SELECT status, errors FROM kb_imports WHERE id = $1", report.import_id)
        assert rec["status"] == "rejected" and any(e["code"] == code for e in rec["errors"]), kind


async def test_bad_role_option_is_fatal(db, tmp_path):
    report = await imp(db, write_csv(tmp_path / "x.csv", rows(2)), role="Bệnh nhân!")
    assert not report.ok and report.problems[0].code == "unknown_role"


async def test_skip_invalid_imports_valid_rows_and_keeps_invalid_codes(db, tmp_path):
    first = await imp(db, write_xlsx(tmp_path / "v1.xlsx", {"patient_dental": rows(3)}))
    assert first.ok
    data = [*rows(2), entry("Q003", answer="")]  # Q003 now invalid: skipped, not deactivated
    report = await imp(db, write_xlsx(tmp_path / "v2.xlsx", {"patient_dental": data}), skip_invalid=True)
    assert report.ok and report.status == "unchanged", report.message
    assert report.totals.skipped == 1 and report.totals.deactivated == 0
    assert [p.code for p in report.errors] == ["missing_answer"]
    assert await db.fetchval("SELECT count(*) FROM kb_entries WHERE active") == 3
    all_bad = [entry("Q010", answer="")]
    report = await imp(db, write_xlsx(tmp_path / "v3.xlsx", {"patient_dental": all_bad}), skip_invalid=True)
    assert not report.ok and report.status == "rejected"


async def test_dry_run_writes_no_entries_but_is_recorded(db, tmp_path):
    report = await imp(db, write_xlsx(tmp_path / "d.xlsx", {"patient_dental": rows(3)}), dry_run=True)
    assert report.ok and report.status == "dry_run" and report.totals.added == 3
    assert await db.fetchval("SELECT count(*) FROM kb_entries") == 0
    assert await db.fetchval("SELECT count(*) FROM kb_versions") == 0
    rec = await db.fetchrow("SELECT status, dry_run, counts FROM kb_imports")
    assert rec["status"] == "dry_run" and rec["dry_run"] and rec["counts"]["added"] == 3


async def test_blank_question_only_when_allowed(db, embedder, tmp_path):
    data = [entry("Q001"), entry("Q002", question="", answer="Nên chải răng hai lần mỗi ngày.")]
    path = write_xlsx(tmp_path / "b.xlsx", {"patient_dental": data})
    assert not (await imp(db, path)).ok
    report = await imp(db, path, allow_blank_question=True, embedder=embedder)
    assert report.ok and report.totals.added == 2
    vec = await db.fetchval("SELECT embedding FROM kb_entries WHERE code = 'Q002'")
    assert vec is not None


# --- re-imports -----------------------------------------------------------------------------------------------


async def test_an_entry_added_by_hand_and_then_imported_as_written_counts_as_unchanged(
    db, embedder, tmp_path
):
    """An admin's /kb_add entry is stored as an import stores it: when the doctors' spreadsheet later carries
    the same row, the import reports it unchanged and keeps it, and its search text is the import's."""
    row = entry("NK-010", "Sâu răng có tự khỏi không?", "Không, cần trám.")
    added = KBEntry(id=0, role="patient_dental", code="NK-010", topic=row[0], subtopic=row[1], question=row[3],
                    answer=row[4], keywords=[k.strip() for k in row[5].split(";")])  # fmt: skip
    await add_entries(db, embedder, [added])
    before = await db.fetchrow("SELECT id, search_text FROM kb_entries WHERE code = 'NK-010'")
    assert "sau rang co tu khoi khong" in before["search_text"] and "tu khoa nk-010" in before["search_text"]

    report = await imp(db, write_xlsx(tmp_path / "kb.xlsx", {"patient_dental": [row]}), embedder=embedder)
    t = report.totals
    assert report.ok and (t.added, t.updated, t.unchanged) == (0, 0, 1), report.message
    after = await db.fetchrow("SELECT id, search_text, active FROM kb_entries WHERE code = 'NK-010'")
    assert after["active"] and (after["id"], after["search_text"]) == (before["id"], before["search_text"])


async def test_reimport_updates_only_changed_rows_and_reembeds_only_changed_text(db, embedder, tmp_path):
    v1 = rows(5)
    first = await imp(db, write_xlsx(tmp_path / "v1.xlsx", {"patient_dental": v1}), embedder=embedder)
    assert first.ok and first.totals.added == 5 and embedder.embedded_count == 5
    ids = {r["code"]: r["id"] for r in await db.fetch("SELECT id, code FROM kb_entries")}

    v2 = [list(r) for r in v1]
    v2[0][3] = "Câu hỏi đã sửa lại?"  # question changed: new embedding
    v2[1][4] = "Câu trả lời mới."  # answer changed: same embedding text, from the cache
    del v2[4]  # Q005 removed: deactivated
    v2.append(entry("Q006"))  # new
    second = await imp(db, write_xlsx(tmp_path / "v2.xlsx", {"patient_dental": v2}), embedder=embedder)
    t = second.totals
    assert second.status == "applied", second.message
    assert (t.added, t.updated, t.unchanged, t.deactivated) == (1, 2, 2, 1)
    assert embedder.embedded_count == 5 + 2 and second.embedded == 2 and second.embedding_cached == 1
    state = {
        r["code"]: r for r in await db.fetch("SELECT id, code, active, question, import_id FROM kb_entries")
    }
    assert not state["Q005"]["active"] and state["Q001"]["question"] == "Câu hỏi đã sửa lại?"
    assert state["Q003"]["import_id"] == first.import_id  # untouched rows keep their import id
    assert all(state[c]["id"] == i for c, i in ids.items())  # updated in place
    ver1, ver2 = first.roles["patient_dental"].version, second.roles["patient_dental"].version
    assert ver1 is not None and ver2 is not None and ver2 > ver1  # running bots see a new version, rebuild
    assert await db.fetchval("SELECT version FROM kb_versions WHERE role = 'patient_dental'") == ver2

    third = await imp(db, write_xlsx(tmp_path / "v3.xlsx", {"patient_dental": v1}), embedder=embedder)
    t = third.totals
    assert (t.added, t.updated, t.reactivated, t.deactivated) == (0, 2, 1, 1)
    assert await db.fetchval("SELECT active FROM kb_entries WHERE code = 'Q005'")
    assert embedder.embedded_count == 7  # everything was in the cache


async def test_identical_reimport_is_a_noop_that_says_so(db, embedder, tmp_path):
    path = write_xlsx(tmp_path / "kb.xlsx", {"patient_dental": rows(2)})
    first = await imp(db, path, embedder=embedder)
    again = await imp(db, path, embedder=embedder)
    assert again.ok and again.status == "unchanged" and again.noop_of == first.import_id
    assert "identical" in again.message and again.embedded == 0
    assert await db.fetchval("SELECT version FROM kb_versions") == first.roles["patient_dental"].version
    statuses = [r["status"] for r in await db.fetch("SELECT status FROM kb_imports ORDER BY id")]
    assert statuses == ["applied", "unchanged"]
    # once the KB moved on (another import of the role), the same file applies again
    other = write_xlsx(tmp_path / "other.xlsx", {"patient_dental": rows(1)})
    # hides 1 of 2: confirmed
    assert (await imp(db, other, embedder=embedder, force=True)).status == "applied"
    back = await imp(db, path, embedder=embedder)
    assert back.status == "applied" and back.totals.reactivated == 1


async def test_concurrent_imports_of_a_role_serialise(db, embedder, tmp_path):
    a = write_xlsx(tmp_path / "a.xlsx", {"patient_dental": rows(6, "A")})
    b = write_xlsx(tmp_path / "b.xlsx", {"patient_dental": rows(4, "B")})
    events: list[tuple[str, str]] = []

    def tracker(name: str):
        def progress(stage: str, done: int, total: int | None) -> None:
            if stage == "lock" and done and done == total:
                events.append((name, "locked"))
            if stage == "write" and done and done == total:
                events.append((name, "written"))

        return progress

    ra, rb = await asyncio.gather(
        # whichever comes second hides all of the first's entries: confirmed (force)
        run_import(db, [a], ImportOptions(force=True), embedder=embedder, progress=tracker("a")),
        run_import(db, [b], ImportOptions(force=True), embedder=embedder, progress=tracker("b")),
    )
    assert ra.ok and rb.ok
    first = events[0][0]
    second = "b" if first == "a" else "a"
    assert events == [(first, "locked"), (first, "written"), (second, "locked"), (second, "written")]
    expected = {f"{'A' if second == 'a' else 'B'}{i:03d}" for i in range(1, (6 if second == "a" else 4) + 1)}
    active = {r["code"] for r in await db.fetch("SELECT code FROM kb_entries WHERE active")}
    assert active == expected
    assert await db.fetchval("SELECT count(*) FROM kb_imports WHERE status = 'applied'") == 2
    va, vb = ra.roles["patient_dental"].version, rb.roles["patient_dental"].version
    assert va != vb  # each import moved the version on
    assert await db.fetchval("SELECT version FROM kb_versions") == max(va or 0, vb or 0)


# --- the command line -----------------------------------------------------------------------------------------


def _cli(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_medbot(db_url, "import", *args, timeout=180)


async def test_cli_rejects_malformed_files_with_location_and_exit_code(db, db_url, tmp_path):
    good = await imp(db, write_xlsx(tmp_path / "base.xlsx", {"patient_dental": rows(2, "B")}))
    assert good.ok
    before = await kb_state(db)
    path, _, _ = _malformed(tmp_path, "missing_answer")
    other, _, _ = _malformed(tmp_path, "not_a_spreadsheet")
    # Two independent runs, started together (each process spends seconds starting up, mostly on one core).
    proc, not_a_spreadsheet = await asyncio.gather(
        asyncio.to_thread(_cli, db_url, str(path)), asyncio.to_thread(_cli, db_url, str(other))
    )
    assert proc.returncode == 1, proc.stderr
    assert "BỊ TỪ CHỐI Tệp bị từ chối: có 1 lỗi" in proc.stdout and "missing_answer" in proc.stdout
    assert "a.xlsx" in proc.stdout and "patient_dental" in proc.stdout and "E (CÂU TRẢ LỜI)" in proc.stdout
    problem_rows = [line for line in proc.stdout.splitlines() if "missing_answer" in line]
    assert "mã số" in proc.stdout and len(problem_rows) == 1 and "Q002" in problem_rows[0], proc.stdout
    assert not_a_spreadsheet.returncode == 1 and "not_a_spreadsheet" in not_a_spreadsheet.stdout
    assert await kb_state(db) == before


async def test_cli_template_then_dry_run_and_import(db, db_url, tmp_path):
    template = tmp_path / "out" / "mau.xlsx"
    proc = await asyncio.to_thread(_cli, db_url, "--template", str(template))
    assert proc.returncode == 0 and template.exists()
    wb = openpyxl.load_workbook(template)
    assert wb.sheetnames == ["KB", "Hướng dẫn"]
    assert [c.value for c in wb["KB"][1]][:5] == ["ĐỀ MỤC", "CHỦ ĐỀ CON", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI"]
    # the example row is never imported (tests/integration/test_kb_import_safety.py): add the clinic's own row
    wb["KB"].append(["Răng khôn", "", "NK-050", "Răng khôn mọc lệch có cần nhổ không?", "Nên chụp phim."])
    wb.save(template)
    # Two runs that change nothing, started together (each process spends seconds starting up).
    proc, dry = await asyncio.gather(
        asyncio.to_thread(_cli, db_url, str(template)),  # no role: rejected
        asyncio.to_thread(_cli, db_url, str(template), "--role", "patient_dental", "--dry-run"),
    )
    assert proc.returncode == 1 and "missing_role" in proc.stdout
    assert dry.returncode == 0 and "KIỂM TRA THỬ Kiểm tra thử: sẽ thêm 1" in dry.stdout, (
        dry.stdout + dry.stderr
    )
    assert await db.fetchval("SELECT count(*) FROM kb_entries") == 0
    proc = await asyncio.to_thread(_cli, db_url, str(template), "--role", "patient_dental")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert await db.fetchval("SELECT count(*) FROM kb_entries WHERE embedding IS NOT NULL") == 1


def test_csv_encodings_are_detected(tmp_path):
    text = "MÃ SỐ;CÂU HỎI\nQ1;Răng ê buốt?\n"
    assert decode_bytes(codecs.BOM_UTF8 + text.encode())[0] == text
    assert decode_bytes(text.encode("utf-16"))[0] == text
    assert decode_bytes("MASO;CAUHOI\nQ1;café\n".encode("cp1258"))[1] == "cp1258"
    assert sniff_delimiter(text) == ";"
