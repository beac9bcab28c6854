"""The article check (``/verify`` of the bot) in the console, for every staff member: ``GET /console/verify``
(paste an article or upload a .txt/.md/.docx file; or the sentence the staff member's open check stands on),
``POST /console/verify`` (start), ``POST /console/verify/{id}/accept|skip|research|stop`` (the buttons of the
bot: accept the verdict, skip a sentence that is not a claim, search again with keywords, stop) and
``GET /console/verify/{id}/report`` (the report; ``report.md`` and ``report.csv`` download it).

The walk is ``services.verification``, the very ``VerificationService`` Telegram uses; its state is in
PostgreSQL, so a reload, another tab or a restart continues where the staff member was. A check belongs to the
staff account that started it (``db.console_verify``: ``meta.staff_id``, no channel user): nobody else can
see or move it."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from urllib.parse import quote

from aiohttp import web
from multidict import MultiDictProxy

from bot.web.console import security
from bot.web.console.security import Handler
from db import console_verify
from db import staff as staff_db
from db.verification import OPEN, Session
from engine.verify.article import MAX_ARTICLE_BYTES, parse_article, pasted_name
from engine.verify.documents import SUPPORTED_ARTICLE, DocumentError
from engine.verify.report import DECISION_VI, report_stem
from engine.verify.types import STATUS_VI

routes = web.RouteTableDef()

MAX_KEYWORDS = 300
PASTED_TITLE_CHARS = 80  # a pasted article without a heading is named by its first sentence, shortened
EVIDENCE_SHOWN = 3
ICON = {"VALID": "✅", "FLAGGED": "⚠️", "UNCLEAR": "❔"}
STATE_VI = {"done": "Đã hoàn tất", "stopped": "Đã dừng", "open": "Đang kiểm tra"}

NO_ARTICLE = "Hãy dán nội dung bài viết hoặc chọn một tệp."
BOTH_GIVEN = "Hãy chỉ dán văn bản hoặc chỉ chọn tệp, không cả hai."
WRONG_TYPE = "Định dạng chưa hỗ trợ. Hãy chọn tệp .txt, .md, .docx hoặc dán văn bản."
TOO_BIG = "Bài viết quá lớn (tối đa {mb} MB)."
UNREADABLE = "Không đọc được bài viết: {error}."
NO_CLAIMS = "Bài viết không có câu nào để kiểm tra."


class ArticleProblem(ValueError):
    """An article the check cannot start on; the message is for the staff member (Vietnamese)."""


class NotFound(Exception):
    """The check does not exist or is another staff member's: the 404 page."""


async def _session(request: web.Request) -> Session:
    """The check named in the path, if it is the signed-in staff member's own (else NotFound)."""
    found = await console_verify.owned_session(
        security.pool(request), int(request.match_info["id"]), security.staff(request).id
    )
    if found is None:
        raise NotFound
    return found


