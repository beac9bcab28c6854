"""The staff handoff's pieces that are not the policy itself: what staff and patients read, the patient's
pseudonymous label, the topic's summary, and the staff desk a channel provides.

The policy is ``bot.service.ChatService`` (so no channel can skip it): with a desk attached
(``ChatService.handoff``), a patient who asks for a person or complains (the flow's ``human`` / ``complaint``
routes, re-pointed at ``StaffHandoff`` by ``engine.flows.HANDOFF_FLOW``) is handed off; one who got no good
answer ``UNANSWERED_STREAK`` times in a row is offered it (a suggestion button that asks for a person). While
the handoff is open the patient's messages go to the topic and the bot does not answer them, except that an
emergency still gets the 115 answer first (the triage guard, unchanged) and reaches the topic marked 🚨.

Decisions, written down here:

- The topic is named by the pseudonymous label the clinic console uses (``BN-00042``, the internal user id)
  and the section ("BN-00042 · Nha khoa"); never the phone, the Telegram/Zalo id or the name. Staff answer
  the person in the conversation; they do not need the name, and a topic title is seen by every group member.
- ``UNANSWERED_STREAK`` is 2: one miss is often wording that the "có phải bạn muốn hỏi" list or rephrasing
  fixes; two in a row means the KB lacks it, and a person is offered before the patient gives up. It is an
  offer (a button), not a handoff: the patient decides whether a question is worth the staff's time.
- Hours: ``CLINIC_HOURS`` is free text, so the bot cannot know whether it is outside them; the patient is told
  the hours and that an answer outside them comes in the next opening hours. Nothing more is promised.
- The clinic console (``CONSOLE_HANDOFF``, page "Hỗ trợ trực tiếp", ``bot.web.console.handoffs``): staff may
  answer from there too (``ChatService.console_reply`` / ``console_close``), exactly like a topic reply (same
  outbox, stored as a staff reply), and a console reply is also posted in the handoff's topic when there is
  one, so the group sees it. With ``CONSOLE_HANDOFF`` and no staff group a handoff has no topic at all (the
  desk is None): the console is where staff read and answer it.
- Who answered: each staff reply and each close records the staff member (``db.handoffs.by_telegram``: the
  Telegram user's id and first name; ``by_console``: the account's email). Staff see it in the console; the
  patient never does (a reply reads "👩‍⚕️ Nhân viên phòng khám: …" whoever wrote it).
- Reminder: a handoff nobody has answered for ``HANDOFF_REMIND_MINUTES`` (30) gets one reminder in its topic
  (the worker's ``handoff_reminder`` job), not more: a topic with unread messages already shows in the group,
  one nudge catches a forgotten one, and repeated ones would train staff to mute the group. Only handoffs with
  a topic are reminded: a console-only one has nowhere to be reminded but the console itself, whose menu shows
  how many handoffs wait for a reply.
- Patient-bound messages (staff replies, the closing notice) go through the outbox (``db.outbox``) of the
  patient's channel: sent at once by the channel's drainer, retried by the worker when a send fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from db.conversations import STAFF_REPLY
from engine import ClinicProfile

# Consecutive replies with no good answer (no KB answer to a medical question) before a person is offered.
UNANSWERED_STREAK = 2
# Messages of the conversation shown in the topic's summary.
SUMMARY_MESSAGES = 8
SUMMARY_TEXT_LIMIT = 400  # characters of one message in the summary

# Typed (or tapped) by a patient to reach a person: read by the flow's intent rules as "human".
ASK_PERSON = "Cho tôi gặp nhân viên phòng khám"
END_COMMAND = "ketthuc"  # the patient's /ketthuc
STAFF_CLOSE_COMMAND = "xong"  # a staff member's /xong in the topic
STAFF_PREFIX = "👩‍⚕️ Nhân viên phòng khám:"


class StaffDesk(Protocol):
    """Where staff answer: a Telegram supergroup with topics (``bot.telegram.staff``)."""

    chat_id: int

    async def open_topic(self, name: str, summary: str, handoff_id: int) -> int:
        """Create a topic, post ``summary`` in it (with a close button for ``handoff_id``); its thread id."""
        ...

    async def post(self, topic_id: int, text: str) -> None:
        """Post ``text`` (plain) in a topic; queued for a retry when it cannot be sent now."""
        ...

    async def delete_topic(self, topic_id: int) -> None:
        """Delete a topic and its messages (the patient erased their data)."""
        ...


@dataclass(slots=True)
class HandoffDesk:
    """What ``ChatService`` needs to hand off: the Telegram staff desk (None: no staff group, staff answer from
    the clinic console only, ``CONSOLE_HANDOFF``), the section names, and per patient channel a ``kick`` that
    has the channel's outbox sent now (channels without one get no handoff: this process cannot reach them).
    Built by the composition root (``bot.wiring.attach_handoff``)."""

    desk: StaffDesk | None
    role_names: dict[str, str] = field(default_factory=dict)
    kicks: dict[str, Callable[[], Any]] = field(default_factory=dict)
    console: bool = False  # CONSOLE_HANDOFF: staff answer from the console too (a failed topic is no failure)


def label(user_id: int) -> str:
    """The pseudonymous label staff know a patient by (the console's too): the internal id, never the channel's."""
    return f"BN-{user_id:05d}"


def topic_name(user_id: int, section: str) -> str:
    name = f"{label(user_id)} · {section}" if section else label(user_id)
    return name[:128]  # Telegram's limit for a topic name


REASONS = {
    "human": "bệnh nhân muốn gặp nhân viên",
    "complaint": "bệnh nhân phàn nàn",
    "unanswered": "bot chưa trả lời được",
}


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_TEXT_LIMIT else text[: SUMMARY_TEXT_LIMIT - 1] + "…"


def summary(
    user_id: int, channel: str, section: str, reason: str, messages: Sequence[dict[str, Any]], asked: str
) -> str:
    """The topic's first message: who (label, channel, section), why, and the last turns, oldest first."""
    lines = [
        f"🆕 Yêu cầu hỗ trợ: {label(user_id)}",
        f"Kênh: {'Zalo' if channel == 'zalo' else 'Telegram'} · Mục: {section or '—'}",
        f"Lý do: {REASONS.get(reason, reason)}",
        "",
        "Trao đổi gần đây:",
    ]
    for m in messages:
        if m["direction"] == "in":
            who = "👤 Bệnh nhân"
        else:  # a staff reply of an earlier handoff in this conversation is no bot's
            who = "👩‍⚕️ Nhân viên" if m["input_type"] == STAFF_REPLY else "🤖 Bot"
        lines.append(f"{who}: {_cut(m['text'] or '')}")
    lines.append(f"👤 Bệnh nhân: {_cut(asked)}")
    lines += [
        "",
        "Trả lời trong chủ đề này: tin nhắn của bạn được chuyển tới bệnh nhân. "
        f"Gửi /{STAFF_CLOSE_COMMAND} hoặc bấm nút bên dưới để kết thúc.",
    ]
    return "\n".join(lines)


def opened_text(clinic: ClinicProfile) -> str:
    """What the patient reads when the handoff is open."""
    hours = (
        f" Nhân viên làm việc trong giờ: {clinic.hours}; ngoài giờ này, bạn sẽ được trả lời khi phòng khám "
        "mở cửa lại."
        if clinic.hours
        else ""
    )
    return (
        f"Mình đã chuyển cuộc trò chuyện cho nhân viên {clinic.display_name}. Nhân viên sẽ trả lời bạn ngay "
        f"tại đây.{hours}\n\n"
        "Trong lúc này mình tạm ngừng trả lời tự động, tin nhắn của bạn được chuyển tới nhân viên. "
        f"Khi xong, bạn bấm nút bên dưới hoặc gửi /{END_COMMAND} để mình trả lời lại như trước.\n\n"
        "Nếu là trường hợp cấp cứu, hãy gọi ngay 115."
    )


ALREADY_OPEN = (
    "Nhân viên phòng khám đã nhận tin nhắn của bạn và sẽ trả lời ngay tại đây. "
    f"Gửi /{END_COMMAND} nếu bạn muốn mình trả lời tự động lại."
)
CLOSED_BY_STAFF = (
    "Nhân viên phòng khám đã kết thúc phần hỗ trợ. Từ giờ mình (trợ lý tự động) trả lời bạn như trước; "
    "bạn cứ đặt câu hỏi nhé."
)
CLOSED_BY_PATIENT = (
    "Đã kết thúc phần hỗ trợ của nhân viên. Từ giờ mình trả lời bạn như trước; bạn cứ đặt câu hỏi nhé."
)
NOTHING_OPEN = "Hiện bạn không có yêu cầu hỗ trợ nào đang mở; mình vẫn đang trả lời bạn như bình thường."
OFFER_LINE = "Nếu bạn muốn, nhân viên phòng khám có thể trả lời trực tiếp: bấm “{ask}”."
END_BUTTON = "Kết thúc hỗ trợ"

# In the staff topic
TOPIC_CLOSED_BY_STAFF = "✅ Đã kết thúc hỗ trợ ({who}). Bot trả lời bệnh nhân như trước."
TOPIC_CLOSED_BY_PATIENT = "✅ Bệnh nhân đã kết thúc hỗ trợ. Bot trả lời bệnh nhân như trước."
TOPIC_REMINDER = (
    "⏰ {label} đang chờ nhân viên trả lời từ {since} (mở lúc {opened}). Trả lời ngay trong chủ đề này, "
    "hoặc gửi /xong nếu không cần hỗ trợ nữa."
)
TOPIC_ALREADY_CLOSED = "Yêu cầu hỗ trợ này đã kết thúc rồi."
# A reply / close made from the clinic console, as the staff group reads it in the topic
TOPIC_CONSOLE_REPLY = "👩‍⚕️ {email} (trả lời từ trang quản trị): {text}"
TOPIC_CLOSED_BY_CONSOLE = (
    "✅ Đã kết thúc hỗ trợ ({email}, trên trang quản trị). Bot trả lời bệnh nhân như trước."
)
EMERGENCY_MARK = "🚨 KHẨN CẤP (bot đã gửi hướng dẫn gọi 115 cho bệnh nhân)"
ATTACHMENT_NOTE = {
    "photo": "[đã gửi một ảnh — bot không chuyển tệp; nếu cần xem, hãy hỏi bệnh nhân cách gửi]",
    "document": "[đã gửi một tệp — bot không chuyển tệp]",
    "voice": "[đã gửi một tin nhắn thoại — bot không chuyển tệp]",
    "other": "[đã gửi một nội dung không phải chữ (nhãn dán, video…) — bot không chuyển]",
}


def patient_line(user_id: int, text: str, *, emergency: bool = False) -> str:
    """A patient's message as staff read it in the topic."""
    body = f"👤 {label(user_id)}: {text}"
    return f"{EMERGENCY_MARK}\n{body}" if emergency else body


def staff_line(text: str) -> str:
    """A staff member's message as the patient reads it."""
    return f"{STAFF_PREFIX} {text}"


def reminder(user_id: int, minutes: int, opened: str) -> str:
    """The worker's reminder in a topic nobody answered."""
    since = f"{minutes} phút" if minutes < 120 else f"{minutes // 60} giờ"
    return TOPIC_REMINDER.format(label=label(user_id), since=since, opened=opened)
