"""The outbox: bulk sends (digests, broadcasts) queued in PostgreSQL and drained at Telegram's limits.

Delivery (``bot.telegram.outbox.drain``; migration 0010): a drainer first takes the channel's drain lease,
a row of ``outbox_drainers`` (:func:`acquire_drain`), so one drainer at a time keeps Telegram's overall
rate. Then, message by message, :func:`claim_next` renews that lease and claims the oldest due message at
the head of its chat's queue (``FOR UPDATE SKIP LOCKED``, ``claimed_until`` / ``claimed_by`` set) in one
transaction on one connection; after the send, :func:`mark_sent` / :func:`mark_failed` end the claim.
Nothing depends on a lock held by a session: a drainer that dies leaves leases that run out, after which
another drainer takes over and sends what it had claimed. That is at-least-once: a message can go out
twice only when its drainer died (or lost the database) between Telegram accepting it and the "sent" mark,
or a send outlived the lease.

Payload format (``outbox.payload`` jsonb), one message per row:

* ``{"type": "text", "text": str}`` (``type`` may be omitted for text) — plain text (no parse mode), at most 4096 characters;
* ``{"type": "photo", "path": str, "caption": str, "data_b64": str, "filename": str}`` — a picture. ``path``
  is the PNG written by the producer on its machine; ``data_b64`` carries the same bytes (base64) so a sender
  on another machine can send it without the file; ``caption`` at most 1024 characters (plain text);
* ``{"type": "document", "path": str, "caption": str, "data_b64": str, "filename": str}`` — a file, likewise.

Optional keys every sender should honour when present: ``"parse_mode"`` (``"HTML"``), ``"kind"`` (what
produced the row, e.g. ``"digest"``, ``"kb_import_report"`` or ``"handoff"``, for logs and statistics),
``"message_thread_id"`` (a topic of a forum supergroup: the staff handoff's topics) and ``"reply_markup"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from db.types import Executor

MAX_ATTEMPTS = 5
TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
TYPES = ("text", "photo", "document")


def fit(text: str, limit: int = TEXT_LIMIT, note: str = "\n…(đã rút gọn)") -> str:
    """``text`` cut at a line boundary to fit in ``limit`` characters (one outbox text), with a note when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - len(note)]
    if "\n" in cut:
        cut = cut[: cut.rfind("\n")]
    return cut + note


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


class DrainLeaseLost(Exception):
    """The drain lease is someone else's now (ours ran out and another drainer took it): stop draining."""


async def acquire_drain(db: Executor, holder: str, lease_s: float, channel: str = "telegram") -> bool:
    """Become the channel's drainer for ``lease_s`` seconds: True when the lease was free, had run out, or
    is already ``holder``'s."""
    got = await db.fetchval(
        """
        INSERT INTO outbox_drainers AS d (channel, holder, lease_until)
        VALUES ($1, $2, now() + make_interval(secs => $3))
        ON CONFLICT (channel) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
            WHERE d.lease_until < now() OR d.holder = EXCLUDED.holder
        RETURNING holder
        """,
        channel,
        holder,
        lease_s,
    )
    return got is not None


async def release_drain(db: Executor, holder: str, channel: str = "telegram") -> None:
    """Give the drain lease up (a drainer that finished); a later drainer need not wait for it to run out."""
    await db.execute("DELETE FROM outbox_drainers WHERE channel = $1 AND holder = $2", channel, holder)


async def claim_next(
    pool: asyncpg.Pool,
    holder: str,
    lease_s: float,
    *,
    skip_chats: Sequence[str] = (),
    channel: str = "telegram",
) -> OutboxRow | None:
    """Renew ``holder``'s drain lease and claim the next message to send, in one transaction: the oldest due
    row that heads its chat's queue (no older pending row of that chat, so each chat's messages go out in
    order), is not claimed by a live lease, and whose chat is not in ``skip_chats`` (those still within their
    per-chat interval). None when there is no such row; :class:`DrainLeaseLost` when the drain lease is
    gone."""
    async with pool.acquire() as conn, conn.transaction():
        kept = await conn.fetchval(
            """
            UPDATE outbox_drainers SET lease_until = now() + make_interval(secs => $3)
            WHERE channel = $1 AND holder = $2 RETURNING 1
            """,
            channel,
            holder,
            lease_s,
        )
        if kept is None:
            raise DrainLeaseLost(channel)
        row = await conn.fetchrow(
            """
            WITH next AS (
                SELECT o.id FROM outbox o
                WHERE o.channel = $1 AND o.status = 'pending' AND o.not_before <= now()
                  AND (o.claimed_until IS NULL OR o.claimed_until < now())
                  AND NOT (o.chat_id = ANY($4::text[]))
                  AND NOT EXISTS (
                      SELECT 1 FROM outbox e
                      WHERE e.channel = o.channel AND e.chat_id = o.chat_id AND e.status = 'pending'
                        AND e.id < o.id
                  )
                ORDER BY o.id LIMIT 1
                FOR UPDATE OF o SKIP LOCKED
            )
            UPDATE outbox SET claimed_until = now() + make_interval(secs => $3), claimed_by = $2
            FROM next WHERE outbox.id = next.id
            RETURNING outbox.id, outbox.chat_id, outbox.payload, outbox.attempts
            """,
            channel,
            holder,
            lease_s,
            list(skip_chats),
        )
    return OutboxRow(row["id"], row["chat_id"], row["payload"], row["attempts"]) if row else None


async def waiting_in(db: Executor, chat_ids: Sequence[str], channel: str = "telegram") -> bool:
    """Whether any of these chats has a message due and unclaimed (a drainer waits for their interval)."""
    return bool(
        await db.fetchval(
            """
            SELECT EXISTS (
                SELECT 1 FROM outbox
                WHERE channel = $1 AND status = 'pending' AND chat_id = ANY($2::text[])
                  AND not_before <= now() AND (claimed_until IS NULL OR claimed_until < now())
            )
            """,
            channel,
            list(chat_ids),
        )
    )


async def mark_sent(db: Executor, row_id: int) -> None:
    """The message went out (whoever holds its claim now: sending it again would only repeat it)."""
    await db.execute(
        """
        UPDATE outbox SET status = 'sent', sent_at = now(), attempts = attempts + 1,
            claimed_until = NULL, claimed_by = NULL
        WHERE id = $1
        """,
        row_id,
    )


async def mark_failed(db: Executor, row_id: int, error: str, *, retry_in_s: float | None) -> None:
    """Record a failure: retried after ``retry_in_s`` until MAX_ATTEMPTS, else (or when None) given up."""
    await db.execute(
        """
        UPDATE outbox SET attempts = attempts + 1, last_error = $2,
            status = CASE WHEN $3::float8 IS NULL OR attempts + 1 >= $4 THEN 'failed' ELSE 'pending' END,
            not_before = now() + make_interval(secs => COALESCE($3::float8, 0)),
            claimed_until = NULL, claimed_by = NULL
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
