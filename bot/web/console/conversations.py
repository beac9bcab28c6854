"""Patients' conversations, for every staff member (a doctor reviews the bot's answers; the clinic's admins
too): ``GET /console/conversations`` (the recent ones, filtered by role, by a request for a person, by a staff
handoff, by a 👎) and ``GET /console/conversations/{id}`` (the messages in order, with the KB codes cited and
the scores; a staff handoff with when it was opened, why, when and by whom it was closed, and the staff's
replies marked as theirs, not the bot's).

Both "asked for a person" (what the patient typed: the flow's human / complaint intents) and the handoff
state (what happened: none, open, closed) are kept, in one "Gặp nhân viên" column: a request that became no
handoff (no staff group set, the topic could not be created) is one the clinic may want to call back, and a
handoff opened from the "no good answer twice" offer is one the patient never typed a request for.

A conversation is a patient's health data: the list shows a pseudonymous label (``BN-<internal id>``), never
the channel's id or name, and every opening of a conversation is recorded in ``console_audit``
(``view_conversation``) and listed on the page itself, so whoever reads it sees who read it before."""

from __future__ import annotations

from aiohttp import web

from bot.web.console import security
from db import console_conversations as conv_db
from db import staff as staff_db
from db.handoffs import PATIENT, Staff
from engine import load_roles

routes = web.RouteTableDef()
LIMIT = 100

CHANNELS = {"telegram": "Telegram", "zalo": "Zalo", "console": "Dòng lệnh"}
# What the bot took a patient's message for (engine.classify's input types), in the staff's words.
INPUT_TYPES = {
    "medical_question": "Câu hỏi y khoa",
    "emergency": "Cấp cứu",
    "booking": "Đặt lịch",
    "human": "Muốn gặp nhân viên",
    "to_staff": "Chuyển cho nhân viên",
    "complaint": "Phàn nàn",
    "praise": "Khen ngợi",
    "clinic_info": "Thông tin phòng khám",
    "thanks": "Cảm ơn",
    "goodbye": "Chào tạm biệt",
    "greeting": "Chào hỏi",
    "statement": "Chia sẻ thông tin",
    "topic_suggest": "Hỏi gợi ý chủ đề",
    "english": "Tiếng Anh",
    "nonsense": "Ngoài phạm vi",
    "invalid": "Tin nhắn không hợp lệ",
    "error": "Lỗi khi trả lời",
}


# A staff handoff: why it was opened (``db.handoffs.REASONS``) and its state in the list.
HANDOFF_REASONS = {
    "human": "Bệnh nhân muốn gặp nhân viên",
    "complaint": "Bệnh nhân phàn nàn",
    "unanswered": "Bot chưa trả lời được, bệnh nhân chọn gặp nhân viên",
}
HANDOFF_STATES = {"open": "Đang chuyển nhân viên", "closed": "Đã chuyển nhân viên"}


def _member(stored: str | None) -> str:
    """A staff member as stored (``db.handoffs.by_telegram`` / ``by_console``), in the staff's words; "" when
    not known (a reply stored before who answered was recorded)."""
    who = Staff.parse(stored)
    if who.kind == "console":
        return f"{who.ident}, trên trang quản trị"
    if who.kind == "telegram":
        return f"{who.name}, Telegram {who.ident}" if who.name else f"Telegram {who.ident}"
    return ""


def closed_by(who: str | None) -> str:
    """Who closed a handoff, in the staff's words."""
    if who == PATIENT:
        return "bệnh nhân"
    member = _member(who)
    return f"nhân viên ({member})" if member else "nhân viên"


def staff_who(stored: str | None) -> str:
    """Who wrote a staff reply, as staff read it ("Nhân viên phòng khám (lan@…, trên trang quản trị)"); the
    patient only ever reads "Nhân viên phòng khám"."""
    member = _member(stored)
    return f"Nhân viên phòng khám ({member})" if member else "Nhân viên phòng khám"


def patient_label(user_id: int) -> str:
    """The pseudonymous label a patient is shown by (the internal id, not the channel's)."""
    return f"BN-{user_id:05d}"


def role_labels() -> dict[str, str]:
    return {key: role.label for key, role in load_roles().items()}


def _flag(request: web.Request, name: str) -> bool:
    return request.query.get(name, "") == "1"


@routes.get("/conversations")
async def list_conversations(request: web.Request) -> web.Response:
    roles = role_labels()
    role = request.query.get("role", "")
    if role not in roles:
        role = ""
    asked_staff, with_down = _flag(request, "staff"), _flag(request, "down")
    handed_off = _flag(request, "handoff")
    rows = await conv_db.recent(
        security.pool(request),
        role=role or None,
        asked_staff=asked_staff,
        with_down=with_down,
        handed_off=handed_off,
        limit=LIMIT,
    )
    context = {
        "rows": rows,
        "roles": roles,
        "role": role,
        "asked_staff": asked_staff,
        "with_down": with_down,
        "handed_off": handed_off,
        "handoff_states": HANDOFF_STATES,
        "channels": CHANNELS,
        "label": patient_label,
        "filtered": bool(role or asked_staff or with_down or handed_off),
        "limit": LIMIT,
    }
    return await security.render(request, "conversations.html", context)


async def record_view(request: web.Request, conversation_id: int, user_id: int, **detail: object) -> None:
    """A staff member read a patient's messages: recorded in the audit log and shown on the conversation page
    ("Ai đã xem cuộc trò chuyện này"), wherever the messages were shown."""
    await staff_db.audit(
        security.pool(request),
        security.staff(request).id,
        conv_db.VIEW_ACTION,
        subject=str(conversation_id),
        detail={"patient": patient_label(user_id), **detail},
    )


@routes.get("/conversations/{id:\\d+}")
async def show_conversation(request: web.Request) -> web.Response:
    pool = security.pool(request)
    conversation_id = int(request.match_info["id"])
    found = await conv_db.get(pool, conversation_id)
    if found is None:
        return await security.render(request, "not_found.html", status=404)
    messages = await conv_db.messages(pool, conversation_id)
    handoffs = await conv_db.handoffs(pool, conversation_id)
    earlier = await conv_db.views(pool, conversation_id)
    await record_view(request, conversation_id, found.patient)
    context = {
        "c": found,
        "messages": messages,
        "handoffs": handoffs,
        "handoff_reasons": HANDOFF_REASONS,
        "handoff_states": HANDOFF_STATES,
        "closed_by": closed_by,
        "staff_who": staff_who,
        "views": earlier,
        "roles": role_labels(),
        "channels": CHANNELS,
        "input_types": INPUT_TYPES,
        "label": patient_label,
    }
    return await security.render(request, "conversation.html", context)
