"""The outbox: bulk sends (digests, broadcasts) queued in PostgreSQL and drained at Telegram's limits.

Rows are claimed with ``FOR UPDATE SKIP LOCKED`` so a second drainer can never send a row twice; the
drain itself (``bot.telegram.outbox``) runs in one process at a time under an advisory lock.

Payload format (``outbox.payload`` jsonb), one message per row:

* ``{"type": "text", "text": str}`` (``type`` may be omitted for text) — plain text (no parse mode), at most 4096 characters;
* ``{"type": "photo", "path": str, "caption": str, "data_b64": str, "filename": str}`` — a picture. ``path``
  is the PNG written by the producer on its machine; ``data_b64`` carries the same bytes (base64) so a sender
  on another machine can send it without the file; ``caption`` at most 1024 characters (plain text);
* ``{"type": "document", "path": str, "caption": str, "data_b64": str, "filename": str}`` — a file, likewise.

Optional keys every sender should honour when present: ``"parse_mode"`` (``"HTML"``), ``"kind"`` (what
produced the row, e.g. ``"digest"`` or ``"kb_import_report"``, for logs and statistics).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from db.types import Executor

MAX_ATTEMPTS = 5
TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
TYPES = ("text", "photo", "document")


@dataclass(slots=True)
class OutboxRow:
    id: int
    chat_id: str
    payload: dict[str, Any]
    attempts: int


def validate_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Check a payload against the format above; ``ValueError`` says what is wrong."""
    kind = payload.get("type", "text")
    if kind not in TYPES:
        raise ValueError(f"outbox payload type must be one of {TYPES}, got {kind!r}")
    if kind == "text":
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a text payload needs non-empty 'text'")
        if len(text) > TEXT_LIMIT:
            raise ValueError(f"text payload longer than {TEXT_LIMIT} characters ({len(text)})")
    else:
        if not payload.get("path") and not payload.get("data_b64"):
            raise ValueError(f"a {kind} payload needs 'path' or 'data_b64'")
        if len(payload.get("caption") or "") > CAPTION_LIMIT:
            raise ValueError(f"caption longer than {CAPTION_LIMIT} characters")
    return payload


async def enqueue(
    db: Executor,
    chat_id: str | int,
    payload: dict[str, Any],
    *,
    channel: str = "telegram",
    not_before: datetime | None = None,
) -> int:
    """Queue one message; returns the outbox row id."""
    validate_payload(payload)
    return int(
        await db.fetchval(
            """
            INSERT INTO outbox (channel, chat_id, payload, not_before)
            VALUES ($1, $2, $3, COALESCE($4, now())) RETURNING id
            """,
            channel,
            str(chat_id),
            payload,
            not_before,
        )
    )


async def enqueue_to_all(
    db: Executor, chat_ids: Iterable[str | int], payloads: list[dict[str, Any]], *, channel: str = "telegram"
) -> int:
    """Queue the same messages, in order, for every chat; returns the number of rows. Use a transaction
    (pass a connection inside one) so a failure queues nothing."""
    rows = []
    for payload in payloads:
        validate_payload(payload)
    for chat_id in chat_ids:
        rows.extend((channel, str(chat_id), payload) for payload in payloads)
    if rows:
        await db.executemany("INSERT INTO outbox (channel, chat_id, payload) VALUES ($1, $2, $3)", rows)
    return len(rows)


async def pending(db: Executor, channel: str = "telegram") -> list[dict[str, Any]]:
    """Pending rows, oldest first (for tests and operators)."""
    rows = await db.fetch(
        "SELECT id, chat_id, payload, created_at FROM outbox WHERE channel = $1 AND status = 'pending' ORDER BY id",
        channel,
    )
    return [dict(r) for r in rows]


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
