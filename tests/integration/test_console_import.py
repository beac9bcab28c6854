"""The console's spreadsheet pages over HTTP against the real app and database: only admins may import,
undo or export (checked on the server); a rejected file changes nothing; the applied import needs the
session's CSRF token and its own upload; export then import is "unchanged"; undo restores the KB."""

from __future__ import annotations

import io
import os
import re
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import openpyxl

from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db.housekeeping import UPLOADS_KEEP_SECONDS
from tests.console_support import ADMIN, CLINICIAN, add_entry
from tests.integration.test_console import FORBIDDEN, csrf_of, log_in
from tests.integration.worker_helpers import make_ctx
from tests.kb_files import entry, rows, write_csv

ROLE = "patient_dental"
WORKING_TREE = Path(__file__).resolve().parents[2]
JOBS = {j.name: j for j in default_jobs()}


async def kb_state(db: asyncpg.Pool) -> list[tuple[Any, ...]]:
    found = await db.fetch("SELECT role, code, question, answer, active FROM kb_entries ORDER BY role, code")
    return [tuple(r) for r in found]


async def check(
    http: httpx.AsyncClient, name: str, data: bytes, role: str = ROLE, **fields: str
) -> httpx.Response:
    page = await http.get("/console/import")
    form = {"csrf_token": csrf_of(page.text), "role": role, **fields}
    return await http.post("/console/import", data=form, files={"file": (name, data)})


