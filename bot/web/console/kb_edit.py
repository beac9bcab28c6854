"""KB curation by the clinic's doctors (clinicians and admins both): ``GET/POST /console/kb/{id}/edit``
(edit an entry), ``GET/POST /console/kb/new?role=…&question=…`` (a new entry, prefilled from the query
string: the unanswered-questions page links here), ``POST /console/kb/{id}/hide`` and ``/restore`` (the bot
stops / starts using it), ``GET /console/kb/{id}/history`` (every version, who and when, a field-level
diff) and ``POST /console/kb/{id}/history/{version}/revert`` (put an older version back).

The work is ``kb_import.curate``'s (validation as for a spreadsheet row, history, KB version bump, one
transaction); every change is also in ``console_audit``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aiohttp import web

from bot.web.console import security
from bot.web.console.kb import kbs
from bot.web.console.security import requires
from db import kb_browse, kb_edit
from db import staff as staff_db
from kb_import import curate
from kb_import.validate import MAX_LENGTH

routes = web.RouteTableDef()

FIELD_LABELS = {
    "topic": "Chủ đề",
    "subtopic": "Chủ đề con",
    "question": "Câu hỏi",
    "answer": "Câu trả lời",
    "keywords": "Từ khóa",
    "explanation": "Giải thích",
    "urgent": "Khẩn cấp",
    "active": "Trạng thái",
}
KIND_LABELS = {
    "edit": "Sửa nội dung",
    "create": "Tạo mục mới",
    "hide": "Ẩn mục",
    "restore": "Hiện lại mục",
    "revert": "Khôi phục phiên bản cũ",
}
CONFLICT = (
    "Mục này vừa được người khác thay đổi sau khi bạn mở trang sửa, nên thay đổi của bạn CHƯA được lưu "
    "(để không ghi đè lên thay đổi của họ). Nội dung bạn đã gõ vẫn còn dưới đây: hãy mở lại bản mới nhất, "
    "so sánh rồi sửa lại."
)
EMBED_FAILED = "Không xử lý được nội dung mới lúc này (mô hình tìm kiếm không phản hồi). Chưa có gì thay đổi; vui lòng thử lại sau."
ROLE_UNKNOWN = "Kho kiến thức này không tồn tại."
ROLE_NEEDS_PICK = "Hãy chọn kho kiến thức (chuyên khoa) cho mục mới."


def _entry_id(request: web.Request) -> int:
    return int(request.match_info["id"])


def _typed(form: Any) -> dict[str, str]:
    """The content fields as typed in the form (urgent: a checkbox)."""
    values = {name: str(form.get(name, "")) for name in curate.CONTENT_FIELDS if name != "urgent"}
    values["urgent"] = "x" if form.get("urgent") else ""
    return values


def _seen(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


async def _not_found(request: web.Request) -> web.Response:
    return await security.render(request, "not_found.html", status=404)


async def _form(
    request: web.Request,
    *,
    entry: kb_edit.StoredEntry | None,
    role: str,
    code: str,
    values: dict[str, str],
    errors: dict[str, str] | None = None,
    alert: str | None = None,
    seen: str = "",
    status: int = 200,
) -> web.Response:
    labels = {k.key: k.label for k in kbs()}
    context = {
        "entry": entry,
        "role": role,
        "kb_label": labels.get(role, role),
        "kbs": kbs(),
        "code": code,
        "values": values,
        "errors": errors or {},
        "alert": alert,
        "seen": seen,
        "limits": MAX_LENGTH,
    }
    return await security.render(request, "kb_form.html", context, status=status)


@routes.get("/kb/{id:\\d+}/edit")
@requires("admin", "clinician")
async def edit_form(request: web.Request) -> web.Response:
    entry = await kb_edit.read_entry(security.pool(request), _entry_id(request))
    if entry is None:
        return await _not_found(request)
    return await _form(
        request,
        entry=entry,
        role=entry.role,
        code=entry.code,
        values=curate.form_values(entry.snapshot()),
        seen=entry.updated_at.isoformat(),
    )


@routes.post("/kb/{id:\\d+}/edit")
@requires("admin", "clinician")
async def edit_save(request: web.Request) -> web.Response:
    services = security.services(request)
    entry_id = _entry_id(request)
    entry = await kb_edit.read_entry(services.pool, entry_id)
    if entry is None:
        return await _not_found(request)
    form = await request.post()
    values = _typed(form)
    seen_text = str(form.get("seen", ""))
    again = {"entry": entry, "role": entry.role, "code": entry.code, "values": values, "seen": seen_text}
    who = security.staff(request)
    try:
        changed = await curate.edit(
            services.pool, services.embedder, entry_id, values, seen=_seen(seen_text), staff_id=who.id
        )
    except curate.Invalid as exc:
        return await _form(request, **again, errors=exc.errors, status=400)
    except curate.Conflict:
        return await _form(request, **again, alert=CONFLICT, status=409)
    except curate.EmbeddingFailed:
        return await _form(request, **again, alert=EMBED_FAILED, status=503)
    except curate.NotFound:
        return await _not_found(request)
    if not changed:
        raise security.redirect(request, f"/console/kb/{entry_id}", "kb_unchanged")
    await staff_db.audit(
        services.pool,
        who.id,
        "kb_edit",
        subject=str(entry_id),
        detail={"role": entry.role, "code": entry.code, "fields": changed},
    )
    raise security.redirect(request, f"/console/kb/{entry_id}", "kb_saved")


def _known_role(role: str) -> bool:
    return role in {k.key for k in kbs()}


@routes.get("/kb/new")
@requires("admin", "clinician")
async def new_form(request: web.Request) -> web.Response:
    role = request.query.get("role", "")
    if not _known_role(role):
        known = kbs()
        role = known[0].key if len(known) == 1 else ""
    code = await kb_edit.suggest_code(security.pool(request), role) if role else ""
    values = curate.form_values({})
    values["question"] = request.query.get("question", "")[: MAX_LENGTH["question"]]
    values["topic"] = request.query.get("topic", "")[: MAX_LENGTH["topic"]]
    return await _form(request, entry=None, role=role, code=code, values=values)


@routes.post("/kb/new")
@requires("admin", "clinician")
async def new_save(request: web.Request) -> web.Response:
    services = security.services(request)
    form = await request.post()
    values = _typed(form)
    role = str(form.get("role", ""))
    code = str(form.get("code", ""))
    again = {"entry": None, "role": role, "code": code, "values": values}
    if not _known_role(role):
        return await _form(
            request, **again, errors={"role": ROLE_UNKNOWN if role else ROLE_NEEDS_PICK}, status=400
        )
    who = security.staff(request)
    try:
        entry_id = await curate.create(services.pool, services.embedder, role, code, values, staff_id=who.id)
    except curate.Invalid as exc:
        return await _form(request, **again, errors=exc.errors, status=400)
    except curate.EmbeddingFailed:
        return await _form(request, **again, alert=EMBED_FAILED, status=503)
    await staff_db.audit(
        services.pool, who.id, "kb_create", subject=str(entry_id), detail={"role": role, "code": code.strip()}
    )
    raise security.redirect(request, f"/console/kb/{entry_id}", "kb_created")


async def _set_hidden(request: web.Request, hidden: bool) -> web.Response:
    pool = security.pool(request)
    entry_id = _entry_id(request)
    who = security.staff(request)
    try:
        before = await curate.set_hidden(pool, entry_id, hidden, staff_id=who.id)
    except curate.NotFound:
        return await _not_found(request)
    if before is not None:
        await staff_db.audit(
            pool,
            who.id,
            "kb_hide" if hidden else "kb_restore",
            subject=str(entry_id),
            detail={"role": before.role, "code": before.code},
        )
    raise security.redirect(request, f"/console/kb/{entry_id}", "kb_hidden" if hidden else "kb_restored")


@routes.post("/kb/{id:\\d+}/hide")
@requires("admin", "clinician")
async def hide(request: web.Request) -> web.Response:
    return await _set_hidden(request, True)


@routes.post("/kb/{id:\\d+}/restore")
@requires("admin", "clinician")
async def restore(request: web.Request) -> web.Response:
    return await _set_hidden(request, False)


def _shown(name: str, value: Any) -> str:
    """A field's value as the history page shows it."""
    if name == "keywords":
        return "; ".join(value or []) or "—"
    if name == "urgent":
        return "Có" if value else "Không"
    if name == "active":
        return "Đang dùng" if value else "Đã ẩn"
    return str(value or "") or "—"


