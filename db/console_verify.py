"""Article checks started in the web console: each belongs to a staff account, not to a channel's user.

A console session is a ``verification_sessions`` row with no ``user_id`` (staff accounts are not channel
users, and a made-up user id could collide with a real patient's) and ``meta.staff_id`` naming the account,
``channel`` :data:`CHANNEL`. One open session per staff member: starting a new one stops the previous one
(:func:`stop_open`), as ``db.verification.create_session`` does for a channel's user.
"""

from __future__ import annotations

from db.types import Executor
from db.verification import OPEN, STOPPED, Session

CHANNEL = "web"

_COLUMNS = "id, user_id, title, article_name, channel, status, current_index, meta, created_at, updated_at"
_MINE = f"user_id IS NULL AND channel = '{CHANNEL}' AND meta->>'staff_id' = $1::bigint::text"


async def open_session(db: Executor, staff_id: int) -> Session | None:
    """The staff member's open article check, if any (the newest, should there ever be two)."""
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM verification_sessions WHERE {_MINE} AND status = $2 ORDER BY id DESC LIMIT 1",
        staff_id,
        OPEN,
    )
    return Session(**dict(row)) if row else None


async def owned_session(db: Executor, session_id: int, staff_id: int) -> Session | None:
    """Session ``session_id`` if it is the staff member's own, else None."""
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM verification_sessions WHERE {_MINE} AND id = $2", staff_id, session_id
    )
    return Session(**dict(row)) if row else None


async def recent_sessions(db: Executor, staff_id: int, limit: int = 10) -> list[Session]:
    """The staff member's latest article checks, newest first."""
    rows = await db.fetch(
        f"SELECT {_COLUMNS} FROM verification_sessions WHERE {_MINE} ORDER BY id DESC LIMIT $2",
        staff_id,
        limit,
    )
    return [Session(**dict(r)) for r in rows]


async def stop_open(db: Executor, staff_id: int) -> None:
    """Stop the staff member's open article check (a new one is about to start)."""
    await db.execute(
        f"UPDATE verification_sessions SET status = $2, updated_at = now() WHERE {_MINE} AND status = $3",
        staff_id,
        STOPPED,
        OPEN,
    )
