"""The staff handoff's desk in the console, "Hỗ trợ trực tiếp" (clinicians and admins): staff answer handed-off
patients here as they do in a topic of the Telegram staff group — and, with ``CONSOLE_HANDOFF`` and no staff
group (a Zalo-only clinic), only here (``bot.handoff``; the policy is ``ChatService``'s).

* ``GET /console/handoffs``: the open handoffs (label ``BN-xxxxx``, section, channel, reason, opened, how long
  the patient has waited for a staff reply — since the opening, or since their first message after the last
  staff reply —, answered or not), those waiting first, the longest-waiting first (``db.handoffs.waiting``).
  The menu shows how many wait (``security.render``).
* ``GET /console/handoffs/{id}``: the handoff with the last messages of its conversation (staff replies marked,
  with who wrote them), a reply form and "Kết thúc hỗ trợ". It shows a patient's messages, so each opening is
  a conversation view, recorded as the conversation page records one (``view_conversation``). With
  ``CONSOLE_REFRESH_SECONDS`` (0 = never) the page keeps itself current (``static/handoff.js``): new messages,
  replies by other staff and the close show without a reload, which would lose the reply being typed.
* ``GET /console/handoffs/{id}/messages``: read-only, what that script polls — the page's live part alone
  (``_handoff_messages.html``: the last messages and, once closed, the closed notice; ``data-version`` changes
  whenever it does, ``data-state`` is open/closed). A poll is not a new conversation view: the page's opening
  recorded it, and a row every few seconds would drown the audit log. Only when the patient's latest
  conversation is not the one the page shows (``?conversation=``) is that other conversation's view recorded.
  Session and role checks as every page; a GET, so no CSRF token.
* ``POST /console/handoffs/{id}/reply``: ``ChatService.console_reply`` — to the patient exactly as a topic reply
  (outbox of their channel, retried; stored as a ``staff_reply`` with the account's email), and posted in the
  handoff's topic when it has one. ``POST /console/handoffs/{id}/close``: ``ChatService.console_close``, as
  ``/xong`` (patient told, topic told). Both are CSRF-checked (``security.csrf_middleware``) and recorded in
  ``console_audit`` (``handoff_reply``, ``handoff_close``; the reply's text is not copied into the audit log:
  it is in the conversation).

The patient never learns who answered (they read "👩‍⚕️ Nhân viên phòng khám: …"); staff see it here and on the
conversation page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp_jinja2
from aiohttp import web

from bot.web.console import security
from bot.web.console.conversations import (
    CHANNELS,
    HANDOFF_REASONS,
    INPUT_TYPES,
    patient_label,
    record_view,
    role_labels,
    staff_who,
)
from bot.web.console.security import requires
from db import console_conversations as conv_db
from db import conversations as conversations_db
from db import handoffs as handoffs_db
from db import staff as staff_db
from db.console_conversations import MessageRow

routes = web.RouteTableDef()
RECENT_MESSAGES = 30  # messages of the conversation shown above the reply form
REPLY_LIMIT = (
    3500  # characters of one reply (a Telegram/Zalo message, with the "Nhân viên phòng khám" prefix)
)
REPLY_ACTION, CLOSE_ACTION = "handoff_reply", "handoff_close"


def waited(since: datetime | None, now: datetime) -> str:
    """How long a patient has waited, in the staff's words."""
    if since is None:
        return "—"
    minutes = max(0, int((now - since).total_seconds() // 60))
    if minutes < 1:
        return "dưới 1 phút"
    if minutes < 120:
        return f"{minutes} phút"
    if minutes < 48 * 60:
        return f"{minutes // 60} giờ {minutes % 60} phút"
    return f"{minutes // (24 * 60)} ngày"


@routes.get("/handoffs")
@requires("admin", "clinician")
async def list_handoffs(request: web.Request) -> web.Response:
    rows = await handoffs_db.waiting(security.pool(request))
    settings = security.settings(request)
    context = {
        "rows": rows,
        "roles": role_labels(),
        "channels": CHANNELS,
        "reasons": HANDOFF_REASONS,
        "label": patient_label,
        "waited": waited,
        "now": datetime.now(UTC),
        "console_desk": settings.console_handoff,
        "refresh_seconds": settings.console_refresh_seconds,
    }
    return await security.render(request, "handoffs.html", context)


@dataclass(frozen=True, slots=True)
class Live:
    """The page's live part (``_handoff_messages.html``): the handoff, open or not, and the last messages of the
    patient's latest conversation."""

    handoff: handoffs_db.Handoff
    waiting: handoffs_db.OpenHandoff | None  # None once closed
    conversation_id: int | None
    messages: list[MessageRow]
    now: datetime

    @property
    def status(self) -> str:
        """The reply tag's words: how long the patient has waited, "answered", or "" once closed."""
        if self.waiting is None:
            return ""
        if self.waiting.waiting_since is None:
            return "Đã trả lời"
        return f"Đang chờ trả lời {waited(self.waiting.waiting_since, self.now)}"

    @property
    def version(self) -> str:
        """Changes whenever what the live part shows does (a new message, another conversation, a staff reply,
        another minute of waiting, the close)."""
        newest = self.messages[-1].id if self.messages else 0
        state = "open" if self.waiting else "closed"
        return f"{self.conversation_id or 0}-{newest}-{len(self.messages)}-{state}-{self.status}"

    def context(self) -> dict[str, object]:
        return {
            "h": self.handoff,
            "waiting": self.waiting,
            "status": self.status,
            "conversation_id": self.conversation_id,
            "messages": self.messages,
            "version": self.version,
            "staff_who": staff_who,
            "input_types": INPUT_TYPES,
        }


async def read_live(request: web.Request) -> Live | None:
    """The live part of the handoff the request names, as it is now, or None when there is no such handoff
    (read-only: no audit row, the caller decides)."""
    pool = security.pool(request)
    found = await handoffs_db.get(pool, int(request.match_info["id"]))
    if found is None:
        return None
    waiting = await handoffs_db.one_open(pool, found.id)
    conversation_id = await conversations_db.latest_of(pool, found.user_id)
    messages = await conv_db.messages(pool, conversation_id, last=RECENT_MESSAGES) if conversation_id else []
    return Live(found, waiting, conversation_id, messages, datetime.now(UTC))


@routes.get("/handoffs/{id:\\d+}")
@requires("admin", "clinician")
async def show_handoff(request: web.Request) -> web.Response:
    live = await read_live(request)
    if live is None:
        return await security.render(request, "not_found.html", status=404)
    found = live.handoff
    if live.conversation_id is not None:  # a patient's messages are read: a conversation view
        await record_view(request, live.conversation_id, found.user_id, handoff=found.id)
    context = {
        **live.context(),
        "role": live.waiting.role if live.waiting else None,
        "roles": role_labels(),
        "channels": CHANNELS,
        "reasons": HANDOFF_REASONS,
        "label": patient_label,
        "limit": REPLY_LIMIT,
        "refresh_seconds": security.settings(request).console_refresh_seconds,
    }
    return await security.render(request, "handoff.html", context)


@routes.get("/handoffs/{id:\\d+}/messages")
@requires("admin", "clinician")
async def live_messages(request: web.Request) -> web.Response:
    live = await read_live(request)
    if live is None:
        return await security.render(request, "not_found.html", status=404)
    found = live.handoff
    shown = request.query.get("conversation", "")
    if live.conversation_id is not None and shown != str(live.conversation_id):
        # not the conversation the page shows (the patient started another since it was opened): a new view
        await record_view(request, live.conversation_id, found.user_id, handoff=found.id)
    return aiohttp_jinja2.render_template("_handoff_messages.html", request, live.context())


@routes.post("/handoffs/{id:\\d+}/reply")
@requires("admin", "clinician")
async def reply(request: web.Request) -> web.StreamResponse:
    handoff_id = int(request.match_info["id"])
    page = f"{security.PREFIX}/handoffs/{handoff_id}"
    text = str((await request.post()).get("text", "")).strip()
    if not text:
        raise security.redirect(request, page, "handoff_empty")
    if len(text) > REPLY_LIMIT:
        raise security.redirect(request, page, "handoff_too_long")
    account = security.staff(request)
    services = security.services(request)
    found = await handoffs_db.get(services.pool, handoff_id)
    if found is None:
        return await security.render(request, "not_found.html", status=404)
    if not await services.chat.console_reply(handoff_id, text, email=account.email):
        raise security.redirect(request, page, "handoff_not_open")
    await staff_db.audit(
        services.pool,
        account.id,
        REPLY_ACTION,
        subject=str(handoff_id),
        detail={"patient": patient_label(found.user_id), "characters": len(text)},
    )
    raise security.redirect(request, page, "handoff_sent")


@routes.post("/handoffs/{id:\\d+}/close")
@requires("admin", "clinician")
async def close(request: web.Request) -> web.StreamResponse:
    handoff_id = int(request.match_info["id"])
    account = security.staff(request)
    services = security.services(request)
    found = await handoffs_db.get(services.pool, handoff_id)
    if found is None:
        return await security.render(request, "not_found.html", status=404)
    if not await services.chat.console_close(handoff_id, email=account.email):
        raise security.redirect(request, f"{security.PREFIX}/handoffs/{handoff_id}", "handoff_not_open")
    await staff_db.audit(
        services.pool,
        account.id,
        CLOSE_ACTION,
        subject=str(handoff_id),
        detail={"patient": patient_label(found.user_id)},
    )
    raise security.redirect(request, f"{security.PREFIX}/handoffs", "handoff_closed")
