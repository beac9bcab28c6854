"""Queue messages in the ``outbox`` table for the channel sender to deliver at the channel's rate limits.

This module only inserts. The sender (the Telegram issue's drain, ``bot/telegram/outbox.py``) reads
pending rows, sends them, and marks them sent / failed / retried.

Payload format (``outbox.payload`` jsonb), one message per row:

* ``{"type": "text", "text": str}`` — plain text (no parse mode), at most 4096 characters;
* ``{"type": "photo", "path": str, "caption": str, "data_b64": str, "filename": str}`` — a picture. ``path``
  is the PNG written by the producer on its machine; ``data_b64`` carries the same bytes (base64) so a sender
  on another machine can send it without the file; ``caption`` at most 1024 characters (plain text);
* ``{"type": "document", "path": str, "caption": str, "data_b64": str, "filename": str}`` — a file, likewise.

Optional keys every sender should honour when present: ``"parse_mode"`` (``"HTML"``), ``"kind"`` (what
produced the row, e.g. ``"digest"`` or ``"kb_import_report"``, for logs and statistics).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from db.types import Executor

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
TYPES = ("text", "photo", "document")


def validate_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Check a payload against the format above; ``ValueError`` says what is wrong."""
    kind = payload.get("type")
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
