"""The channel-agnostic conversation service: every channel (Telegram, Zalo, console) talks to the engine here.

One call per user message: load or create the user and the active conversation, run the medical flow,
store both turns (with trace, latency, tokens) and the suggestion set in one transaction, and return a
``Reply`` the channel renders. Ordering across processes is the channel's job (``chat_lock``), because
the lock must also cover sending the reply.

Inside ``chat_lock`` the service's own queries (``db``) run on the connection that holds the lock: one
connection for the whole update instead of one borrowed per query. The engine keeps its own pool
connections (it may run several things at once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from bot.logs import redact
from db import conversations, feedback, suggestions, users
from db.conversations import StoredTurn
from db.locks import advisory_lock
from db.types import Executor
from db.users import User

log = logging.getLogger("medbot.service")

# The engine entry point: takes the shared store, returns the flow's output dict (DESIGN.md section 4).
AnswerFn = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

# The connection holding the current task's chat lock (tasks started inside inherit a copy: none do DB work).
_lock_connection: ContextVar[asyncpg.Connection | None] = ContextVar("medbot_chat_lock_connection", default=None)


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
    result: dict[str, Any] = field(default_factory=dict)


class ChatService:
    def __init__(self, pool: asyncpg.Pool, answer: AnswerFn, *, default_role: str, roles: list[str]) -> None:
        self.pool = pool
        self.answer = answer
        self.default_role = default_role
        self.roles = roles

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

    async def set_role(self, user: User, role: str) -> bool:
        if role not in self.roles:
            return False
        await users.set_role(self.db, user.id, role)
        await users.set_consent(self.db, user.id)
        user.role = role
        return True

    async def handle_text(self, user: User, text: str, *, channel: str) -> Reply:
        """Answer one message from ``user`` and store the exchange."""
        role = user.role or self.default_role
        started = time.perf_counter()
        conversation_id = await conversations.active_conversation(self.db, user.id, role)
        shared: dict[str, Any] = {
            "role": role,
            "input": text,
            "conversation_id": conversation_id,
            "user_id": user.id,
            "channel": channel,
            "trace": [],
        }
        result = await self.answer(shared)
        latency_ms = int((time.perf_counter() - started) * 1000)
        tokens = result.get("tokens") or {}
        turn = StoredTurn(
            user_text=text,
            bot_text=result.get("explain", ""),
            input_type=result.get("input_type"),
            confidence=result.get("confidence"),
            retrieval_score=result.get("retrieval_score"),
            citations=list(result.get("citations") or []),
            red_flag=bool(result.get("red_flag")),
            latency_ms=latency_ms,
            tokens_in=int(tokens.get("prompt", 0)),
            tokens_out=int(tokens.get("completion", 0)),
            trace=result.get("trace"),
        )
        questions = [q for q in result.get("suggestion_questions") or [] if q][:10]
        # Both turns, the conversation's activity and the suggestion set: one statement (atomic by itself).
        _, out_id, set_id = await conversations.store_exchange(self.db, conversation_id, user.id, turn, questions)
        log.info(
            "message.answered user=%s role=%s type=%s score=%.3f ms=%d text=%s",
            user.id,
            role,
            turn.input_type,
            turn.retrieval_score or 0.0,
            latency_ms,
            redact(text),
        )
        return Reply(
            text=turn.bot_text,
            suggestions=questions,
            suggestion_set_id=set_id,
            message_id=out_id,
            citations=turn.citations,
            input_type=turn.input_type or "",
            red_flag=turn.red_flag,
            retrieval_score=float(turn.retrieval_score or 0.0),
            latency_ms=latency_ms,
            result=result,
        )

    async def suggestion_text(self, user: User, set_id: int, index: int) -> str | None:
        """The text behind a tapped suggestion, or None when it expired or is not this user's."""
        return await suggestions.question(self.db, set_id, index, user.id)

    async def rate(self, user: User, message_id: int, rating: int) -> bool:
        return await feedback.record(self.db, user.id, message_id, rating)

    async def erase(self, user: User) -> None:
        await users.erase(self.db, user.id)
        log.info("user.erased user=%s", user.id)