def _changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(label, before, after) of every field that differs."""
    return [
        (label, _shown(name, before.get(name)), _shown(name, after.get(name)))
        for name, label in FIELD_LABELS.items()
        if _shown(name, before.get(name)) != _shown(name, after.get(name))
    ]


@routes.get("/kb/{id:\\d+}/history")
@requires("admin", "clinician")
async def history(request: web.Request) -> web.Response:
    pool = security.pool(request)
    entry = await kb_browse.entry(pool, _entry_id(request))
    stored = await kb_edit.read_entry(pool, _entry_id(request))
    if entry is None or stored is None:
        return await _not_found(request)
    rows = await kb_edit.history(pool, entry.id)
    current = stored.snapshot()
    versions: list[dict[str, Any]] = []
    later = current  # the state that followed, walking from the newest change back
    for row in rows:
        outside = _changes(row.result, later)
        if outside:  # changed after this change, but not in the console (a spreadsheet import)
            versions.append({"row": None, "after": row, "changes": outside})
        versions.append(
            {
                "row": row,
                "kind": KIND_LABELS.get(row.kind, row.kind),
                "changes": [] if row.kind == "create" else _changes(row.snapshot, row.result),
                "created": [(FIELD_LABELS[n], _shown(n, row.snapshot.get(n))) for n in curate.CONTENT_FIELDS]
                if row.kind == "create"
                else [],
                "revertible": curate.content(row.snapshot) != curate.content(current),
            }
        )
        later = row.snapshot
    return await security.render(request, "kb_history.html", {"e": entry, "versions": versions})


@routes.post("/kb/{id:\\d+}/history/{version:\\d+}/revert")
@requires("admin", "clinician")
async def revert(request: web.Request) -> web.Response:
    services = security.services(request)
    entry_id = _entry_id(request)
    version = int(request.match_info["version"])
    who = security.staff(request)
    try:
        changed = await curate.revert(services.pool, services.embedder, entry_id, version, staff_id=who.id)
    except curate.NotFound:
        return await _not_found(request)
    except curate.Conflict:
        raise security.redirect(request, f"/console/kb/{entry_id}/history", "kb_conflict") from None
    except curate.EmbeddingFailed:
        raise security.redirect(request, f"/console/kb/{entry_id}/history", "kb_embed_failed") from None
    if not changed:
        raise security.redirect(request, f"/console/kb/{entry_id}/history", "kb_unchanged")
    stored = await kb_edit.read_entry(services.pool, entry_id)
    detail = {"version": version} | ({"role": stored.role, "code": stored.code} if stored else {})
    await staff_db.audit(services.pool, who.id, "kb_revert", subject=str(entry_id), detail=detail)
    raise security.redirect(request, f"/console/kb/{entry_id}", "kb_reverted")
