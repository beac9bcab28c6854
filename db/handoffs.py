"""Staff handoffs (migration 0018): a patient handed to the clinic's staff in a topic of the staff group.

``open_handoff`` creates the patient's one open handoff (None when they already have one: the partial unique
index decides, so two processes cannot open two); ``set_topic`` records the staff group's topic once it
exists; ``discard`` removes a handoff whose topic could not be created (nothing was promised yet).
``open_for_user`` / ``open_for_topic`` find the open handoff of a patient / of a staff topic (the staff
group's chat id is part of the key, so a message in another chat never matches). ``close`` closes it once:
closing a closed handoff returns None. ``staff_answered`` records the first staff message relayed.
``claim_reminders`` marks and returns the open handoffs nobody has answered for a while, once each.
Erasure: rows go with their user (``ON DELETE CASCADE``), so ``/xoadulieu`` and retention need nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from db.types import Executor

REASONS = ("human", "complaint", "unanswered")


@dataclass(slots=True)
class Handoff:
    id: int
    user_id: int
    channel: str
    external_id: str  # the patient's chat on their channel (users.external_id)
    staff_chat_id: int
    topic_id: int | None
    status: str
    reason: str
    opened_at: datetime
    staff_answered_at: datetime | None
    closed_at: datetime | None
    closed_by: str | None


_SELECT = """
SELECT h.id, h.user_id, h.channel, u.external_id, h.staff_chat_id, h.topic_id, h.status, h.reason,
       h.opened_at, h.staff_answered_at, h.closed_at, h.closed_by
FROM handoffs h JOIN users u ON u.id = h.user_id
"""


def _handoff(row: asyncpg.Record | None) -> Handoff | None:
    return Handoff(**dict(row)) if row is not None else None


async def open_handoff(
    db: Executor, user_id: int, channel: str, staff_chat_id: int, reason: str
) -> Handoff | None:
    """A new open handoff for ``user_id``; None when they already have an open one."""
    if reason not in REASONS:
        raise ValueError(f"unknown handoff reason {reason!r}")
    new_id = await db.fetchval(
        """
        INSERT INTO handoffs (user_id, channel, staff_chat_id, reason) VALUES ($1, $2, $3, $4)
        ON CONFLICT (user_id) WHERE status = 'open' DO NOTHING RETURNING id
        """,
        user_id,
        channel,
        staff_chat_id,
        reason,
    )
    return None if new_id is None else await get(db, int(new_id))


async def get(db: Executor, handoff_id: int) -> Handoff | None:
    return _handoff(await db.fetchrow(_SELECT + "WHERE h.id = $1", handoff_id))


async def set_topic(db: Executor, handoff_id: int, topic_id: int) -> None:
    await db.execute("UPDATE handoffs SET topic_id = $2 WHERE id = $1", handoff_id, topic_id)


async def discard(db: Executor, handoff_id: int) -> None:
    """Forget a handoff whose topic could not be created."""
    await db.execute("DELETE FROM handoffs WHERE id = $1", handoff_id)


async def open_for_user(db: Executor, user_id: int) -> Handoff | None:
    return _handoff(await db.fetchrow(_SELECT + "WHERE h.user_id = $1 AND h.status = 'open'", user_id))


async def open_for_topic(db: Executor, staff_chat_id: int, topic_id: int) -> Handoff | None:
    return _handoff(
        await db.fetchrow(
            _SELECT + "WHERE h.staff_chat_id = $1 AND h.topic_id = $2 AND h.status = 'open'",
            staff_chat_id,
            topic_id,
        )
    )


async def close(db: Executor, handoff_id: int, closed_by: str) -> Handoff | None:
    """Close an open handoff; None when it was closed already (or is gone)."""
    closed = await db.fetchval(
        """
        UPDATE handoffs SET status = 'closed', closed_at = now(), closed_by = $2
        WHERE id = $1 AND status = 'open' RETURNING id
        """,
        handoff_id,
        closed_by,
    )
    return None if closed is None else await get(db, int(closed))


async def staff_answered(db: Executor, handoff_id: int) -> None:
    """Record the first staff message relayed to the patient (later ones change nothing)."""
    await db.execute(
        "UPDATE handoffs SET staff_answered_at = now() WHERE id = $1 AND staff_answered_at IS NULL",
        handoff_id,
    )


async def for_user(db: Executor, user_id: int) -> list[Handoff]:
    """Every handoff of a user, oldest first."""
    rows = await db.fetch(_SELECT + "WHERE h.user_id = $1 ORDER BY h.id", user_id)
    return [Handoff(**dict(r)) for r in rows]


@dataclass(slots=True)
class Waiting:
    """An open handoff nobody has answered since ``opened_at`` (``claim_reminders``)."""

    id: int
    user_id: int
    staff_chat_id: int
    topic_id: int
    opened_at: datetime


async def claim_reminders(db: Executor, older_than_minutes: float) -> list[Waiting]:
    """The open handoffs with a topic, opened more than ``older_than_minutes`` ago, that no staff message has
    answered and that were not reminded yet; marked reminded in the same statement (each is returned once)."""
    rows = await db.fetch(
        """
        UPDATE handoffs SET reminded_at = now()
        WHERE status = 'open' AND topic_id IS NOT NULL AND staff_answered_at IS NULL AND reminded_at IS NULL
          AND opened_at < now() - make_interval(secs => $1::float8 * 60)
        RETURNING id, user_id, staff_chat_id, topic_id, opened_at
        """,
        older_than_minutes,
    )
    return [Waiting(**dict(r)) for r in sorted(rows, key=lambda r: r["id"])]
