"""Verification sessions and their items: create, walk, record verdicts and decisions, resume, report.

A session belongs to a user (one open session per user, enforced by a partial unique index) and walks its
items by ``current_index``. Item ``status`` is the verifier's (PENDING until computed, HEADING for headings,
then VALID / FLAGGED / UNCLEAR); ``decision`` is the clinician's (accepted / skipped, NULL while open).
Everything is in PostgreSQL, so a restarted process continues exactly where the clinician was. What a chat
waits for (an article, a guideline file, keywords for the open sentence) is the chat's state
(``db.chat_states``), not a session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from db.types import Executor

OPEN, DONE, STOPPED = "open", "done", "stopped"
ACCEPTED, SKIPPED = "accepted", "skipped"


@dataclass(slots=True)
class Session:
    id: int
    user_id: int | None
    title: str
    article_name: str
    channel: str
    status: str
    current_index: int
    meta: dict[str, Any]
    created_at: datetime
    updated_at: datetime


@dataclass(slots=True)
class Item:
    id: int
    session_id: int
    idx: int
    sentence: str
    section: str
    context: dict[str, Any]
    is_heading: bool
    status: str
    confidence: float | None
    evidence: list[dict[str, Any]]
    reasoning: str
    guidance: str | None
    decision: str | None
    verdict_source: str | None
    searches: list[str] = field(default_factory=list)


@dataclass(slots=True)
class NewItem:
    sentence: str
    section: str
    context: dict[str, Any]
    is_heading: bool


_SESSION = "id, user_id, title, article_name, channel, status, current_index, meta, created_at, updated_at"
_ITEM = (
    "id, session_id, idx, sentence, section, context, is_heading, status, confidence, evidence, reasoning, "
    "guidance, decision, verdict_source, searches"
)


def _session(row: asyncpg.Record | None) -> Session | None:
    return Session(**dict(row)) if row else None


def _item(row: asyncpg.Record | None) -> Item | None:
    return Item(**dict(row)) if row else None


async def create_session(
    pool: asyncpg.Pool,
    *,
    user_id: int | None,
    title: str,
    article_name: str,
    channel: str,
    items: list[NewItem],
    meta: dict[str, Any] | None = None,
) -> Session:
    """A new open session with its items; the user's previous open session (if any) is stopped first."""
    async with pool.acquire() as conn, conn.transaction():
        if user_id is not None:
            await conn.execute(
                "UPDATE verification_sessions SET status = $2, updated_at = now() WHERE user_id = $1 AND status = $3",
                user_id,
                STOPPED,
                OPEN,
            )
        first = next((i for i, it in enumerate(items) if not it.is_heading), len(items))
        row = await conn.fetchrow(
            f"""
            INSERT INTO verification_sessions (user_id, title, article_name, channel, status, current_index, meta)
            VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {_SESSION}
            """,
            user_id,
            title,
            article_name,
            channel,
            OPEN if first < len(items) else DONE,
            first,
            meta or {},
        )
        await conn.executemany(
            """
            INSERT INTO verification_items (session_id, idx, sentence, section, context, is_heading, status)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [
                (
                    row["id"],
                    i,
                    it.sentence,
                    it.section,
                    it.context,
                    it.is_heading,
                    "HEADING" if it.is_heading else "PENDING",
                )
                for i, it in enumerate(items)
            ],
        )
    session = _session(row)
    assert session is not None
    return session


async def get_session(db: Executor, session_id: int) -> Session | None:
    return _session(
        await db.fetchrow(f"SELECT {_SESSION} FROM verification_sessions WHERE id = $1", session_id)
    )


async def open_session_for_user(db: Executor, user_id: int) -> Session | None:
    return _session(
        await db.fetchrow(
            f"SELECT {_SESSION} FROM verification_sessions WHERE user_id = $1 AND status = $2", user_id, OPEN
        )
    )


async def set_meta(db: Executor, session_id: int, meta: dict[str, Any]) -> None:
    """Merge keys into the session's channel state (e.g. the Telegram message showing the current item)."""
    await db.execute(
        "UPDATE verification_sessions SET meta = meta || $2::jsonb, updated_at = now() WHERE id = $1",
        session_id,
        meta,
    )


async def get_item(db: Executor, session_id: int, idx: int) -> Item | None:
    return _item(
        await db.fetchrow(
            f"SELECT {_ITEM} FROM verification_items WHERE session_id = $1 AND idx = $2", session_id, idx
        )
    )


async def current_item(db: Executor, session_id: int) -> Item | None:
    """The item the open session stands on; None when the session is finished or stopped."""
    row = await db.fetchrow(
        f"""
        SELECT {", ".join("i." + c.strip() for c in _ITEM.split(","))}
        FROM verification_sessions s JOIN verification_items i ON i.session_id = s.id AND i.idx = s.current_index
        WHERE s.id = $1 AND s.status = $2
        """,
        session_id,
        OPEN,
    )
    return _item(row)


async def items(db: Executor, session_id: int) -> list[Item]:
    rows = await db.fetch(
        f"SELECT {_ITEM} FROM verification_items WHERE session_id = $1 ORDER BY idx", session_id
    )
    return [i for i in (_item(r) for r in rows) if i is not None]


async def record_verdict(
    db: Executor,
    session_id: int,
    idx: int,
    *,
    status: str,
    confidence: float,
    evidence: list[dict[str, Any]],
    reasoning: str,
    source: str,
    search: str | None = None,
    guidance: str | None = None,
) -> None:
    """Store the verifier's result for an item (replacing an earlier one after "search again")."""
    await db.execute(
        """
        UPDATE verification_items SET status = $3, confidence = $4, evidence = $5, reasoning = $6,
            verdict_source = $7,
            searches = CASE WHEN $8::text IS NULL THEN searches ELSE searches || to_jsonb($8::text) END,
            guidance = COALESCE($9, guidance), updated_at = now()
        WHERE session_id = $1 AND idx = $2
        """,
        session_id,
        idx,
        status,
        confidence,
        evidence,
        reasoning,
        source,
        search,
        guidance,
    )


async def decide(pool: asyncpg.Pool, session_id: int, idx: int, decision: str) -> bool:
    """Record the clinician's decision on item ``idx`` and move to the next claim.

    Only the item the session currently stands on can be decided, so a double tap or a stale button changes
    nothing (returns False). The session becomes ``done`` after the last claim.
    """
    async with pool.acquire() as conn, conn.transaction():
        session = await conn.fetchrow(
            "SELECT status, current_index FROM verification_sessions WHERE id = $1 FOR UPDATE", session_id
        )
        if session is None or session["status"] != OPEN or session["current_index"] != idx:
            return False
        await conn.execute(
            "UPDATE verification_items SET decision = $3, updated_at = now() WHERE session_id = $1 AND idx = $2",
            session_id,
            idx,
            decision,
        )
        nxt = await conn.fetchval(
            "SELECT min(idx) FROM verification_items WHERE session_id = $1 AND idx > $2 AND NOT is_heading",
            session_id,
            idx,
        )
        if nxt is None:
            await conn.execute(
                """UPDATE verification_sessions SET status = $2, current_index = current_index + 1,
                   updated_at = now() WHERE id = $1""",
                session_id,
                DONE,
            )
        else:
            await conn.execute(
                "UPDATE verification_sessions SET current_index = $2, updated_at = now() WHERE id = $1",
                session_id,
                nxt,
            )
    return True


async def stop(db: Executor, session_id: int) -> bool:
    """Stop an open session (its undecided items stay undecided in the report)."""
    result = await db.execute(
        "UPDATE verification_sessions SET status = $2, updated_at = now() WHERE id = $1 AND status = $3",
        session_id,
        STOPPED,
        OPEN,
    )
    return result.endswith(" 1")
