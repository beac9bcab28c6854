"""The answers' quality, for every staff member:

* ``GET/POST /console/try`` — "try it": a message in one of the clinic's roles goes through the patients'
  ``ChatService`` (``security.services(request).chat``, behind the same triage guard as every channel) and
  the page shows the reply exactly as a patient gets it, then the bot's reasoning, read from the trace stored
  with the reply (input type, triage, each retrieved entry's per-leg rank and score and its calibrated
  probability against the threshold, the decision, the KB codes cited). Suggestions are buttons that send
  themselves as the next message of the same conversation; ``POST /console/try/new`` starts a new one.
  Each staff member speaks as their own user of channel ``db.stats.TRIAL_CHANNEL``: trials never count in
  the statistics, the digest or the unanswered list.
* ``GET /console/unanswered?days=N`` — the patients' questions of the last N days that scored under the
  threshold, cited nothing or got a 👎 (``db.stats.unanswered``, what Telegram's /unanswered lists), each with
  a link to write the KB entry that answers it. Patients' words: each view is in the audit log.
* ``GET /console/stats`` — the numbers of Telegram's /stats, answered share and 👍/👎 per role, and the charts
  (``bot.charts``): messages per day (``GET /console/stats/messages.png``, /stats's) and today's messages
  per hour with the unanswered part (``GET /console/stats/today.png``, the digest's).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from aiohttp import web

from bot import charts, llm_selfcheck
from bot.service import ChatService, Emergency
from bot.web.console import security
from db import digest, quality, stats
from db import staff as staff_db
from db.quality import TrialMessage
from db.staff import StaffAccount
from db.users import User
from engine import load_roles, triage
from engine.flows import MEDICAL_FLOW
from engine.texts import SWITCH_BUTTON

routes = web.RouteTableDef()

# The clinic's wall clock for the times shown (the worker's default WORKER_TIMEZONE).
CLINIC_TZ = ZoneInfo("Asia/Ho_Chi_Minh")
MAX_MESSAGE_CHARS = 4000  # a chat app's own limit is about this; longer is refused with a message
UNANSWERED_DAYS = 30
UNANSWERED_LIMIT = 100
STATS_WINDOWS = (7, 30)

INPUT_TYPES = {
    "medical_question": "Câu hỏi y khoa",
    "emergency": "Cấp cứu",
    "greeting": "Lời chào",
    "topic_suggest": "Hỏi về chủ đề",
    "statement": "Lời kể, không phải câu hỏi",
    "nonsense": "Không hiểu được",
    "booking": "Đặt lịch khám",
    "human": "Muốn gặp người thật",
    "complaint": "Phàn nàn",
    "praise": "Lời khen",
    "clinic_info": "Thông tin phòng khám",
    "thanks": "Lời cảm ơn",
    "goodbye": "Lời chào tạm biệt",
    "english": "Tiếng Anh",
    "invalid": "Tin nhắn không hợp lệ",
    "error": "Lỗi khi xử lý",
}
DECISIONS = {
    "compose_answer": "Trả lời từ kho kiến thức",
    "clarify": "Hỏi lại cho rõ (gợi ý các câu gần nhất)",
    "topic_suggest": "Không khớp: gợi ý các chủ đề",
}


# The trace's node names (the flow definition's node ids) of the steps the reasoning reads; "guard" is the
# record ChatService stores for an emergency the triage guard answered before the flow.
_NODES = MEDICAL_FLOW["nodes"]
TRIAGE_NODES = {"guard", *(key for key, kind in _NODES.items() if kind == "RedFlagCheck")}
DECISION_NODES = {key for key, kind in _NODES.items() if kind == "ScoreDecisionNode"}


@dataclass(slots=True)
class Reasoning:
    """Why the bot replied as it did, read from one reply's stored trace (``engine.core`` records)."""

    input_type: str
    emergency: bool
    triage_categories: list[str] = field(default_factory=list)
    triage_doubted: bool = False  # the rules' emergency, doubted by the model: answered, with a 115 line
    hits: list[dict[str, Any]] = field(default_factory=list)  # engine.types.Hit.trace(), best first
    threshold: float | None = None
    probability: float | None = None  # the top entry's calibrated probability (the reply's retrieval score)
    decision: str | None = None
    citations: list[str] = field(default_factory=list)
    switch_role: str | None = None  # another role whose KB answers the message


