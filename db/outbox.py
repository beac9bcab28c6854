"""The outbox: bulk sends (digests, broadcasts) queued in PostgreSQL and drained at Telegram's limits.

Rows are claimed with ``FOR UPDATE SKIP LOCKED`` so a second drainer can never send a row twice; the
drain itself (``bot.telegram.outbox``) runs in one process at a time under an advisory lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from db.types import Executor

MAX_ATTEMPTS = 5


@dataclass(slots=True)
class OutboxRow:
    id: int
    chat_id: str
    payload: dict[str, Any]
    attempts: int


async def enqueue(
    db: Executor, chat_id: str | int, payload: dict[str, Any], channel: str = "telegram"
) -> int:
    """Queue one message; ``payload`` is a Bot API sendMessage body (text, parse_mode, reply_markup)."""
    return int(
        await db.fetchval(
            "INSERT INTO outbox (channel, chat_id, payload) VALUES ($1, $2, $3) RETURNING id",
            channel,
            str(chat_id),
            payload,
        )
    )


async def due(db: Executor, limit: int, channel: str = "telegram") -> list[OutboxRow]:
    """Pending rows whose time has come, oldest first."""
    rows = await db.fetch(
        """
        SELECT id, chat_id, payload, attempts FROM outbox
        WHERE channel = $1 AND status = 'pending' AND not_before <= now()
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
        """,
        channel,
        limit,
    )
    return [OutboxRow(r["id"], r["chat_id"], r["payload"], r["attempts"]) for r in rows]


async def mark_sent(db: Executor, row_id: int) -> None:
    await db.execute(
        "UPDATE outbox SET status = 'sent', sent_at = now(), attempts = attempts + 1 WHERE id = $1", row_id
    )


async def mark_failed(db: Executor, row_id: int, error: str, *, retry_in_s: float | None) -> None:
    """Record a failure: retried after ``retry_in_s`` until MAX_ATTEMPTS, else (or when None) given up."""
    await db.execute(
        """
        UPDATE outbox SET attempts = attempts + 1, last_error = $2,
            status = CASE WHEN $3::float8 IS NULL OR attempts + 1 >= $4 THEN 'failed' ELSE 'pending' END,
            not_before = now() + make_interval(secs => COALESCE($3::float8, 0))
        WHERE id = $1
        """,
        row_id,
        error[:500],
        retry_in_s,
        MAX_ATTEMPTS,
    )


async def pending_count(db: Executor, channel: str = "telegram") -> int:
    return int(
        await db.fetchval("SELECT count(*) FROM outbox WHERE channel = $1 AND status = 'pending'", channel)
    )


async def delete_for_chat(db: Executor, chat_id: str | int, channel: str = "telegram") -> None:
    """Forget queued messages of a chat (its user erased their data)."""
    await db.execute("DELETE FROM outbox WHERE channel = $1 AND chat_id = $2", channel, str(chat_id))