def _owned(handler: Handler) -> Handler:
    """Answer with the 404 page when the handler's check is not the staff member's."""

    @functools.wraps(handler)
    async def checked(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except NotFound:
            return await security.render(request, "not_found.html", status=404)

    return checked


async def _read_article(request: web.Request) -> tuple[bytes | str, str, str]:
    """(the article's content, its file name for the parser, the name shown) from the form; ArticleProblem."""
    form = await request.post()
    text = str(form.get("text", "")).strip() if isinstance(form.get("text"), str) else ""
    upload = form.get("file")
    has_file = isinstance(upload, web.FileField) and bool(upload.filename)
    if text and has_file:
        raise ArticleProblem(BOTH_GIVEN)
    if has_file:
        assert isinstance(upload, web.FileField)
        name = Path(upload.filename).name
        if Path(name).suffix.lower() not in SUPPORTED_ARTICLE:
            raise ArticleProblem(WRONG_TYPE)
        data = upload.file.read(MAX_ARTICLE_BYTES + 1)
        if len(data) > MAX_ARTICLE_BYTES:
            raise ArticleProblem(TOO_BIG.format(mb=security.upload_limit_mb(request, MAX_ARTICLE_BYTES)))
        return data, name, name
    if not text:
        raise ArticleProblem(NO_ARTICLE)
    if len(text.encode("utf-8")) > MAX_ARTICLE_BYTES:
        raise ArticleProblem(TOO_BIG.format(mb=security.upload_limit_mb(request, MAX_ARTICLE_BYTES)))
    return text, pasted_name(text), ""


async def _start_page(
    request: web.Request, *, error: str = "", text: str = "", status: int = 200
) -> web.Response:
    recent = await console_verify.recent_sessions(security.pool(request), security.staff(request).id)
    context = {
        "error": error,
        "text": text,
        "recent": [s for s in recent if s.status != OPEN],
        "states": STATE_VI,
        "accept": ", ".join(SUPPORTED_ARTICLE),
        "max_mb": security.upload_limit_mb(request, MAX_ARTICLE_BYTES),
    }
    return await security.render(request, "verify_start.html", context, status=status)


@routes.get("/verify")
async def verify_page(request: web.Request) -> web.StreamResponse:
    service = security.services(request).verification
    current = await console_verify.open_session(security.pool(request), security.staff(request).id)
    if current is None:
        return await _start_page(request)
    view = await service.current(current.id)
    if view is None:  # finished meanwhile (another tab)
        raise web.HTTPSeeOther(f"/console/verify/{current.id}/report")
    context = {
        "s": current,
        "v": view,
        "icon": ICON,
        "status_vi": STATUS_VI,
        "evidence": view.evidence[:EVIDENCE_SHOWN],
        "max_keywords": MAX_KEYWORDS,
    }
    return await security.render(request, "verify_item.html", context)


@routes.post("/verify")
async def start(request: web.Request) -> web.StreamResponse:
    pool = security.pool(request)
    staff = security.staff(request)
    form = await request.post()
    typed = form.get("text")
    kept = typed if isinstance(typed, str) else ""
    try:
        data, filename, shown_name = await _read_article(request)
        try:
            # .docx unzipping and sentence splitting are CPU work: off the event loop.
            article = await asyncio.to_thread(parse_article, data, filename)
        except DocumentError as exc:
            raise ArticleProblem(UNREADABLE.format(error=str(exc))) from exc
        if not article.claims:
            raise ArticleProblem(NO_CLAIMS)
        if not shown_name and article.title == Path(filename).stem:  # pasted, no heading: not "bai-viet"
            article.title = _short(article.claims[0].text, PASTED_TITLE_CHARS)
    except ArticleProblem as problem:
        return await _start_page(request, error=str(problem), text=kept, status=400)
    await console_verify.stop_open(pool, staff.id)
    session = await security.services(request).verification.start_session(
        article,
        user_id=None,
        article_name=shown_name,
        channel=console_verify.CHANNEL,
        meta={"staff_id": staff.id},
    )
    await staff_db.audit(
        pool, staff.id, "verify_article", subject=str(session.id), detail={"title": article.title}
    )
    raise security.redirect(request, "/console/verify", "verify_started")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _idx(form: MultiDictProxy[str | bytes | web.FileField]) -> int | None:
    raw = form.get("idx")
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


async def _open_session(request: web.Request) -> Session:
    session = await _session(request)
    if session.status != OPEN:
        raise security.redirect(request, f"/console/verify/{session.id}/report", "verify_ended")
    return session


async def _after(request: web.Request, session: Session, finished: bool) -> web.HTTPSeeOther:
    if finished:
        return security.redirect(request, f"/console/verify/{session.id}/report", "verify_done")
    return web.HTTPSeeOther("/console/verify")


@routes.post("/verify/{id:\\d+}/accept")
@_owned
async def accept(request: web.Request) -> web.StreamResponse:
    session = await _open_session(request)
    view = await security.services(request).verification.accept(session.id, _idx(await request.post()))
    raise await _after(request, session, view is None)


@routes.post("/verify/{id:\\d+}/skip")
@_owned
async def skip(request: web.Request) -> web.StreamResponse:
    session = await _open_session(request)
    view = await security.services(request).verification.skip(session.id, _idx(await request.post()))
    raise await _after(request, session, view is None)


@routes.post("/verify/{id:\\d+}/research")
@_owned
async def research(request: web.Request) -> web.StreamResponse:
    session = await _open_session(request)
    form = await request.post()
    raw = form.get("keywords")
    keywords = raw.strip()[:MAX_KEYWORDS] if isinstance(raw, str) else ""
    current = await security.services(request).verification.current(session.id)
    if current is not None and _idx(form) == current.idx:  # a stale form searches nothing
        await security.services(request).verification.research(session.id, keywords or None)
    raise web.HTTPSeeOther("/console/verify")


@routes.post("/verify/{id:\\d+}/stop")
@_owned
async def stop(request: web.Request) -> web.StreamResponse:
    session = await _open_session(request)
    await security.services(request).verification.stop(session.id)
    raise security.redirect(request, f"/console/verify/{session.id}/report", "verify_stopped")


@routes.get("/verify/{id:\\d+}/report")
@_owned
async def report_page(request: web.Request) -> web.StreamResponse:
    session = await _session(request)
    report = await security.services(request).verification.report(session.id)
    statuses, decisions = report.counts()
    context = {
        "s": session,
        "r": report,
        "statuses": statuses,
        "decisions": decisions,
        "status_vi": STATUS_VI,
        "decision_vi": DECISION_VI,
        "states": STATE_VI,
        "icon": ICON,
    }
    return await security.render(request, "verify_report.html", context)


@routes.get("/verify/{id:\\d+}/report.{kind:(md|csv)}")
@_owned
async def report_file(request: web.Request) -> web.StreamResponse:
    session = await _session(request)
    report = await security.services(request).verification.report(session.id)
    stem = report_stem(report.article_name or report.title)
    if request.match_info["kind"] == "md":
        body, content_type, name = report.markdown().encode("utf-8"), "text/markdown", f"{stem}.report.md"
    else:
        body, content_type, name = report.csv().encode("utf-8-sig"), "text/csv", f"{stem}.report.csv"
    return web.Response(
        body=body,
        content_type=content_type,
        charset="utf-8",
        headers={"Content-Disposition": _attachment(name)},
    )


def _attachment(name: str) -> str:
    """A Content-Disposition for a (possibly Vietnamese) file name: an ASCII fallback and the UTF-8 name."""
    ascii_name = name.encode("ascii", "replace").decode().replace("?", "_").replace('"', "_")
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name)}"