def reasoning(reply: TrialMessage) -> Reasoning:
    """The reasoning behind ``reply`` (a bot message), from its trace and the columns stored with it."""
    why = Reasoning(
        input_type=reply.input_type or "",
        emergency=reply.red_flag,
        citations=reply.citations,
        probability=reply.retrieval_score,
    )
    for record in reply.trace:
        node, action = record.get("node"), record.get("action")
        if node in TRIAGE_NODES and action == "emergency":
            why.emergency = True
        verdict = record.get("triage")
        if isinstance(verdict, dict):
            names = {c.id: c.name for c in triage.default_rules().categories}
            found = [str(c) for c in [*(verdict.get("categories") or []), *(verdict.get("topics") or [])]]
            why.triage_categories = [names.get(c, c) for c in dict.fromkeys(found)]
            why.triage_doubted = bool(verdict.get("doubted"))
        retrieval = record.get("retrieval")
        if isinstance(retrieval, dict):
            why.threshold = retrieval.get("threshold")
            why.hits = [h for h in retrieval.get("hits") or [] if isinstance(h, dict)]
        if node in DECISION_NODES and action in DECISIONS:
            why.decision = action
        cross = record.get("cross_role")
        if isinstance(cross, dict) and cross.get("offer"):
            why.switch_role = str(cross["offer"])
    if not why.hits:
        why.probability = None  # no search ran: the score column is 0 by default, not a probability
    return why


def role_label(key: str | None) -> str:
    """A role's label as patients see it in the picker ("🦷 Nha khoa (bệnh nhân)"); the key if it is gone."""
    role = load_roles().get(key or "")
    return role.label if role else (key or "—")


def kb_of(key: str | None) -> str:
    """The KB a role reads (roles may share one)."""
    role = load_roles().get(key or "")
    return role.kb if role else (key or "")


def local(moment: Any) -> Any:
    return moment.astimezone(CLINIC_TZ) if moment is not None else None


async def trial_user(chat: ChatService, staff: StaffAccount) -> User:
    """The staff member's own "try it" user (never a patient's, never counted in the statistics)."""
    return await chat.user(stats.TRIAL_CHANNEL, str(staff.id))


def _role(request: web.Request, value: str | None) -> str:
    roles = security.services(request).chat.roles
    return value if value in roles else roles[0]


# ---------------------------------------------------------------- try it
@routes.get("/try")
async def try_page(request: web.Request) -> web.Response:
    chat = security.services(request).chat
    user = await trial_user(chat, security.staff(request))
    role = _role(request, request.query.get("role") or user.role)
    conversation = await quality.latest_trial(chat.pool, user.id, role)
    exchanges: list[tuple[TrialMessage | None, TrialMessage | None, Reasoning | None]] = []
    for message in conversation.messages if conversation else []:
        if message.direction == "in":
            exchanges.append((message, None, None))
        elif exchanges and exchanges[-1][1] is None:
            exchanges[-1] = (exchanges[-1][0], message, reasoning(message))
        else:
            exchanges.append((None, message, reasoning(message)))
    switch = None  # the last reply offers another section: its button, as a chat app shows it
    if exchanges and exchanges[-1][0] is not None and exchanges[-1][2] is not None:
        offered = exchanges[-1][2].switch_role
        known = load_roles()
        if offered in chat.roles and offered in known:
            label = SWITCH_BUTTON.format(section=known[offered].name)
            switch = {"role": offered, "label": label, "text": exchanges[-1][0].text}
    context = {
        "roles": [(key, role_label(key)) for key in chat.roles],
        "role": role,
        "exchanges": exchanges,
        "suggestions": conversation.suggestions if conversation else [],
        "switch": switch,
        "input_types": INPUT_TYPES,
        "decisions": DECISIONS,
        "role_label": role_label,
        "local": local,
        "max_chars": MAX_MESSAGE_CHARS,
    }
    return await security.render(request, "try.html", context)


async def send_trial(chat: ChatService, user: User, text: str) -> None:
    """``text`` from the trial ``user``, as every chat channel hands a message over: the triage guard first
    (an emergency gets its answer from the text alone), then the answer in the user's latest conversation of
    the role (so follow-ups work). What the guard delivers is stored with the exchange, as on any channel."""

    async def deliver(_answer: str) -> None:
        return None  # the page shows the stored exchange, which holds this very text

    async def handle(emergency: Emergency | None) -> None:
        async with chat.chat_lock(stats.TRIAL_CHANNEL, user.external_id):  # two tabs: one message at a time
            await chat.handle_text(
                user, text, channel=stats.TRIAL_CHANNEL, emergency=emergency, conversation="keep"
            )

    await chat.guard(stats.TRIAL_CHANNEL, user.external_id, text, deliver, handle)


