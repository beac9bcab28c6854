"""KB spreadsheets in the console, for admins: ``GET/POST /console/import`` (upload a .xlsx/.csv, see the dry
run of the real import job, then apply it), ``POST /console/import/apply``, ``GET /console/imports`` (the
import history and, per role, "undo the last import": ``POST /console/imports/undo``) and
``GET /console/export?role=…`` (a role's KB as the doctors' workbook, ``kb_import.export``).

The uploaded file waits for "Áp dụng" on the server, never in the browser: under
``MEDBOT_DATA_DIR/console_uploads/<token>/`` (``Settings.console_uploads_dir``), the token random (the only
thing the form carries) and bound to the staff member's session, the file kept under a fixed name with its
sha256 checked again before the import; an upload left there more than :data:`PENDING_TTL` is removed by the
next upload, and any left a day by the worker's hourly cleanup (``db.housekeeping``). The choices after the
dry run and the guard against hiding a large share of a role are the Telegram admin flow's
(``kb_import.decision``).
Imports (checks and applies), undos and exports are recorded in ``console_audit``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.web.console import security
from bot.web.console.kb import kbs
from bot.web.console.security import Handler, requires
from db import imports as import_log
from db import staff as staff_db
from engine.untrusted import file_sha256
from kb_import import decision
from kb_import.console_changes import KIND_VI
from kb_import.export import export_kb
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.limits import MAX_SPREADSHEET_BYTES
from kb_import.report import COUNT_COLUMNS, STATUS_LABELS, entry_cell
from kb_import.roles import role_label
from kb_import.undo import describe, undo_last_import, undoable

routes = web.RouteTableDef()

UPLOAD_PATH = f"{security.PREFIX}/import"
FORM_OVERHEAD = 64 * 1024  # the multipart envelope and the form's other fields
DRAIN_BYTES = 4 * MAX_SPREADSHEET_BYTES  # an oversized upload read and dropped to answer it, at most
DRAIN_SECONDS = 10.0
PENDING_TTL = 3600.0  # seconds an uploaded file waits for "Áp dụng"
TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")
SUFFIXES = (".xlsx", ".csv")
HISTORY_SIZE = 30
PROBLEMS_SHOWN = 100
DECISION_LABELS = {
    decision.IMPORT: "Áp dụng",
    decision.FORCE: "Áp dụng và ẩn {n} mục",
    decision.KEEP: "Chỉ thêm và cập nhật (không ẩn mục nào)",
    decision.KEEP_EDITS: "Chỉ nhập các mục chưa sửa trên trang quản trị",
}
# The plain import's label when it would undo changes made in the console.
IMPORT_UNDOING_LABEL = "Áp dụng cả tệp (bỏ {m} thay đổi trên trang quản trị)"

HISTORY_STATUS = {**STATUS_LABELS, "undo": "HOÀN TÁC"}

security.FLASHES.update(
    {
        "import_applied": "Đã nhập tệp vào kho kiến thức.",
        "import_applied_kept": "Đã nhập tệp vào kho kiến thức; các mục đã sửa trên trang quản trị được giữ "
        "nguyên.",
        "import_applied_duplicates": "Đã nhập tệp vào kho kiến thức. Một số mục có thể trùng nội dung nhau: "
        "danh sách ở cuối trang Kho kiến thức của chuyên khoa (chỉ là gợi ý, nên xem lại và gộp).",
        "import_unchanged": "Không có thay đổi: kho kiến thức đã giống hệt tệp.",
        "import_undone": "Đã hoàn tác lần nhập gần nhất; kho kiến thức đã trở lại như trước lần nhập đó.",
        "undo_nothing": "Không có lần nhập nào để hoàn tác; kho kiến thức không thay đổi.",
    }
)


@web.middleware
async def upload_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Let an upload to the import page be as large as a KB spreadsheet may be (aiohttp's default is 1 MB);
    a larger body gets the import page with the limit, in Vietnamese."""
    if request.method != "POST" or request.path != UPLOAD_PATH:
        return await handler(request)
    limit = MAX_SPREADSHEET_BYTES + FORM_OVERHEAD
    if (request.content_length or 0) > limit:
        return await _too_big_page(request)
    try:
        return await handler(request.clone(client_max_size=limit))
    except web.HTTPRequestEntityTooLarge:  # a body without (or lying about) its length
        return await _too_big_page(request)


