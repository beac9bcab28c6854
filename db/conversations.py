"""Conversations and their messages: the active conversation, storing turns, memory for the engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from db.types import Executor

# A conversation idle for longer than this is closed; the next message starts a new one.
IDLE_MINUTES = 60


@dataclass(slots=True)
class StoredTurn:
    """What the channel stores after the engine answered one message."""

    user_text: str
    bot_text: str
    input_type: str | None = None
    confidence: float | None = None
    retrieval_score: float | None = None
    citations: list[str] = field(default_factory=list)
    red_flag: bool = False
    latency_ms: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    trace: Any = None


async def active_conversation(db: Executor, user_id: int, role: str | None) -> int:
    """The user's current conversation for this role, or a new one after an idle gap or a role change."""
    row = await db.fetchrow(
        """
        SELECT id FROM conversations
        WHERE user_id = $1 AND role IS NOT DISTINCT FROM $2
          AND last_activity_at > now() - make_interval(mins => $3)
        ORDER BY last_activity_at DESC LIMIT 1
        """,
        user_id,
        role,
        IDLE_MINUTES,
    )
    if row:
        return int(row["id"])
    return int(
        await db.fetchval("INSERT INTO conversations (user_id, role) VALUES ($1, $2) RETURNING id", user_id, role)
    )


async def store_turn(db: Executor, conversation_id: int, user_id: int, turn: StoredTurn) -> tuple[int, int]:
    """Store the user's message and the bot's reply; returns their ids. Call inside a transaction."""
    in_id = await db.fetchval(
        """
        INSERT INTO messages (conversation_id, user_id, direction, text, input_type, red_flag)
        VALUES ($1, $2, 'in', $3, $4, $5) RETURNING id
        """,
        conversation_id,
        user_id,
        turn.user_text,
        turn.input_type,
        turn.red_flag,
    )
    out_id = await db.fetchval(
        """
        INSERT INTO messages (conversation_id, user_id, direction, text, input_type, confidence,
                              retrieval_score, citations, red_flag, latency_ms, tokens_in, tokens_out, trace)
        VALUES ($1, $2, 'out', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id
        """,
        conversation_id,
        user_id,
        turn.bot_text,
        turn.input_type,
        turn.confidence,
        turn.retrieval_score,
        turn.citations,
        turn.red_flag,
        turn.latency_ms,
        turn.tokens_in,
        turn.tokens_out,
        turn.trace,
    )
    await db.execute("UPDATE conversations SET last_activity_at = now() WHERE id = $1", conversation_id)
    return int(in_id), int(out_id)


async def recent_messages(db: Executor, conversation_id: int, limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` messages, oldest first."""
    rows = await db.fetch(
        """
        SELECT direction, text, input_type, citations FROM (
            SELECT id, direction, text, input_type, citations FROM messages
            WHERE conversation_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
        ) last ORDER BY id
        """,
        conversation_id,
        limit,
    )
    return [dict(r) for r in rows]


async def get_summary(db: Executor, conversation_id: int) -> str:
    return await db.fetchval("SELECT summary FROM conversations WHERE id = $1", conversation_id) or ""


async def set_summary(db: Executor, conversation_id: int, summary: str) -> None:
    await db.execute("UPDATE conversations SET summary = $2 WHERE id = $1", conversation_id, summary)


async def get_message(db: Executor, message_id: int) -> dict[str, Any] | None:
    row = await db.fetchrow("SELECT * FROM messages WHERE id = $1", message_id)
    return dict(row) if row else None