def token_of(page: str) -> str:
    found = re.search(r'name="token" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


async def apply(http: httpx.AsyncClient, report: httpx.Response, decision: str = "ok") -> httpx.Response:
    form = {"csrf_token": csrf_of(report.text), "token": token_of(report.text), "decision": decision}
    return await http.post("/console/import/apply", data=form)


def csv_bytes(tmp_path: Path, data: list[list[Any]], name: str = "kb.csv") -> bytes:
    return write_csv(tmp_path / name, data).read_bytes()


async def test_only_admins_reach_the_spreadsheet_pages(http: httpx.AsyncClient, tmp_path: Path) -> None:
    assert (await log_in(http, *CLINICIAN)).status_code == 303
    for path in ("/console/import", "/console/imports", f"/console/export?role={ROLE}"):
        page = await http.get(path)
        assert page.status_code == 403 and FORBIDDEN in page.text, path
    token = csrf_of((await http.get("/console/")).text)
    for path in ("/console/import", "/console/import/apply", "/console/imports/undo"):
        page = await http.post(
            path, data={"csrf_token": token, "role": ROLE}, files={"file": ("a.csv", b"x")}
        )
        assert page.status_code == 403 and FORBIDDEN in page.text, path


async def test_a_rejected_file_changes_nothing_and_says_why(
    http: httpx.AsyncClient, db: asyncpg.Pool, tmp_path: Path
) -> None:
    await add_entry(db, ROLE, "NK-001", "Đau răng khi uống nước lạnh?", "Súc miệng nước muối ấm.")
    before = await kb_state(db)
    await log_in(http, *ADMIN)
    bad = csv_bytes(tmp_path, [*rows(2), entry("Q003", answer="")])
    report = await check(http, "sai.csv", bad)
    assert report.status_code == 200
    assert "BỊ TỪ CHỐI" in report.text and "Tệp bị từ chối" in report.text
    assert re.search(r"<td class=\"num\">4</td>\s*<td>Q003</td>", report.text), report.text  # row 4, its code
    assert 'name="token"' not in report.text  # nothing to apply
    wrong = await check(http, "ghi-chu.txt", b"not a spreadsheet")
    assert wrong.status_code == 400 and "Chỉ nhận tệp bảng tính .xlsx hoặc .csv." in wrong.text
    huge = await check(http, "lon.csv", b"x" * (21 * 2**20))
    assert huge.status_code == 413 and "Tệp quá lớn: tối đa 20 MB" in huge.text
    assert await kb_state(db) == before


async def test_apply_needs_the_csrf_token_and_this_sessions_upload(
    http: httpx.AsyncClient, db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    await log_in(http, *ADMIN)
    report = await check(http, "moi.csv", csv_bytes(tmp_path, rows(3)))
    assert "sẽ thêm 3" in report.text
    token = token_of(report.text)
    refused = await http.post("/console/import/apply", data={"token": token, "decision": "ok"})
    assert refused.status_code == 403 and FORBIDDEN in refused.text
    async with httpx.AsyncClient(base_url=str(http.base_url), timeout=60) as other:  # another admin session
        await log_in(other, *ADMIN)
        csrf = csrf_of((await other.get("/console/import")).text)
        stolen = await other.post(
            "/console/import/apply", data={"csrf_token": csrf, "token": token, "decision": "ok"}
        )
        assert stolen.status_code == 410 and "Hãy tải tệp lên lại" in stolen.text
        for forged in ("../../etc", "x" * 32):
            page = await other.post(
                "/console/import/apply", data={"csrf_token": csrf, "token": forged, "decision": "ok"}
            )
            assert page.status_code == 410
    assert await kb_state(db) == []
    done = await apply(http, report)
    assert done.status_code == 303 and done.headers["Location"] == "/console/imports"
    assert len(await kb_state(db)) == 3
    again = await http.post(
        "/console/import/apply", data={"csrf_token": csrf_of(report.text), "token": token, "decision": "ok"}
    )
    assert again.status_code == 410  # used up


async def test_an_upload_waits_in_the_data_folder_and_the_worker_removes_it_a_day_later(
    http: httpx.AsyncClient, db: asyncpg.Pool, tmp_path: Path
) -> None:
    await log_in(http, *ADMIN)
    report = await check(http, "moi.csv", csv_bytes(tmp_path, rows(3)))
    token = token_of(report.text)
    uploads = tmp_path / "data" / "console_uploads"  # the console's MEDBOT_DATA_DIR (the ``http`` fixture)
    assert [p.name for p in uploads.iterdir()] == [token]
    assert not (WORKING_TREE / ".medbot" / "console_uploads" / token).exists()  # nothing in the working tree

    worker = make_ctx(db, tmp_path)  # ``medbot worker`` on the same data folder
    fresh = await run_job(worker, JOBS["cleanup"])
    assert fresh.status == "ok" and fresh.counts["console_uploads"] == 0
    assert (uploads / token).is_dir()

    day_ago = time.time() - UPLOADS_KEEP_SECONDS - 60
    os.utime(uploads / token, (day_ago, day_ago))
    old = await run_job(worker, JOBS["cleanup"])
    assert old.counts["console_uploads"] == 1
    assert list(uploads.iterdir()) == []
    gone = await apply(http, report)
    assert gone.status_code == 410 and "Hãy tải tệp lên lại" in gone.text
    assert await kb_state(db) == []


async def test_export_then_import_is_unchanged_and_undo_restores_the_kb(
    http: httpx.AsyncClient, db: asyncpg.Pool, tmp_path: Path
) -> None:
    await log_in(http, *ADMIN)
    first = await check(http, "v1.csv", csv_bytes(tmp_path, rows(3)))
    assert (await apply(http, first)).status_code == 303
    v1 = await kb_state(db)
    exported = await http.get(f"/console/export?role={ROLE}")
    assert exported.status_code == 200
    assert "attachment" in exported.headers["Content-Disposition"]
    sheet = openpyxl.load_workbook(io.BytesIO(exported.content))[ROLE]
    assert [c.value for c in sheet[1]][:5] == ["ĐỀ MỤC", "CHỦ ĐỀ CON", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI"]
    again = await check(http, "xuat.xlsx", exported.content, role="")
    assert "sẽ thêm 0, cập nhật 0" in again.text and "3 mục không đổi" in again.text
    kept = await apply(http, again)
    assert kept.status_code == 303
    assert "Không có thay đổi" in (await http.get(kept.headers["Location"])).text

    changed = [entry("Q001", answer="Câu trả lời mới."), *rows(2, start=2), entry("Q004")]
    second = await check(http, "v2.csv", csv_bytes(tmp_path, changed, "v2.csv"))
    assert (await apply(http, second)).status_code == 303
    assert await kb_state(db) != v1
    history = await http.get("/console/imports")
    assert "v2.csv" in history.text and "Hoàn tác lần nhập gần nhất" in history.text
    undone = await http.post(
        "/console/imports/undo", data={"csrf_token": csrf_of(history.text), "role": ROLE}
    )
    assert undone.status_code == 303
    assert "Đã hoàn tác lần nhập gần nhất" in (await http.get("/console/imports")).text
    assert await kb_state(db) == v1
    audit = {
        r["action"]: dict(r["detail"]) for r in await db.fetch("SELECT action, detail FROM console_audit")
    }
    assert audit["kb_export"]["entries"] == 3 and len(audit["kb_export"]["sha256"]) == 64
    assert audit["kb_undo"]["file"] == "v2.csv" and audit["kb_undo"]["removed"] == 1
    assert audit["kb_import"]["file"] == "v2.csv" and audit["kb_import"]["added"] == 1


async def test_a_file_hiding_a_large_share_needs_the_separate_confirmation(
    http: httpx.AsyncClient, db: asyncpg.Pool, tmp_path: Path
) -> None:
    await log_in(http, *ADMIN)
    full = await check(http, "day-du.csv", csv_bytes(tmp_path, rows(12)))
    assert (await apply(http, full)).status_code == 303
    before = await kb_state(db)
    partial = await check(http, "mot-phan.csv", csv_bytes(tmp_path, rows(2), "p.csv"))
    assert "sẽ ẩn 10/12 mục đang dùng" in partial.text
    assert 'value="force">Áp dụng và ẩn 10 mục' in partial.text and 'value="ok"' not in partial.text
    forged = await apply(http, partial, "ok")  # the plain import was not offered: the job refuses it
    assert forged.status_code == 409 and "Chưa nhập" in forged.text
    assert await kb_state(db) == before
    kept = await apply(http, await check(http, "mot-phan.csv", csv_bytes(tmp_path, rows(2), "p.csv")), "keep")
    assert kept.status_code == 303 and await kb_state(db) == before  # add and update only: nothing hidden
    forced = await apply(
        http, await check(http, "mot-phan.csv", csv_bytes(tmp_path, rows(2), "p.csv")), "force"
    )
    assert forced.status_code == 303
    assert await db.fetchval("SELECT count(*) FROM kb_entries WHERE active") == 2
