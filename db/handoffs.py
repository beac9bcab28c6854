"""Staff handoffs (migrations 0018, 0019): a patient handed to the clinic's staff, who answer in a topic of the
Telegram staff group and/or from the clinic console. A handoff with no staff group (``staff_chat_id`` None,
``CONSOLE_HANDOFF`` without ``STAFF_CHAT_ID``) is answered from the console only and never has a topic.

``open_handoff`` creates the patient's one open handoff (None when they already have one: the partial unique
index decides, so two processes cannot open two); ``set_topic`` records the staff group's topic once it
exists; ``discard`` removes a handoff whose topic could not be created (nothing was promised yet).
``open_for_user`` / ``open_for_topic`` find the open handoff of a patient / of a staff topic (the staff
group's chat id is part of the key, so a message in another chat never matches). ``close`` closes it once:
closing a closed handoff returns None. ``staff_answered`` records the first staff message relayed.
``claim_reminders`` marks and returns the open handoffs nobody has answered for a while, once each.
``waiting`` lists the open handoffs for the console's "Hỗ trợ trực tiếp" page, oldest-waiting first.
Who did it (``closed_by``, ``messages.staff_by``): ``by_telegram`` / ``by_console`` make the stored form,
``Staff.parse`` reads it back.
Erasure: rows go with their user (``ON DELETE CASCADE``), so ``/xoadulieu`` and retention need nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from db.conversations import STAFF_REPLY
from db.types import Executor

REASONS = ("human", "complaint", "unanswered")
PATIENT = "patient"  # closed_by when the patient ended it
_TELEGRAM, _CONSOLE = "staff:", "console:"


def by_telegram(user_id: int, name: str) -> str:
    """A staff member of the Telegram staff group, as stored (``closed_by``, ``messages.staff_by``)."""
    return f"{_TELEGRAM}{user_id}:{' '.join(name.split())}"


def by_console(email: str) -> str:
    """A console account, as stored."""
    return f"{_CONSOLE}{email}"


@dataclass(frozen=True, slots=True)
class Staff:
    """A stored staff identity read back: ``console`` (an account's email) or ``telegram`` (user id, name)."""

    kind: str  # "telegram", "console" or "" (not known: a reply stored before migration 0019)
    ident: str = ""  # the Telegram user id, or the console account's email
    name: str = ""  # the Telegram first name (empty for the console and for rows before 0019)

    @classmethod
    def parse(cls, stored: str | None) -> Staff:
        if stored and stored.startswith(_CONSOLE):
            return cls("console", stored.removeprefix(_CONSOLE))
        if stored and stored.startswith(_TELEGRAM):
            ident, _, name = stored.removeprefix(_TELEGRAM).partition(":")
            return cls("telegram", ident, name)
        return cls("")


@dataclass(slots=True)
class Handoff:
    id: int
    user_id: int
    channel: str
    external_id: str  # the patient's chat on their channel (users.external_id)
    staff_chat_id: int | None  # None: no Telegram staff group, answered from the console only
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
    db: Executor, user_id: int, channel: str, staff_chat_id: int | None, reason: str
) -> Handoff | None:
    """A new open handoff for ``user_id`` (``staff_chat_id`` None: console only); None when they already have
    an open one."""
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


async def console_only(db: Executor, handoff_id: int) -> None:
    """Keep a handoff whose topic could not be created as one answered from the console only."""
    await db.execute("UPDATE handoffs SET staff_chat_id = NULL, topic_id = NULL WHERE id = $1", handoff_id)


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


async def open_by_id(db: Executor, handoff_id: int) -> Handoff | None:
    """The handoff ``handoff_id`` if it is open."""
    return _handoff(await db.fetchrow(_SELECT + "WHERE h.id = $1 AND h.status = 'open'", handoff_id))


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


@dataclass(slots=True)
class OpenHandoff:
    """An open handoff as the console lists it (``waiting``)."""

    id: int
    user_id: int
    channel: str
    role: str | None  # the patient's current role (the section)
    reason: str
    topic_id: int | None
    opened_at: datetime
    staff_answered_at: datetime | None
    # Since when the patient has waited for a staff reply: the opening, or their first message after the last
    # staff reply; None when a staff reply is the latest (answered, nothing waiting).
    waiting_since: datetime | None


# A handoff's staff replies and patient messages are the patient's messages from its opening on
# (``db.conversations.store_relayed``); the opening message itself is stored right after the handoff row.
_WAITING = f"""
SELECT h.id, h.user_id, h.channel, u.role, h.reason, h.topic_id, h.opened_at, h.staff_answered_at,
       CASE WHEN r.last_reply IS NULL THEN h.opened_at
            ELSE (SELECT min(m.created_at) FROM messages m
                  WHERE m.user_id = h.user_id AND m.direction = 'in' AND m.created_at > r.last_reply)
       END AS waiting_since
FROM handoffs h JOIN users u ON u.id = h.user_id
LEFT JOIN LATERAL (
    SELECT max(m.created_at) AS last_reply FROM messages m
    WHERE m.user_id = h.user_id AND m.input_type = '{STAFF_REPLY}' AND m.created_at >= h.opened_at
) r ON true
WHERE h.status = 'open'
"""


async def waiting(db: Executor) -> list[OpenHandoff]:
    """The open handoffs: those waiting for a staff reply first, the longest-waiting first; then the answered
    ones, the oldest first."""
    rows = await db.fetch(
        f"SELECT * FROM ({_WAITING}) w ORDER BY waiting_since IS NULL, waiting_since, opened_at, id"
    )
    return [OpenHandoff(**dict(r)) for r in rows]


async def one_open(db: Executor, handoff_id: int) -> OpenHandoff | None:
    """One handoff as ``waiting`` lists it, None unless it is open."""
    row = await db.fetchrow(_WAITING + " AND h.id = $1", handoff_id)
    return OpenHandoff(**dict(row)) if row is not None else None


async def waiting_count(db: Executor) -> int:
    """How many open handoffs wait for a staff reply (the console's nav badge)."""
    return int(await db.fetchval(f"SELECT count(*) FROM ({_WAITING}) w WHERE waiting_since IS NOT NULL"))