async def _too_big_page(request: web.Request) -> web.StreamResponse:
    """The refusal of an oversized upload. A body up to DRAIN_BYTES is read and dropped (so the browser, still
    sending, gets the page); the connection of a larger one is closed."""
    if security.staff(request).role != "admin":
        response = await security.forbidden(request)
    else:
        response = await _form(request, error=_too_big_text(), status=413)
    drained = 0
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            while drained <= DRAIN_BYTES and (chunk := await request.content.readany()):
                drained += len(chunk)
    except TimeoutError:
        drained = DRAIN_BYTES + 1
    if drained > DRAIN_BYTES:
        response.force_close()
    return response


def _too_big_text() -> str:
    return f"Tệp quá lớn: tối đa {MAX_SPREADSHEET_BYTES // 2**20} MB. Kho kiến thức không thay đổi."


# --- the uploaded file, kept server-side between the dry run and "Áp dụng" ----------------------------------


@dataclass(frozen=True, slots=True)
class Pending:
    token: str
    folder: Path
    name: str  # the file's name as uploaded (shown, and recorded in kb_imports)
    sha256: str
    role: str | None
    skip_invalid: bool
    confirm: bool  # the dry run offered the confirmation to hide a large share of a role

    @property
    def path(self) -> Path:
        return self.folder / ("upload" + Path(self.name).suffix.lower())


def _uploads(request: web.Request) -> Path:
    return security.settings(request).console_uploads_dir


def _session_key(request: web.Request) -> str:
    """Binds a pending upload to the session that made it (the session's CSRF token never leaves it)."""
    return hashlib.sha256(security.session(request).csrf_token.encode()).hexdigest()


def _sweep(root: Path) -> None:
    """Remove the uploads that waited longer than PENDING_TTL."""
    if not root.is_dir():
        return
    cutoff = time.time() - PENDING_TTL
    for folder in root.iterdir():
        try:
            if folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def _keep_upload(request: web.Request, data_file: Any, name: str, role: str | None, skip: bool) -> Pending:
    root = _uploads(request)
    _sweep(root)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(24)
    folder = root / token
    folder.mkdir(mode=0o700)
    pending = Pending(token, folder, name, "", role, skip, False)
    with pending.path.open("wb") as out:
        shutil.copyfileobj(data_file, out)
    return replace(pending, sha256=file_sha256(pending.path))


