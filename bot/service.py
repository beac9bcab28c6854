"""The channel-agnostic conversation service: every channel (Telegram, Zalo, console) talks to the engine here.

One call per user message: load or create the user and the active conversation, run the medical flow,
store both turns (with trace, latency, tokens) and the suggestion set in one transaction, and return a
``Reply`` the channel renders. Ordering across processes is the channel's job (``chat_lock``), because
the lock must also cover sending the reply.

Inside ``chat_lock`` the service's own queries (``db``) run on the connection that holds the lock: one
connection for the whole update instead of one borrowed per query. The engine keeps its own pool
connections (it may run several things at once).

Triage comes first (``guard``): every channel passes every inbound text through it *before* anything that
needs the database (dedupe, chat lock, user), whatever state the chat is in. An emergency gets its answer at
once from the text alone; what follows (the chat state's own handling, storing the exchange) is best effort,
so a database or LLM failure can delay or lose the record but never the 115 answer. A clinician's role is the
one exception to "card first": it gets the clinical answer with the card after it, and the card alone if that
fails.

Clinician roles (``clinician = true`` in ``engine/data/roles.toml``) belong to clinic staff only
(``bot.access.StaffRule``): ``roles_for`` is what a user's role picker offers, ``choose_role`` refuses a
clinician role to anyone else (``RoleChoice.STAFF_ONLY``), and ``answer_role`` withholds one a user still
holds from before (picked before the rule existed, or no longer staff): such a user is asked to pick a
patient role and is never answered, nor carded in an emergency, as a clinician.

Fair use (``bot.fair_use``): a channel asks ``admit`` before handling a sender's message (after the guard,
with what it found: an emergency is never counted nor refused; staff always pass) and drops a refused one,
sending the notice when there is one.
``handle_text`` runs the flow with ``llm_allowed`` False (the offline path) once the sender's daily LLM budget
is spent, and records the LLM requests each answer made.

Every other decision that does not depend on the platform is made here too, so a channel only translates
between its platform and the service: ``sender`` (the user behind an update, active again once they write),
``respond`` (a patient's message: answered, or ``needs_role`` and the channel shows its picker),
``switch_and_answer`` (the button under a "no match here (or only a list), but that section has it" reply:
``Reply.switch_role``; the offer is read back from the stored reply, never from what the channel sends),
``is_staff`` / ``is_admin`` (``bot.access``), ``erase`` (the user's rows and their queued messages). The
engine's answer reaches the channel typed: ``Reply.result`` is the flow's ``engine.result.FlowResult``.

The staff handoff (``bot.handoff``; with ``handoff`` attached, a ``HandoffDesk``): ``respond`` relays the
message of a patient with an open handoff to the staff topic instead of answering it (``Reply.relayed``; an
emergency was answered by the guard first and is relayed marked 🚨); ``handle_text`` opens a handoff when the
flow marks the message (``FlowResult.handoff``: asked for a person, complained) and offers one after
``UNANSWERED_STREAK`` replies in a row without a good answer; ``relay_to_patient`` (a staff message in a
topic, through the patient channel's outbox), ``console_reply`` (the same from the clinic console, also posted
in the topic when there is one), ``close_handoff`` / ``console_close`` (staff) and ``end_handoff`` (the
patient) do the rest; the messages relayed both ways are stored in the patient's conversation
(``conversations.store_relayed``: not the bot's exchanges, so not its memory nor its statistics), each staff
reply and close with who did it. The desk's Telegram group is optional (``HandoffDesk.desk`` None: console
only, no topic). Without a ``HandoffDesk``, or for a channel it cannot deliver to, no handoff opens: the flow's
own reply (the clinic's phone, booking link) goes out as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

import asyncpg

from bot import handoff as ho
from bot.access import StaffRule
from bot.fair_use import ADMITTED, Admission, FairUse
from bot.logs import redact
from db import conversations, feedback, handoffs, outbox, suggestions, users
from db.conversations import StoredTurn
from db.locks import advisory_lock
from db.stores import pair_turns
from db.types import Executor
from db.users import User
from engine import ClinicProfile, FlowResult, MemoryRead, triage

log = logging.getLogger("medbot.service")

# The engine entry point: takes the shared store, returns the flow's typed result (DESIGN.md section 4).
AnswerFn = Callable[[dict[str, Any]], Awaitable[FlowResult]]

# How long the guard waits for the user's role (one indexed row) before treating the sender as a patient.
ROLE_LOOKUP_TIMEOUT_S = 1.0
# Buttons stored per reply: a full topic list or one topic's questions (channels page them).
MAX_SUGGESTIONS = 30
# How long a clinician's clinical answer may take before the emergency card goes out on its own.
CLINICIAN_CARD_DEADLINE_S = 3.0

# The connection holding the current task's chat lock (tasks started inside inherit a copy: none do DB work).
_lock_connection: ContextVar[asyncpg.Connection | None] = ContextVar(
    "medbot_chat_lock_connection", default=None
)


@dataclass(slots=True)
class Reply:
    """What a channel shows for one answered message. ``text`` is plain text; channels escape it."""

    text: str
    suggestions: list[str] = field(default_factory=list)
    suggestion_set_id: int | None = None
    message_id: int | None = None  # the stored bot message, target of 👍/👎
    citations: list[str] = field(default_factory=list)
    input_type: str = ""
    red_flag: bool = False
    retrieval_score: float = 0.0
    latency_ms: int = 0
    result: FlowResult | None = None  # the engine's whole result; None when the flow did not run
    delivered: bool = False  # already sent (the emergency answer, sent by the guard): store only
    needs_role: bool = False  # not answered: the user must pick a role first (the channel shows its picker)
    # with needs_role: the clinician role the user holds but is not staff for
    withheld_role: str | None = None
    # no match (or a clarify) here, but this role's KB answers the message: a button (``switch_label``)
    # that calls ``ChatService.switch_and_answer`` with ``message_id``
    switch_role: str | None = None
    switch_label: str = ""
    asked: str = ""  # from ``switch_and_answer``: the message answered again in the new role
    relayed: bool = False  # a handoff is open: the message went to the staff topic, the bot says nothing
    handoff_opened: bool = False  # this reply tells the patient a staff member answers (channels add "end")


@dataclass(slots=True)
class Emergency:
    """An emergency found by the guard, handed to the chat state's own handling."""

    verdict: triage.Triage
    text: str  # the answer (card and disclaimer) as sent, or to send
    delivered: bool = False