@routes.post("/try")
async def try_send(request: web.Request) -> web.Response:
    form = await request.post()
    chat = security.services(request).chat
    role = str(form.get("role", ""))
    text = str(form.get("text", "")).strip()
    if role not in chat.roles:
        raise security.redirect(request, "/console/try", "try_bad_role")
    back = "/console/try?" + urlencode({"role": role})
    if not text:
        raise security.redirect(request, back, "try_empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise security.redirect(request, back, "try_too_long")
    user = await trial_user(chat, security.staff(request))
    if user.role != role and not await chat.set_role(user, role):
        raise security.redirect(request, back, "try_bad_role")
    await send_trial(chat, user, text)
    raise security.redirect(request, back)


@routes.post("/try/new")
async def try_new(request: web.Request) -> web.Response:
    form = await request.post()
    chat = security.services(request).chat
    role = str(form.get("role", ""))
    if role not in chat.roles:
        raise security.redirect(request, "/console/try", "try_bad_role")
    user = await trial_user(chat, security.staff(request))
    await quality.start_trial(chat.pool, user.id, role)
    raise security.redirect(request, "/console/try?" + urlencode({"role": role}), "try_new")


# ---------------------------------------------------------------- unanswered questions
def _days(request: web.Request) -> tuple[int, bool]:
    """The ``days`` asked for (1..365), and whether the value given was usable."""
    raw = request.query.get("days", "").strip()
    if not raw:
        return UNANSWERED_DAYS, True
    if raw.isdigit() and 1 <= int(raw) <= 365:
        return int(raw), True
    return UNANSWERED_DAYS, False


@routes.get("/unanswered")
async def unanswered(request: web.Request) -> web.Response:
    days, valid = _days(request)
    settings = security.settings(request)
    items = await stats.unanswered(
        security.pool(request), settings.score_threshold, days=days, limit=UNANSWERED_LIMIT
    )
    # Patients' own words: who read them is recorded, as for a conversation.
    await staff_db.audit(
        security.pool(request),
        security.staff(request).id,
        "view_unanswered",
        detail={"days": days, "questions": [item.message_id for item in items]},
    )
    rows = []
    for item in items:
        link = "/console/kb/new?" + urlencode({"role": kb_of(item.role), "question": item.text.strip()[:500]})
        rows.append({"item": item, "label": role_label(item.role), "at": local(item.at), "link": link})
    context = {
        "days": days,
        "invalid_days": not valid,
        "rows": rows,
        "threshold": settings.score_threshold,
        "limit": UNANSWERED_LIMIT,
    }
    return await security.render(request, "unanswered.html", context)


# ---------------------------------------------------------------- charts
@routes.get("/stats")
async def stats_page(request: web.Request) -> web.Response:
    pool = security.pool(request)
    windows = [await stats.window(pool, days) for days in STATS_WINDOWS]
    per_role = await stats.by_role(pool, STATS_WINDOWS[-1])
    context = {
        "windows": windows,
        "per_role": per_role,
        "role_label": role_label,
        "llm_note": llm_selfcheck.stats_note(security.settings(request)),
    }
    return await security.render(request, "stats.html", context)


@routes.get("/stats/messages.png")
async def messages_png(request: web.Request) -> web.Response:
    png = await charts.messages_chart(await stats.daily_messages(security.pool(request), 30))
    return web.Response(body=png, content_type="image/png")


@routes.get("/stats/today.png")
async def today_png(request: web.Request) -> web.Response:
    """Today's patients' messages per hour (clinic time), the unanswered part on top: the digest's chart."""
    now = datetime.now(CLINIC_TZ)
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    threshold = security.settings(request).score_threshold
    n = await digest.numbers(security.pool(request), start, now, threshold=threshold, tz=CLINIC_TZ.key)
    png = await asyncio.to_thread(charts.hourly_chart, start.date(), n.hourly_in, n.hourly_unanswered)
    return web.Response(body=png, content_type="image/png")