def _save_meta(request: web.Request, pending: Pending) -> None:
    meta = {
        "staff_id": security.staff(request).id,
        "session": _session_key(request),
        "name": pending.name,
        "sha256": pending.sha256,
        "role": pending.role,
        "skip_invalid": pending.skip_invalid,
        "confirm": pending.confirm,
    }
    (pending.folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def _load_pending(request: web.Request, token: str) -> Pending | None:
    """The upload ``token`` names, if it is this session's, still waiting and intact; else None."""
    if not TOKEN.match(token):
        return None
    folder = _uploads(request) / token
    try:
        if folder.stat().st_mtime < time.time() - PENDING_TTL:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if meta.get("staff_id") != security.staff(request).id or meta.get("session") != _session_key(request):
        return None
    pending = Pending(token, folder, str(meta["name"]), str(meta["sha256"]), meta.get("role"),
                      bool(meta.get("skip_invalid")), bool(meta.get("confirm")))  # fmt: skip
    try:
        if file_sha256(pending.path) != pending.sha256:
            return None
    except OSError:
        return None
    return pending


def _claim(pending: Pending) -> Pending | None:
    """Take the upload for one "Áp dụng" (moved out of the tokens' reach), or None when another request —
    a double click — took it first."""
    claimed = pending.folder.with_name(f".applying-{pending.token}")
    try:
        pending.folder.rename(claimed)
    except OSError:
        return None
    return replace(pending, folder=claimed)


def _drop(pending: Pending) -> None:
    shutil.rmtree(pending.folder, ignore_errors=True)


# --- pages --------------------------------------------------------------------------------------------------


async def _form(
    request: web.Request, *, error: str | None = None, role: str = "", skip: bool = False, status: int = 200
) -> web.Response:
    context = {
        "kbs": kbs(),
        "max_mb": MAX_SPREADSHEET_BYTES // 2**20,
        "error": error,
        "role": role,
        "skip": skip,
    }
    return await security.render(request, "import.html", context, status=status)


def _report_context(report: ImportReport) -> dict[str, Any]:
    labels = {k.key: k.label for k in kbs()}
    rows = [(labels.get(role) or role_label(role), c) for role, c in sorted(report.roles.items())]
    console_changes = [
        (labels.get(role) or role_label(role), changes)
        for role in sorted(report.roles)
        if (changes := report.console_changes_of(role))
    ]
    return {
        "report": report,
        "status_label": STATUS_LABELS[
            report.status if report.ok or report.status == "failed" else "rejected"
        ],
        "count_columns": COUNT_COLUMNS,
        "role_rows": rows,
        "totals": report.totals if len(rows) > 1 else None,
        "errors": report.errors[:PROBLEMS_SHOWN],
        "warnings": report.warnings[:PROBLEMS_SHOWN],
        "more_errors": max(0, len(report.errors) - PROBLEMS_SHOWN),
        "more_warnings": max(0, len(report.warnings) - PROBLEMS_SHOWN),
        "entry_cell": entry_cell,
        "console_changes": console_changes,
        "kind_vi": KIND_VI,
        "keep_edits_label": None,
    }


def _requested_by(request: web.Request) -> str:
    return f"console:{security.staff(request).email}"


def _known_roles(request: web.Request) -> list[str]:
    return list(security.services(request).chat.roles)


async def _audit(request: web.Request, action: str, subject: str, detail: dict[str, Any]) -> None:
    await staff_db.audit(security.pool(request), security.staff(request).id, action, subject, detail)


def _counts(report: ImportReport) -> dict[str, Any]:
    t = report.totals
    return {
        "status": report.status,
        "import_id": report.import_id,
        "roles": sorted(report.roles),
        "added": t.added,
        "updated": t.updated,
        "unchanged": t.unchanged,
        "reactivated": t.reactivated,
        "deactivated": t.deactivated,
        "skipped": t.skipped,
        "errors": len(report.errors),
        "console_changes": len(report.console_changes),
        "kept_console_edits": report.kept_console_edits,
    }


@routes.get("/import")
@requires("admin")
async def import_form(request: web.Request) -> web.Response:
    return await _form(request)


@routes.post("/import")
@requires("admin")
async def import_check(request: web.Request) -> web.Response:
    """The dry run of the uploaded file; the file waits on the server for "Áp dụng"."""
    form = await request.post()
    role = str(form.get("role", ""))
    skip = form.get("skip_invalid") == "1"
    if role and role not in {k.key for k in kbs()}:
        return await _form(request, error="Chuyên khoa không hợp lệ; hãy chọn lại.", skip=skip, status=400)
    upload = form.get("file")
    if not isinstance(upload, web.FileField) or not upload.filename:
        return await _form(request, error="Hãy chọn một tệp .xlsx hoặc .csv để nhập.", role=role, skip=skip,
                           status=400)  # fmt: skip
    name = Path(upload.filename.replace("\\", "/")).name.strip()[:200] or "tep.xlsx"
    if not name.lower().endswith(SUFFIXES):
        return await _form(request, error="Chỉ nhận tệp bảng tính .xlsx hoặc .csv.", role=role, skip=skip,
                           status=400)  # fmt: skip
    pending = await asyncio.to_thread(_keep_upload, request, upload.file, name, role or None, skip)
    if pending.path.stat().st_size > MAX_SPREADSHEET_BYTES:
        _drop(pending)
        return await _form(request, error=_too_big_text(), role=role, skip=skip, status=413)
    options = ImportOptions(role=pending.role, dry_run=True, skip_invalid=skip, requested_by=_requested_by(request),
                            known_roles=_known_roles(request))  # fmt: skip
    report = await run_import(security.pool(request), [(pending.path, name)], options)
    await _audit(
        request, "kb_import_check", name, {"file": name, "sha256": pending.sha256, **_counts(report)}
    )
    offered: list[str] = []
    if report.ok:
        hidden = sum(h.hidden for h in report.hides)
        offered = decision.choices(
            needs_confirmation=report.needs_confirmation,
            hidden=hidden,
            console_changes=len(report.console_changes),
        )
        pending = replace(pending, confirm=report.needs_confirmation)
        _save_meta(request, pending)
    else:
        _drop(pending)  # nothing to apply: the file is not kept
    hidden = sum(h.hidden for h in report.hides)
    labels = dict(DECISION_LABELS)
    if report.console_changes:
        labels[decision.IMPORT] = IMPORT_UNDOING_LABEL
    buttons = [(d, labels[d].format(n=hidden, m=len(report.console_changes))) for d in offered]
    context = {**_report_context(report), "name": name, "token": pending.token, "buttons": buttons,
               "keep_edits_label": labels[decision.KEEP_EDITS] if decision.KEEP_EDITS in offered else None}  # fmt: skip
    return await security.render(request, "import_report.html", context)


@routes.post("/import/apply")
@requires("admin")
async def import_apply(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    found = _load_pending(request, str(form.get("token", "")))
    pending = _claim(found) if found is not None else None
    if pending is None:
        return await _form(request, error="Tệp đã kiểm tra không còn (quá hạn hoặc đã nhập). Hãy tải tệp lên lại.",
                           status=410)  # fmt: skip
    flags = decision.import_flags(str(form.get("decision", "")), confirm_offered=pending.confirm)
    if flags is None:
        return await _form(request, error="Lựa chọn không hợp lệ; hãy tải tệp lên lại.", status=400)
    force, keep_missing, keep_edits = flags
    options = ImportOptions(role=pending.role, skip_invalid=pending.skip_invalid, force=force,
                            keep_missing=keep_missing, keep_console_edits=keep_edits,
                            requested_by=_requested_by(request), known_roles=_known_roles(request))  # fmt: skip
    try:
        report = await run_import(
            security.pool(request),
            [(pending.path, pending.name)],
            options,
            embedder=security.services(request).embedder,
        )
    finally:
        _drop(pending)
    await _audit(request, "kb_import", pending.name, {"file": pending.name, "sha256": pending.sha256,
                                                       "force": force, "keep_missing": keep_missing,
                                                       "keep_console_edits": keep_edits,
                                                       **_counts(report)})  # fmt: skip
    if report.ok:
        flash = "import_unchanged"
        if report.status == "applied":
            flash = "import_applied_kept" if report.kept_console_edits else "import_applied"
            if report.duplicates and not report.kept_console_edits:
                flash = "import_applied_duplicates"  # the pairs are listed on each role's KB page
        raise security.redirect(request, "/console/imports", flash)
    context = {**_report_context(report), "name": pending.name, "token": "", "buttons": []}
    return await security.render(request, "import_report.html", context, status=409)


@dataclass(frozen=True, slots=True)
class HistoryRow:
    id: int
    at: datetime
    who: str
    filename: str
    status: str
    roles: str
    counts: dict[str, Any]


def _history(rows: list[Any], labels: dict[str, str]) -> list[HistoryRow]:
    return [
        HistoryRow(
            id=int(r["id"]),
            at=r["created_at"],
            who=(r["requested_by"] or "(không rõ)").removeprefix("console:"),
            filename=r["filename"],
            status=HISTORY_STATUS["dry_run" if r["dry_run"] else r["status"]],
            roles=", ".join(labels.get(role, role) for role in r["roles"] or []),
            counts=dict(r["counts"] or {}),
        )
        for r in rows
    ]


@routes.get("/imports")
@requires("admin")
async def history(request: web.Request) -> web.Response:
    pool = security.pool(request)
    labels = {k.key: k.label for k in kbs()}
    rows = _history(await import_log.recent(pool, HISTORY_SIZE), labels)
    undo = [(u, labels.get(u.role, u.role), describe(u)[1]) for u in await undoable(pool)]
    return await security.render(request, "imports.html", {"rows": rows, "undo": undo, "kbs": kbs()})


@routes.post("/imports/undo")
@requires("admin")
async def undo(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    role = str(form.get("role", ""))
    if role not in {u.role for u in await undoable(security.pool(request))}:
        raise security.redirect(request, "/console/imports", "undo_nothing")
    result = await undo_last_import(security.pool(request), role, requested_by=_requested_by(request),
                                    extra_roles=_known_roles(request))  # fmt: skip
    if not result.ok or result.undone is None:
        raise security.redirect(request, "/console/imports", "undo_nothing")
    await _audit(request, "kb_undo", result.undone.filename, {
        "role": role, "file": result.undone.filename, "sha256": result.undone.sha256,
        "import_id": result.undone.import_id, "undo_id": result.undo_id,
        "restored": result.restored, "removed": result.removed})  # fmt: skip
    raise security.redirect(request, "/console/imports", "import_undone")


@routes.get("/export")
@requires("admin")
async def export(request: web.Request) -> web.StreamResponse:
    role = request.query.get("role", "")
    if role not in {k.key for k in kbs()}:
        return await security.render(request, "not_found.html", status=404)
    pool = security.pool(request)
    with tempfile.TemporaryDirectory(prefix="medbot-export-") as tmp:
        path = Path(tmp) / f"{role}.xlsx"
        counts = await export_kb(pool, path, [role])
        data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    stamp = datetime.now(UTC).astimezone().strftime("%Y%m%d-%H%M")
    filename = f"kho-kien-thuc-{role}-{stamp}.xlsx"
    await _audit(request, "kb_export", filename, {"role": role, "file": filename, "sha256": sha,
                                                   "entries": counts.get(role, 0)})  # fmt: skip
    return web.Response(
        body=data,
        content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