class RoleChoice(Enum):
    """The outcome of a user picking a role."""

    SET = "set"
    UNKNOWN = "unknown"  # no such role
    STAFF_ONLY = "staff_only"  # a clinician role, and the user is not clinic staff


Conversation = Literal["active", "new", "keep"]
Deliver = Callable[[str], Awaitable[object]]
Handle = Callable[[Emergency | None], Awaitable[object]]


class ChatService:
    def __init__(
        self,
        pool: asyncpg.Pool,
        answer: AnswerFn,
        *,
        default_role: str,
        roles: list[str],
        clinician_roles: frozenset[str] = frozenset(),
        staff: StaffRule | None = None,
        disclaimer: str = "",
        clinic: ClinicProfile | None = None,
        fair_use: FairUse | None = None,
        history_turns: int = 3,
    ) -> None:
        self.pool = pool
        self.answer = answer
        self.default_role = default_role
        self.roles = roles
        self.clinician_roles = clinician_roles
        self.staff = staff or StaffRule()
        self.disclaimer = disclaimer
        self.clinic = clinic or ClinicProfile()
        self.fair_use = fair_use  # None: no limits (tools, tests)
        self.history_turns = history_turns  # turns of memory read for the flow (EngineConfig.history_turns)
        self.handoff: ho.HandoffDesk | None = None  # the staff handoff (bot.wiring.attach_handoff)

    # -- triage first ------------------------------------------------------------------------------------

    def emergency_text(self, verdict: triage.Triage, *, clinician: bool = False) -> str:
        """The emergency answer as a patient sees it (card, clinic phone, disclaimer), or a clinician's card."""
        card = triage.answer(
            verdict,
            clinic_phone=self.clinic.phone or None,
            clinic_name=self.clinic.name or None,
            clinician=clinician,
        )
        return f"{card}\n\n{self.disclaimer}" if self.disclaimer else card

    async def guard(
        self, channel: str, external_id: str | int, text: str, deliver: Deliver, handle: Handle
    ) -> None:
        """Run ``handle`` (the chat state's own handling of ``text``) behind the emergency check.

        Not an emergency: ``handle(None)``, errors propagate as before. An emergency: the answer is delivered
        first (a clinician's role: after ``handle``, which answers clinically, and only if that failed), then
        ``handle(emergency)`` runs best effort; its errors are logged, not raised, because the sender already
        has what matters and a redelivery would only repeat the card."""
        verdict = triage.triage(text)
        if not verdict.is_emergency:
            await handle(None)
            return
        log.info("triage.emergency channel=%s categories=%s", channel, ",".join(verdict.categories))
        clinician = await self._is_clinician(channel, external_id)
        emergency = Emergency(verdict, self.emergency_text(verdict, clinician=clinician))
        if not clinician:
            await deliver(emergency.text)
            emergency.delivered = True
        work = asyncio.ensure_future(handle(emergency))
        try:
            if clinician:  # the clinical answer carries the card, unless it is slow or fails
                await asyncio.wait_for(asyncio.shield(work), CLINICIAN_CARD_DEADLINE_S)
            else:
                await work
        except TimeoutError:
            log.warning("triage.clinician_answer_slow channel=%s", channel)
        except Exception:
            log.exception("triage.after_emergency_failed channel=%s", channel)
        if not emergency.delivered:
            await deliver(emergency.text)
            emergency.delivered = True
        if not work.done():
            try:
                await work
            except Exception:
                log.exception("triage.after_emergency_failed channel=%s", channel)

    async def _is_clinician(self, channel: str, external_id: str | int) -> bool:
        """Whether the sender's role is a clinician's; False when that cannot be known quickly."""
        if not self.clinician_roles:
            return False
        try:
            async with asyncio.timeout(ROLE_LOOKUP_TIMEOUT_S):
                user = await users.get(self.pool, channel, str(external_id))
        except Exception as exc:
            log.warning("triage.role_unknown channel=%s error=%r", channel, exc)
            return False
        return user is not None and user.role in self.clinician_roles and self.is_staff(user)

    @asynccontextmanager
    async def chat_lock(self, channel: str, chat_id: str | int) -> AsyncIterator[None]:
        """Serialise one chat's messages across every process (PostgreSQL advisory lock)."""
        async with advisory_lock(self.pool, "chat", f"{channel}:{chat_id}") as conn:
            token = _lock_connection.set(conn)
            try:
                yield
            finally:
                _lock_connection.reset(token)

    @property
    def db(self) -> Executor:
        """Where the service's queries go: the chat lock's connection inside ``chat_lock``, else the pool."""
        return _lock_connection.get() or self.pool

    async def user(self, channel: str, external_id: str | int, display_name: str | None = None) -> User:
        return await users.get_or_create(self.db, channel, str(external_id), display_name)

    async def sender(self, channel: str, external_id: str | int, display_name: str | None = None) -> User:
        """The user behind an incoming update (loaded or created); one marked inactive (blocked the bot,
        unreachable, unfollowed) is active again, because they wrote."""
        user = await self.user(channel, external_id, display_name)
        if not user.active:
            await users.set_active(self.db, channel, str(external_id), True, None)
            user.active = True
        return user

    # -- fair use ------------------------------------------------------------------------------------------

    async def admit(self, user: User, *, emergency: Emergency | None = None) -> Admission:
        """Count one message of ``user`` and say whether it is answered. An emergency (what the guard found in
        it) always is and is never counted; clinic staff always are, uncounted."""
        if self.fair_use is None or emergency is not None or self.is_staff(user):
            return ADMITTED
        admission = await self.fair_use.admit(self.db, user)
        if not admission.admitted:
            log.info(
                "fair_use.refused user=%s channel=%s notice=%s",
                user.id,
                user.channel,
                admission.notice is not None,
            )
        return admission

    async def _llm_budget(self, user: User, shared: dict[str, Any]) -> bool:
        """Whether ``user``'s message is on a daily LLM budget with room left (its calls are then recorded).
        Once the budget is spent the message is answered offline (``llm_allowed`` False); staff have none."""
        if self.fair_use is None or not self.fair_use.budgets_llm or self.is_staff(user):
            return False
        if await self.fair_use.llm_allowed(self.db, user):
            return True
        log.info("fair_use.llm_budget_spent user=%s channel=%s", user.id, user.channel)
        shared["llm_allowed"] = False
        return False

    # -- roles and staff -----------------------------------------------------------------------------------

    def is_staff(self, user: User) -> bool:
        """Clinic staff (``bot.access``): may hold clinician roles, use ``/verify`` and ``/guideline``."""
        return self.staff.is_staff(user)

    def is_admin(self, user: User) -> bool:
        """An administrator (``bot.access``): may import the KB and read statistics."""
        return self.staff.is_admin(user)

    def roles_for(self, user: User) -> list[str]:
        """The roles ``user`` may pick, in configuration order: clinician roles for staff only."""
        if self.is_staff(user):
            return list(self.roles)
        return [role for role in self.roles if role not in self.clinician_roles]

    def answer_role(self, user: User) -> str | None:
        """The role ``user`` is answered in; None when they have none or hold a clinician role without being
        staff (they are asked to pick again: ``withheld_role``)."""
        if self.withheld_role(user):
            return None
        return user.role

    def withheld_role(self, user: User) -> bool:
        """True when ``user`` still holds a clinician role but is not (or no longer) clinic staff."""
        return user.role in self.clinician_roles and not self.is_staff(user)

    async def choose_role(self, user: User, role: str) -> RoleChoice:
        if role not in self.roles:
            return RoleChoice.UNKNOWN
        if role in self.clinician_roles and not self.is_staff(user):
            log.warning("role.refused user=%s channel=%s role=%s", user.id, user.channel, role)
            return RoleChoice.STAFF_ONLY
        await users.set_role(self.db, user.id, role)
        await users.set_consent(self.db, user.id)
        user.role = role
        return RoleChoice.SET

    async def set_role(self, user: User, role: str) -> bool:
        """``choose_role``, True when the role was set."""
        return await self.choose_role(user, role) is RoleChoice.SET

    async def respond(
        self, user: User, text: str, *, channel: str, emergency: Emergency | None = None
    ) -> Reply:
        """A patient's message (typed, or a tapped suggestion) as every chat channel hands it over.

        Answered (``handle_text``) when ``user`` holds a configured role they may be answered in. Otherwise the
        reply is ``needs_role`` (with ``withheld_role`` when it is a clinician role and the user is not staff):
        the channel shows its role picker; an emergency the guard already answered is recorded first.
        With a staff handoff open the message is relayed to the staff instead (``Reply.relayed``)."""
        if self.handoff is not None:
            open_handoff = await handoffs.open_for_user(self.db, user.id)
            if (
                open_handoff is not None
                and open_handoff.topic_id is None
                and open_handoff.staff_chat_id is not None
            ):
                # Opening runs under this chat's lock, as this does: a handoff without its topic here is one
                # whose opening died half-way (nothing was promised): forget it and answer as usual.
                log.warning("handoff.unfinished_discarded id=%s user=%s", open_handoff.id, user.id)
                await handoffs.discard(self.db, open_handoff.id)
            elif open_handoff is not None:
                return await self._relay_to_staff(user, open_handoff, text, channel, emergency)
        role = self.answer_role(user)
        if role is None or role not in self.roles:
            if emergency is not None and emergency.delivered:
                await self.handle_text(user, text, channel=channel, emergency=emergency)
            withheld = user.role if self.withheld_role(user) else None
            return Reply(text="", needs_role=True, withheld_role=withheld)
        return await self.handle_text(user, text, channel=channel, emergency=emergency)

    async def handle_text(
        self,
        user: User,
        text: str,
        *,
        channel: str,
        emergency: Emergency | None = None,
        conversation: Conversation = "active",
    ) -> Reply:
        """Answer one message from ``user`` and store the exchange.

        ``conversation``: "active" (chat apps: the current one, a new one after an idle hour), "new" (this
        message starts a conversation of its own) or "keep" (the user's latest, however old: ``medbot ask
        --conversation``). With an ``emergency`` the guard already delivered, the exchange is only recorded
        (best effort) and the returned reply is marked ``delivered``."""
        if emergency is not None and emergency.delivered:
            return await self._record_emergency(user, text, channel, emergency)
        role = self.answer_role(user) or self.default_role
        started = time.perf_counter()
        shared: dict[str, Any] = {
            "role": role,
            "input": text,
            "user_id": user.id,
            "channel": channel,
            "trace": [],
            # where a message this role cannot answer may be pointed (the engine keeps the same kind)
            "switch_roles": self.roles_for(user),
        }
        budgeted = await self._llm_budget(user, shared)
        # The conversation and its memory in one round trip, read while the flow's first steps run (the
        # flow's LoadMemory waits for it). It uses this chat's connection: nothing else here does until the
        # read is done, and it is always waited for before returning.
        memory_read: asyncio.Future[MemoryRead] = asyncio.get_running_loop().create_future()
        opening = asyncio.ensure_future(self._open(user.id, role, conversation, memory_read))
        shared["memory_read"] = memory_read
        try:
            result = await self.answer(shared)
        except BaseException:
            opening.cancel()
            with contextlib.suppress(BaseException):
                await opening
            raise
        conversation_id = await opening
        shared["conversation_id"] = conversation_id
        bot_text, questions = result.text, [q for q in result.suggestions if q][:MAX_SUGGESTIONS]
        opened = False
        if self._can_hand_off(channel):
            if result.handoff:
                opened = await self._open_handoff(user, role, channel, result.handoff, conversation_id, text)
                if opened:
                    bot_text, questions = ho.opened_text(self.clinic), []
            elif await self._unanswered_streak(result, conversation_id) >= ho.UNANSWERED_STREAK:
                bot_text = f"{bot_text}\n\n{ho.OFFER_LINE.format(ask=ho.ASK_PERSON)}"
                questions = [ho.ASK_PERSON, *questions][:MAX_SUGGESTIONS]
        latency_ms = int((time.perf_counter() - started) * 1000)
        turn = StoredTurn(
            user_text=text,
            bot_text=bot_text,
            input_type=result.input_type,
            confidence=result.confidence,
            retrieval_score=result.retrieval_score,
            citations=list(result.citations),
            red_flag=result.red_flag,
            latency_ms=latency_ms,
            tokens_in=result.usage.prompt_tokens,
            tokens_out=result.usage.completion_tokens,
            trace=result.trace,
        )
        if budgeted and self.fair_use is not None and result.usage.calls:
            await self.fair_use.spent(self.db, user, result.usage.calls)
        # Both turns, the conversation's activity and the suggestion set: one statement (atomic by itself).
        _, out_id, set_id = await conversations.store_exchange(
            self.db, conversation_id, user.id, turn, questions
        )
        log.info(
            "message.answered user=%s role=%s type=%s score=%.3f ms=%d text=%s",
            user.id,
            role,
            turn.input_type,
            turn.retrieval_score or 0.0,
            latency_ms,
            redact(text),
        )
        switch = result.switch_role if result.switch_role in self.roles_for(user) else None
        return Reply(
            text=turn.bot_text,
            switch_role=switch,
            switch_label=result.switch_label if switch else "",
            suggestions=questions,
            suggestion_set_id=set_id,
            message_id=out_id,
            citations=turn.citations,
            input_type=turn.input_type or "",
            red_flag=turn.red_flag,
            retrieval_score=float(turn.retrieval_score or 0.0),
            latency_ms=latency_ms,
            result=result,
            handoff_opened=opened,
        )

    async def _open(
        self, user_id: int, role: str, conversation: Conversation, memory_read: asyncio.Future[MemoryRead]
    ) -> int:
        """The message's conversation (``conversation`` as in ``handle_text``); its memory goes to
        ``memory_read`` (the failure too, so that the flow does not wait for what will not come)."""
        try:
            opened = await conversations.open_with_memory(
                self.db, user_id, role, conversation, 2 * self.history_turns
            )
        except BaseException as exc:
            if not memory_read.done():
                memory_read.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
                memory_read.exception()  # retrieved: the flow may have finished without it
            raise
        if not memory_read.done():
            turns = pair_turns(opened.messages, self.history_turns)
            memory_read.set_result(MemoryRead(turns, opened.summary, opened.answered))
        return opened.conversation_id

    async def switch_and_answer(self, user: User, message_id: int, *, channel: str) -> Reply | None:
        """The "Chuyển sang mục …" button under a reply (``Reply.switch_role``): switch ``user`` to the role that
        reply offered (``choose_role``, recorded like any role pick) and answer the same message there. Checked
        here, whatever the channel sent: the reply must be this user's and have offered a role they may pick.
        None when it is not (expired, forged, someone else's)."""
        offer = await conversations.role_offer(self.db, message_id, user.id)
        if offer is None:
            return None
        role, question = offer
        if role not in self.roles_for(user) or await self.choose_role(user, role) is not RoleChoice.SET:
            log.warning("role.switch_refused user=%s channel=%s role=%s", user.id, channel, role)
            return None
        log.info("role.switched user=%s channel=%s role=%s message=%s", user.id, channel, role, message_id)
        reply = await self.handle_text(user, question, channel=channel)
        reply.asked = question
        return reply

    async def _record_emergency(
        self, user: User, text: str, channel: str, emergency: Emergency, *, handoff: bool = False
    ) -> Reply:
        """Store an emergency the guard answered: in the active conversation, or (``handoff``: typed during a
        staff handoff) in the handoff's, however long the patient was silent, next to its relayed messages."""
        role = self.answer_role(user) or self.default_role
        turn = StoredTurn(
            user_text=text,
            bot_text=emergency.text,
            input_type="emergency",
            confidence=1.0,
            retrieval_score=0.0,
            citations=[],
            red_flag=True,
            latency_ms=0,
            tokens_in=0,
            tokens_out=0,
            trace=[{"node": "guard", "action": "emergency", "triage": emergency.verdict.as_trace()}],
        )
        try:
            if handoff:
                conversation_id = await conversations.handoff_conversation(self.db, user.id)
            else:
                conversation_id = await conversations.active_conversation(self.db, user.id, role)
            _, out_id, _ = await conversations.store_exchange(self.db, conversation_id, user.id, turn, [])
        except Exception:
            log.exception("triage.store_failed user=%s channel=%s", user.id, channel)
            out_id = None
        return Reply(
            text=emergency.text, message_id=out_id, input_type="emergency", red_flag=True, delivered=True
        )

    async def suggestion_text(self, user: User, set_id: int, index: int) -> str | None:
        """The text behind a tapped suggestion, or None when it expired or is not this user's."""
        return await suggestions.question(self.db, set_id, index, user.id)

    async def suggestion_set(self, user: User, set_id: int) -> list[str] | None:
        """Every text of a suggestion set of ``user`` (a page of buttons to show), or None when expired."""
        return await suggestions.questions(self.db, set_id, user.id)

    async def rate(self, user: User, message_id: int, rating: int) -> bool:
        return await feedback.record(self.db, user.id, message_id, rating)

    async def erase(self, user: User) -> None:
        """Forget ``user``: every row about them (``db.users.erase``; their handoffs go by cascade), what is
        still queued to their chat, and the staff topics of their handoffs (best effort: a topic Telegram
        does not delete now stays, without a handoff, and nothing more is relayed to or from it)."""
        desk = self.handoff.desk if self.handoff is not None else None
        if desk is not None:
            for past in await handoffs.for_user(self.db, user.id):
                if past.topic_id is not None and past.staff_chat_id == desk.chat_id:
                    try:
                        await desk.delete_topic(past.topic_id)
                    except Exception as exc:
                        log.warning("handoff.topic_delete_failed id=%s error=%r", past.id, exc)
        await users.erase(self.db, user.id)
        await outbox.delete_for_chat(self.db, user.external_id, user.channel)
        log.info("user.erased user=%s", user.id)

    # -- staff handoff (bot.handoff) -------------------------------------------------------------------------

    def _can_hand_off(self, channel: str) -> bool:
        """A desk is attached and can deliver staff replies to ``channel``."""
        return self.handoff is not None and channel in self.handoff.kicks

    def _topic_desk(self, handoff: handoffs.Handoff) -> ho.StaffDesk | None:
        """The staff desk that holds ``handoff``'s topic; None when it has none (console only) or it is another
        staff group's (``STAFF_CHAT_ID`` changed since)."""
        desk = self.handoff.desk if self.handoff is not None else None
        if desk is None or handoff.topic_id is None or handoff.staff_chat_id != desk.chat_id:
            return None
        return desk

    @staticmethod
    def _no_good_answer(input_type: str | None, citations: list[str] | None) -> bool:
        return input_type == "medical_question" and not citations

    async def _unanswered_streak(self, result: FlowResult, conversation_id: int) -> int:
        """How many replies in a row, this one included, gave a medical question no answer from the KB."""
        if not self._no_good_answer(result.input_type, result.citations):
            return 0
        # the bot's replies only: a staff reply of a handoff neither counts nor breaks the streak
        recent = await conversations.recent_messages(
            self.db, conversation_id, 2 * ho.UNANSWERED_STREAK, handoff=False
        )
        streak = 1
        for message in reversed([m for m in recent if m["direction"] == "out"]):
            if not self._no_good_answer(message["input_type"], message["citations"]):
                break
            streak += 1
        return streak

    async def _open_handoff(
        self, user: User, role: str, channel: str, reason: str, conversation_id: int, text: str
    ) -> bool:
        """Open ``user``'s handoff: the row, the staff topic with its summary (with a staff group). False (and
        nothing kept) when the topic cannot be created and the console is no desk either: the flow's own reply
        (how to reach the clinic) goes out instead. With the console as a desk, a handoff whose topic could
        not be created stays open, answered from the console."""
        assert self.handoff is not None
        desk = self.handoff.desk
        chat_id = desk.chat_id if desk is not None else None
        opened = await handoffs.open_handoff(self.db, user.id, channel, chat_id, reason)
        if opened is None:  # opened meanwhile (another process): the patient is in a handoff already
            return True
        if desk is None:  # CONSOLE_HANDOFF without a staff group: the console's "Hỗ trợ trực tiếp" lists it
            log.info("handoff.opened id=%s user=%s channel=%s reason=%s desk=console", opened.id, user.id,
                     channel, reason)  # fmt: skip
            return True
        section = self.handoff.role_names.get(role, role)
        recent = await conversations.recent_messages(self.db, conversation_id, ho.SUMMARY_MESSAGES)
        summary = ho.summary(user.id, channel, section, reason, recent, text)
        try:
            topic_id = await desk.open_topic(ho.topic_name(user.id, section), summary, opened.id)
        except Exception:
            log.exception("handoff.topic_failed user=%s channel=%s", user.id, channel)
            if self.handoff.console:
                await handoffs.console_only(self.db, opened.id)
                return True
            await handoffs.discard(self.db, opened.id)
            return False
        await handoffs.set_topic(self.db, opened.id, topic_id)
        log.info("handoff.opened id=%s user=%s channel=%s reason=%s", opened.id, user.id, channel, reason)
        return True

    async def _relay_to_staff(
        self, user: User, handoff: handoffs.Handoff, text: str, channel: str, emergency: Emergency | None
    ) -> Reply:
        """A patient's message during a handoff: to the topic (marked 🚨 when the guard found an emergency,
        whose answer it already sent; the exchange is recorded like any emergency), not answered; stored in
        the conversation as relayed (``conversations.store_relayed``)."""
        marked = emergency is not None
        desk = self._topic_desk(handoff)
        if desk is not None and handoff.topic_id is not None:
            await desk.post(handoff.topic_id, ho.patient_line(user.id, text, emergency=marked))
        log.info("handoff.relayed_in id=%s user=%s emergency=%s", handoff.id, user.id, marked)
        if emergency is not None and emergency.delivered:
            reply = await self._record_emergency(user, text, channel, emergency, handoff=True)
            reply.relayed = True
            return reply
        await conversations.store_relayed(self.db, user.id, "in", text, red_flag=marked)
        return Reply(text="", relayed=True, delivered=True)

    async def relay_attachment(self, user: User, kind: str) -> bool:
        """A photo, file, voice… from a patient: with a handoff open, staff get a note that one was sent
        (``kind``: photo, document, voice, other) and True; otherwise False (the channel answers as before)."""
        if self.handoff is None:
            return False
        open_handoff = await handoffs.open_for_user(self.db, user.id)
        if open_handoff is None:
            return False
        desk = self._topic_desk(open_handoff)
        if desk is None and open_handoff.staff_chat_id is not None:
            return False  # its topic is being created, or belongs to another staff group: not relayed
        note = ho.ATTACHMENT_NOTE.get(kind, ho.ATTACHMENT_NOTE["other"])
        if desk is not None and open_handoff.topic_id is not None:
            await desk.post(open_handoff.topic_id, ho.patient_line(user.id, note))
        await conversations.store_relayed(self.db, user.id, "in", note)
        return True

    async def _to_patient(self, handoff: handoffs.Handoff, text: str) -> None:
        """Queue ``text`` to the patient on their channel and have it sent now when this process can (else
        the worker's outbox job sends it; retried when it fails)."""
        await outbox.enqueue(
            self.db,
            handoff.external_id,
            {"type": "text", "text": outbox.fit(text), "kind": "handoff"},
            channel=handoff.channel,
        )
        kick = self.handoff.kicks.get(handoff.channel) if self.handoff is not None else None
        if kick is not None:
            kick()

    def _staff_group(self, staff_chat_id: int) -> bool:
        desk = self.handoff.desk if self.handoff is not None else None
        return desk is not None and staff_chat_id == desk.chat_id

    async def relay_to_patient(
        self, staff_chat_id: int, topic_id: int, text: str, *, by: str | None = None
    ) -> bool:
        """A staff member's message in a topic of the staff group: to the patient of the topic's open
        handoff, and stored in their conversation as a staff reply (``conversations.STAFF_REPLY``, the text as
        typed, ``by``: who wrote it, ``handoffs.by_telegram``). False (nothing sent) when ``staff_chat_id`` is
        not the staff group or no handoff is open there."""
        if not self._staff_group(staff_chat_id):
            return False
        open_handoff = await handoffs.open_for_topic(self.db, staff_chat_id, topic_id)
        if open_handoff is None:
            return False
        await self._staff_reply(open_handoff, text, by)
        return True

    async def _staff_reply(self, handoff: handoffs.Handoff, text: str, by: str | None) -> None:
        """A staff reply: stored (with who wrote it), queued to the patient, the handoff marked answered."""
        await conversations.store_relayed(self.db, handoff.user_id, "out", text, staff_by=by)
        await self._to_patient(handoff, ho.staff_line(text))
        await handoffs.staff_answered(self.db, handoff.id)
        log.info("handoff.relayed_out id=%s user=%s", handoff.id, handoff.user_id)

    async def console_reply(self, handoff_id: int, text: str, *, email: str) -> bool:
        """A reply typed in the clinic console by the account ``email``: to the patient exactly as a topic
        reply goes (``relay_to_patient``), stored as the account's, and posted in the handoff's topic when it
        has one, so the staff group sees it. False (nothing sent) when the handoff is not open."""
        open_handoff = await handoffs.open_by_id(self.db, handoff_id)
        if open_handoff is None:
            return False
        await self._staff_reply(open_handoff, text, handoffs.by_console(email))
        desk = self._topic_desk(open_handoff)
        if desk is not None and open_handoff.topic_id is not None:
            await desk.post(open_handoff.topic_id, ho.TOPIC_CONSOLE_REPLY.format(email=email, text=text))
        return True

    async def console_close(self, handoff_id: int, *, email: str) -> bool:
        """The console's "Kết thúc hỗ trợ": closed as ``/xong`` closes it (the patient told, the topic told).
        False when it was not open."""
        closed = await handoffs.close(self.db, handoff_id, handoffs.by_console(email))
        if closed is None:
            return False
        await self._closed_by_staff(closed, topic_note=ho.TOPIC_CLOSED_BY_CONSOLE.format(email=email))
        return True

    async def _closed_by_staff(self, closed: handoffs.Handoff, *, topic_note: str | None = None) -> None:
        """Tell the patient; ``topic_note`` goes to the topic, if any (a ``/xong`` there is answered by the
        channel itself, with the staff member's name)."""
        await self._to_patient(closed, ho.CLOSED_BY_STAFF)
        desk = self._topic_desk(closed)
        if topic_note and desk is not None and closed.topic_id is not None:
            await desk.post(closed.topic_id, topic_note)
        log.info("handoff.closed id=%s by=%s", closed.id, closed.closed_by)

    async def close_handoff(
        self, staff_chat_id: int, *, topic_id: int | None = None, handoff_id: int | None = None, by: str
    ) -> bool | None:
        """Staff end a handoff (``/xong`` in its topic, or the button under the summary). True: closed now
        (the patient is told); False: it was closed already (nothing happens); None: no such handoff here."""
        if not self._staff_group(staff_chat_id):
            return None
        if handoff_id is not None:
            found = await handoffs.get(self.db, handoff_id)
        elif topic_id is not None:
            found = await handoffs.open_for_topic(self.db, staff_chat_id, topic_id)
        else:
            found = None
        if found is None or found.staff_chat_id != staff_chat_id:
            return None
        closed = await handoffs.close(self.db, found.id, by)
        if closed is None:
            return False
        await self._closed_by_staff(closed)
        return True

    async def end_handoff(self, user: User) -> str:
        """The patient ends their handoff (``/ketthuc`` or the button): the text to show them."""
        if self.handoff is None:
            return ho.NOTHING_OPEN
        open_handoff = await handoffs.open_for_user(self.db, user.id)
        if open_handoff is None:
            return ho.NOTHING_OPEN
        closed = await handoffs.close(self.db, open_handoff.id, handoffs.PATIENT)
        if closed is None:
            return ho.NOTHING_OPEN
        desk = self._topic_desk(closed)
        if desk is not None and closed.topic_id is not None:
            await desk.post(closed.topic_id, ho.TOPIC_CLOSED_BY_PATIENT)
        log.info("handoff.closed id=%s by=patient", closed.id)
        return ho.CLOSED_BY_PATIENT
