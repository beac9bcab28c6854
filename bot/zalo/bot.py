"""The Zalo channel logic: one verified webhook event in, the right messages out through ``ZaloClient``.

Everything patients can do on Telegram works here through ChatService, as a user of channel ``zalo``:

* ``follow`` → greeting, privacy notice, medical disclaimer and the role picker (``#role:<id>`` buttons).
* Text → an answer; follow-up questions as ``oa.query.hide`` buttons with payload ``#sq:<set_id>:<i>``.
  A tapped button comes back as an ordinary text message, so every payload is validated like typed text:
  an unknown, expired, malformed or other user's ``#sq`` gets a polite message and changes nothing.
* Buttons under an answer (a Zalo message carries at most ``MAX_BUTTONS``, 5): suggestions plus 👍 / 👎
  (``#fb:<message_id>:1|-1``) when the answer cites the KB. A longer list (every topic of a role, one topic's
  questions) is paged: the last button, "Xem thêm (n)" (``#more:<set_id>:<start>``), sends the next page
  as a new message with its own buttons, so every item of the stored set (up to 30) is a tap away; a topic
  list's text also names every topic, and typing "chủ đề <tên>" opens one.
* A reply that says the question belongs to another section (``Reply.switch_role``) has "➡️ Chuyển sang mục
  …" first (``#xr:<message_id>``): the switch and the answer to the same question there, validated by the
  service from the stored reply like any payload.
* Typed commands (with or without diacritics, with or without a leading ``/``): "chuyên khoa"
  (``/chuyenkhoa``) → role picker; "xoá dữ liệu" (``/xoadulieu``) → a confirmation with two buttons
  (``#erase:yes`` / ``#erase:no``); "trợ giúp" (``/help``) → help.
* A user with no role yet gets the role picker and is asked to send the question again after choosing.
* Clinician roles are for clinic staff only (``ChatService.roles_for`` / ``choose_role``; staff on Zalo:
  ``zalo:<user id>`` in ``CLINICIAN_IDS`` or the database admin flag): a patient's picker shows the patient
  roles, a typed ``#role:doctor_…`` gets a polite "for the clinic's health professionals" and that picker, and
  a patient still holding a clinician role from before is asked to pick a patient role instead of an answer.
  An emergency never waits for a role: the triage guard (``ChatService.guard``, called by the webhook before
  the dedupe claim and the lock) has already answered it from the text alone (115 first); the picker follows.
* Images, stickers, audio, files… → "vui lòng gõ câu hỏi".
* Fair use (``bot/fair_use.py``): every message event (typed text, a tapped button, a sticker…) counts
  against the sender's per-minute and per-day limits (``ChatService.admit``; follow / unfollow do not, nor
  does an emergency, which the guard has answered). One over a limit is not handled; the first of a window
  gets the notice.
* Sending errors: 230 (no interaction for 7 days) marks the user inactive (``inactive_reason='zalo_230'``)
  and nothing more is sent to them until they write again (a message from them reactivates them); other
  errors are logged and, where a plain text can still get through, the user is told to try again.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from bot import handoff as ho
from bot.logs import redact
from bot.service import ChatService, Emergency, Reply, RoleChoice
from bot.zalo import CHANNEL
from bot.zalo.client import MAX_BUTTONS, Button, Recipient, ZaloAPIError, ZaloClient, ZaloUserUnreachable
from db import users
from db.settings import Settings
from db.users import User
from engine import fold_plain, load_roles

log = logging.getLogger("medbot.zalo")

SUGGESTION_RE = re.compile(r"^#sq:(\d{1,18}):(\d{1,3})$")
ROLE_RE = re.compile(r"^#role:([A-Za-z0-9_\-]{1,64})$")
FEEDBACK_RE = re.compile(r"^#fb:(\d{1,18}):(-1|1)$")
MORE_RE = re.compile(r"^#more:(\d{1,18}):(\d{1,3})$")
SWITCH_RE = re.compile(r"^#xr:(\d{1,18})$")

TEXT_EVENTS = {"user_send_text", "anonymous_send_text"}
OTHER_MESSAGE_EVENTS = {
    "user_send_image", "user_send_gif", "user_send_sticker", "user_send_audio", "user_send_video",
    "user_send_file", "user_send_link", "user_send_location", "user_send_business_card",
    "anonymous_send_image", "anonymous_send_sticker", "anonymous_send_file",
}  # fmt: skip

WELCOME = (
    "Chào mừng bạn đến với trợ lý sức khỏe của phòng khám trên Zalo! 👋\n\n"
    "Mình trả lời câu hỏi sức khỏe dựa trên tài liệu hỏi đáp của phòng khám; mỗi câu trả lời cho biết nguồn của nó.\n\n"
    "🔒 Tin nhắn của bạn được lưu lại để trả lời và cải thiện dịch vụ. "
    'Bạn có thể gõ "xoá dữ liệu" bất cứ lúc nào để xoá toàn bộ dữ liệu của mình.'
)
PICK_ROLE = "Bạn vui lòng chọn chuyên khoa muốn hỏi:"
PICK_ROLE_FIRST = "Trước khi hỏi, bạn vui lòng chọn chuyên khoa, rồi gửi lại câu hỏi giúp mình nhé."
ROLE_SET = "Đã chọn: {label}.\n\n{greeting}\n\nBạn cứ gõ câu hỏi nhé."
ROLE_UNKNOWN = "Chuyên khoa này không có. Bạn vui lòng chọn lại:"
STAFF_ONLY_ROLE = (
    "Mục này dành riêng cho nhân viên y tế của phòng khám. "
    "Bạn vui lòng chọn một chuyên khoa dành cho bệnh nhân:"
)
STAFF_ROLE_WITHDRAWN = (
    "Chuyên khoa {label} dành riêng cho nhân viên y tế của phòng khám. "
    "Bạn vui lòng chọn một chuyên khoa dành cho bệnh nhân, rồi gửi lại câu hỏi giúp mình nhé."
)
NOT_TEXT = (
    "Hiện mình chỉ đọc được tin nhắn chữ 🙏 Bạn vui lòng gõ câu hỏi của mình, ví dụ: "
    '"Răng bị ê buốt khi uống nước lạnh thì sao?"'
)
SUGGESTION_EXPIRED = (
    "Câu hỏi gợi ý này đã hết hạn hoặc không còn dùng được. Bạn vui lòng gõ lại câu hỏi của mình nhé."
)
MORE_TITLE = "➡️ Xem thêm ({n})"
MORE_PAGE = "Các lựa chọn tiếp theo ({first}–{last} trên {total}), bạn bấm vào mục muốn xem nhé:"
FEEDBACK_THANKS = "Cảm ơn bạn đã góp ý! Ý kiến của bạn giúp phòng khám cải thiện câu trả lời."
FEEDBACK_UNKNOWN = "Mình không tìm thấy câu trả lời này để ghi nhận góp ý, bạn thông cảm nhé."
ERASE_CONFIRM = (
    "Bạn có chắc muốn xoá toàn bộ dữ liệu của mình (lịch sử trò chuyện, chuyên khoa đã chọn, góp ý)? "
    "Thao tác này không thể hoàn tác."
)
ERASED = "Đã xoá toàn bộ dữ liệu của bạn. Khi cần, bạn cứ nhắn tin để bắt đầu lại nhé."
ERASE_CANCELLED = "Đã huỷ, dữ liệu của bạn vẫn được giữ nguyên."
HELP = (
    "Bạn có thể:\n"
    "• Gõ câu hỏi sức khỏe bằng tiếng Việt (có dấu hoặc không dấu).\n"
    "• Bấm vào câu hỏi gợi ý bên dưới mỗi câu trả lời.\n"
    '• Gõ "chuyên khoa" để đổi chuyên khoa.\n'
    '• Gõ "xoá dữ liệu" để xoá dữ liệu của bạn.\n\n'
    "Khi cấp cứu, hãy gọi ngay 115."
)
FAILED = "Xin lỗi, mình đang gặp sự cố khi trả lời. Bạn vui lòng gửi lại câu hỏi sau ít phút nhé."

ROLE_COMMANDS = {"chuyen khoa", "doi chuyen khoa", "chuyenkhoa", "/chuyenkhoa", "/start", "bat dau"}
ERASE_COMMANDS = {"xoa du lieu", "xoadulieu", "/xoadulieu", "xoa du lieu cua toi"}
HELP_COMMANDS = {"tro giup", "/help", "help", "huong dan", "/trogiup"}
# The patient ends a staff handoff (bot.handoff): typed, or the button under "a staff member answers here".
END_HANDOFF = "#ketthuc"
END_HANDOFF_COMMANDS = {"/ketthuc", "ketthuc", "ket thuc", "ket thuc ho tro"}
ATTACHMENT_KINDS = {"image": "photo", "gif": "photo", "file": "document", "audio": "voice", "voice": "voice"}


def command_of(text: str) -> str:
    """A typed message as a comparable command: folded, without punctuation at the ends."""
    return " ".join(fold_plain(text).strip(" .!?").split())


@dataclass(slots=True)
class Incoming:
    """The parts of a verified event the channel needs."""

    event: str
    sender: str  # the Zalo user id (or anonymous id)
    recipient: Recipient  # how to address the answer
    external_id: str  # users.external_id: the user id, or "anon:<id>" for anonymous chats
    msg_id: str | None
    text: str
    display_name: str | None = None


def parse_event(event: dict[str, Any]) -> Incoming | None:
    """The sender and message of an event we act on; None for events we ignore (OA echoes, seen, …)."""
    name = str(event.get("event_name", ""))
    message = event.get("message") if isinstance(event.get("message"), dict) else {}
    assert isinstance(message, dict)
    msg_id = str(message["msg_id"]) if message.get("msg_id") is not None else None
    if name in ("follow", "unfollow"):
        follower = event.get("follower") or {}
        uid = str(follower.get("id", "")) if isinstance(follower, dict) else ""
        if not uid:
            return None
        return Incoming(name, uid, {"user_id": uid}, uid, None, "")
    if name in TEXT_EVENTS or name in OTHER_MESSAGE_EVENTS:
        sender = event.get("sender") or {}
        uid = str(sender.get("id", "")) if isinstance(sender, dict) else ""
        if not uid:
            return None
        if name.startswith("anonymous_"):
            conversation = str(message.get("conversation_id", ""))
            recipient = {"anonymous_id": uid, "conversation_id": conversation}
            external = f"anon:{uid}"
        else:
            recipient, external = {"user_id": uid}, uid
        text = str(message.get("text", "")) if name in TEXT_EVENTS else ""
        return Incoming(name, uid, recipient, external, msg_id, text)
    return None


def dedupe_key(incoming: Incoming, event: dict[str, Any]) -> str | None:
    """What ``processed_updates`` records: the message id, or event+user+timestamp for follow events."""
    if incoming.msg_id:
        return incoming.msg_id
    if incoming.event in ("follow", "unfollow"):
        return f"{incoming.event}:{incoming.sender}:{event.get('timestamp', '')}"
    return None


class ZaloBot:
    def __init__(self, service: ChatService, client: ZaloClient, settings: Settings) -> None:
        self.service = service
        self.client = client
        self.settings = settings
        self.roles = {key: role for key, role in load_roles().items() if key in service.roles}

    # -- entry point (called under the chat lock, after the dedupe claim) -------------------------------

    async def handle(self, incoming: Incoming, emergency: Emergency | None = None) -> None:
        """One verified event. ``emergency``: what the triage guard found in its text (answer already sent,
        except for a clinician's role, whose clinical answer carries the card)."""
        if incoming.event == "unfollow":
            await users.set_active(self.service.pool, CHANNEL, incoming.external_id, False, "zalo_unfollow")
            log.info("zalo.unfollow user=%s", incoming.external_id)
            return
        # The user wrote (or followed) again: the 7-day window is open, we may answer again.
        user = await self.service.sender(CHANNEL, incoming.external_id, incoming.display_name)
        try:
            if incoming.event != "follow":
                admission = await self.service.admit(user, emergency=emergency)
                if not admission.admitted:
                    if admission.notice:
                        await self.send_text(user, incoming.recipient, admission.notice)
                    return
            if incoming.event == "follow":
                await self.welcome(user, incoming.recipient)
            elif incoming.event in TEXT_EVENTS:
                await self.on_text(user, incoming.recipient, incoming.text, emergency)
            elif not await self.service.relay_attachment(user, attachment_kind(incoming.event)):
                await self.send_text(user, incoming.recipient, NOT_TEXT)
        except Exception:
            log.exception("zalo.handle_failed user=%s event=%s", user.id, incoming.event)
            await self.send_text(user, incoming.recipient, FAILED)

    async def on_text(
        self, user: User, recipient: Recipient, text: str, emergency: Emergency | None = None
    ) -> None:
        text = text.strip()
        if not text:
            await self.send_text(user, recipient, NOT_TEXT)
            return
        if text.startswith("#sq:"):
            await self.on_suggestion(user, recipient, text)
            return
        if text.startswith("#role:"):
            await self.on_role(user, recipient, text)
            return
        if text.startswith("#fb:"):
            await self.on_feedback(user, recipient, text)
            return
        if text.startswith("#more:"):
            await self.on_more(user, recipient, text)
            return
        if text.startswith("#xr:"):
            await self.on_switch(user, recipient, text)
            return
        if text in ("#erase:yes", "#erase:no"):
            await self.on_erase(user, recipient, text == "#erase:yes")
            return
        command = command_of(text)
        if text == END_HANDOFF or command in END_HANDOFF_COMMANDS:
            await self.send_text(user, recipient, await self.service.end_handoff(user))
            return
        if command in ROLE_COMMANDS:
            await self.role_picker(user, recipient, PICK_ROLE)
            return
        if command in ERASE_COMMANDS:
            buttons = [Button("Xoá dữ liệu", "#erase:yes"), Button("Huỷ", "#erase:no")]
            await self._deliver(user, recipient, self.client.send_buttons(recipient, ERASE_CONFIRM, buttons))
            return
        if command in HELP_COMMANDS:
            await self.send_text(user, recipient, HELP)
            return
        await self.answer(user, recipient, text, emergency)

    async def ask_for_role(self, user: User, recipient: Recipient, withheld: str | None) -> None:
        """The picker before an answer; it says why when the user holds a clinician role (``withheld``) but is
        not staff."""
        if withheld in self.roles:
            text = STAFF_ROLE_WITHDRAWN.format(label=self.roles[withheld].label)
        else:
            text = PICK_ROLE_FIRST
        await self.role_picker(user, recipient, text)

    # -- flows -----------------------------------------------------------------------------------------

    async def welcome(self, user: User, recipient: Recipient) -> None:
        text = f"{WELCOME}\n\n{self.settings.disclaimer}\n\n{PICK_ROLE}"
        await self.role_picker(user, recipient, text)

    async def role_picker(self, user: User, recipient: Recipient, text: str) -> None:
        allowed = set(self.service.roles_for(user))
        buttons = [Button(role.label, f"#role:{key}") for key, role in self.roles.items() if key in allowed]
        # More roles than Zalo's 5 buttons: the rest follow in further messages.
        for start in range(0, len(buttons), MAX_BUTTONS):
            body = text if start == 0 else "Chuyên khoa khác:"
            chunk = buttons[start : start + MAX_BUTTONS]
            sent = await self._deliver(user, recipient, self.client.send_buttons(recipient, body, chunk))
            if not sent:
                return

    async def on_role(self, user: User, recipient: Recipient, text: str) -> None:
        match = ROLE_RE.match(text)
        key = match.group(1) if match else ""
        choice = await self.service.choose_role(user, key) if key in self.roles else RoleChoice.UNKNOWN
        if choice is not RoleChoice.SET:
            text = STAFF_ONLY_ROLE if choice is RoleChoice.STAFF_ONLY else ROLE_UNKNOWN
            await self.role_picker(user, recipient, text)
            return
        role = self.roles[key]
        log.info("zalo.role_set user=%s role=%s", user.id, key)
        await self.send_text(user, recipient, ROLE_SET.format(label=role.label, greeting=role.greeting))

    async def on_suggestion(self, user: User, recipient: Recipient, text: str) -> None:
        match = SUGGESTION_RE.match(text)
        question = None
        if match:
            question = await self.service.suggestion_text(user, int(match.group(1)), int(match.group(2)))
        if question is None:
            log.info("zalo.suggestion_rejected user=%s payload=%s", user.id, redact(text))
            await self.send_text(user, recipient, SUGGESTION_EXPIRED)
            return
        await self.answer(user, recipient, question)

    async def on_more(self, user: User, recipient: Recipient, text: str) -> None:
        """The "Xem thêm" button: the next page of a stored suggestion set (validated like a tapped suggestion)."""
        match = MORE_RE.match(text)
        questions = await self.service.suggestion_set(user, int(match.group(1))) if match else None
        start = int(match.group(2)) if match else 0
        if match is None or not questions or not 0 < start < len(questions):
            log.info("zalo.more_rejected user=%s payload=%s", user.id, redact(text))
            await self.send_text(user, recipient, SUGGESTION_EXPIRED)
            return
        set_id = int(match.group(1))
        buttons = page_buttons(set_id, questions, start, MAX_BUTTONS)
        shown = sum(1 for b in buttons if b.payload.startswith("#sq:"))
        body = MORE_PAGE.format(first=start + 1, last=start + shown, total=len(questions))
        await self._deliver(user, recipient, self.client.send_buttons(recipient, body, buttons))

    async def on_switch(self, user: User, recipient: Recipient, text: str) -> None:
        """ "Chuyển sang mục …" (``#xr:<reply id>``): switch to the section that reply offered and answer the
        same question there; the offer is read back from the stored reply (``ChatService.switch_and_answer``),
        so a typed or stale payload changes nothing."""
        match = SWITCH_RE.match(text)
        reply = (
            await self.service.switch_and_answer(user, int(match.group(1)), channel=CHANNEL)
            if match
            else None
        )
        if reply is None:
            log.info("zalo.switch_rejected user=%s payload=%s", user.id, redact(text))
            await self.send_text(user, recipient, SUGGESTION_EXPIRED)
            return
        log.info("zalo.role_set user=%s role=%s", user.id, user.role)
        body = f"❓ {reply.asked}\n\n{render_text(reply)}" if reply.asked else render_text(reply)
        await self._deliver(user, recipient, self.client.send_answer(recipient, body, answer_buttons(reply)))

    async def on_feedback(self, user: User, recipient: Recipient, text: str) -> None:
        match = FEEDBACK_RE.match(text)
        ok = bool(match) and await self.service.rate(user, int(match.group(1)), int(match.group(2)))  # type: ignore[union-attr]
        await self.send_text(user, recipient, FEEDBACK_THANKS if ok else FEEDBACK_UNKNOWN)

    async def on_erase(self, user: User, recipient: Recipient, confirmed: bool) -> None:
        if not confirmed:
            await self.send_text(user, recipient, ERASE_CANCELLED)
            return
        await self.service.erase(user)
        try:  # the user row is gone: nothing to mark if this fails
            await self.client.send_text(recipient, ERASED)
        except ZaloAPIError as exc:
            log.error("zalo.send_failed after=erase code=%s error=%s", exc.code, exc.message)

    async def answer(
        self, user: User, recipient: Recipient, text: str, emergency: Emergency | None = None
    ) -> None:
        reply = await self.service.respond(user, text, channel=CHANNEL, emergency=emergency)
        if reply.needs_role:  # an emergency is answered already: the picker follows it
            await self.ask_for_role(user, recipient, reply.withheld_role)
            return
        if reply.delivered or reply.relayed:  # sent by the guard, or gone to the staff (a handoff is open)
            return
        if reply.handoff_opened:  # "a staff member answers here", with the patient's way out
            end = [Button(ho.END_BUTTON, END_HANDOFF)]
            await self._deliver(user, recipient, self.client.send_answer(recipient, reply.text, end))
            return
        await self._deliver(
            user, recipient, self.client.send_answer(recipient, render_text(reply), answer_buttons(reply))
        )
        if emergency is not None:  # a clinician's answer carries the card after it
            emergency.delivered = True

    # -- sending ---------------------------------------------------------------------------------------

    async def send_text(self, user: User, recipient: Recipient, text: str) -> bool:
        return await self._deliver(user, recipient, self.client.send_text(recipient, text))

    async def push(self, external_id: str, text: str) -> bool:
        """A message the bot starts (reports, reminders): skipped for users marked inactive (230, unfollow)."""
        user = await users.get(self.service.pool, CHANNEL, external_id)
        if user is None or not user.active:
            log.info(
                "zalo.push_skipped user=%s reason=%s", external_id, "unknown" if user is None else "inactive"
            )
            return False
        return await self.send_text(user, {"user_id": external_id}, text)

    async def _deliver(self, user: User, recipient: Recipient, sending: Any) -> bool:
        """Await one send; False when it failed. On 230 the user is marked inactive and nothing more is
        sent; on other errors the failure is logged and the user told, if a plain text gets through."""
        try:
            await sending
            return True
        except ZaloUserUnreachable as exc:
            await users.set_active(self.service.pool, CHANNEL, user.external_id, False, "zalo_230")
            user.active = False
            log.warning("zalo.user_unreachable user=%s code=%s", user.id, exc.code)
            return False
        except ZaloAPIError as exc:
            log.error("zalo.send_failed user=%s code=%s error=%s", user.id, exc.code, exc.message)
            if exc.code is not None and exc.code != -216:
                # A plain short text often still gets through (e.g. when a button payload was refused).
                try:
                    await self.client.send_text(recipient, FAILED)
                except ZaloAPIError as again:
                    log.error("zalo.inform_failed user=%s code=%s", user.id, again.code)
            return False


def attachment_kind(event: str) -> str:
    """``user_send_image`` → "photo", … (``bot.handoff.ATTACHMENT_NOTE``'s kinds)."""
    return ATTACHMENT_KINDS.get(event.removeprefix("user_send_").removeprefix("anonymous_send_"), "other")


def render_text(reply: Reply) -> str:
    """The answer as Zalo plain text. Its source line is the engine's: KB codes for clinicians, a plain line
    naming the clinic's material for patients (engine/answers.py)."""
    return reply.text.strip()


def page_buttons(set_id: int, questions: list[str], start: int, room: int) -> list[Button]:
    """The suggestions from ``start`` in ``room`` buttons: all of them when they fit, else ``room - 1`` and
    "Xem thêm (n)" (``#more:<set>:<next>``) for the rest."""
    rest = questions[start:]
    if len(rest) <= room:
        return [Button(q, f"#sq:{set_id}:{start + i}") for i, q in enumerate(rest)]
    shown = max(room - 1, 1)
    buttons = [Button(q, f"#sq:{set_id}:{start + i}") for i, q in enumerate(rest[:shown])]
    return [*buttons, Button(MORE_TITLE.format(n=len(rest) - shown), f"#more:{set_id}:{start + shown}")]


def answer_buttons(reply: Reply) -> list[Button]:
    """The switch to the section that answers (``#xr:<message_id>``) when the reply offers one, suggestions
    (``#sq:<set>:<i>``, paged with "Xem thêm") and, under a KB answer, 👍 / 👎 — at most ``MAX_BUTTONS``."""
    with_feedback = bool(reply.citations) and reply.message_id is not None
    room = MAX_BUTTONS - 2 if with_feedback else MAX_BUTTONS
    buttons: list[Button] = []
    if reply.switch_role and reply.switch_label and reply.message_id is not None:
        buttons.append(Button(f"➡️ {reply.switch_label}", f"#xr:{reply.message_id}"))
        room -= 1
    if reply.suggestion_set_id is not None and reply.suggestions:
        buttons += page_buttons(reply.suggestion_set_id, reply.suggestions, 0, room)
    if with_feedback:
        buttons += [
            Button("👍 Hữu ích", f"#fb:{reply.message_id}:1"),
            Button("👎 Chưa đúng", f"#fb:{reply.message_id}:-1"),
        ]
    return buttons
