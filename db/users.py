"""Users of every channel: lookup by channel id, role, consent, admin flag, activity, erasure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from db import digest
from db.settings import Settings
from db.types import Executor


@dataclass(slots=True)
class User:
    id: int
    channel: str
    external_id: str
    role: str | None
    language: str
    is_admin: bool
    consent_at: datetime | None
    active: bool
    display_name: str | None = None


_COLUMNS = "id, channel, external_id, role, language, is_admin, consent_at, active, display_name"


def _user(row: asyncpg.Record | None) -> User | None:
    return User(**dict(row)) if row else None


async def get_or_create(
    db: Executor, channel: str, external_id: str, display_name: str | None = None
) -> User:
    """The user for this channel id, created on first contact; touches ``last_seen_at``."""
    row = await db.fetchrow(
        f"""
        INSERT INTO users (channel, external_id, display_name) VALUES ($1, $2, $3)
        ON CONFLICT (channel, external_id) DO UPDATE
            SET last_seen_at = now(), display_name = COALESCE(EXCLUDED.display_name, users.display_name)
        RETURNING {_COLUMNS}
        """,
        channel,
        str(external_id),
        display_name,
    )
    user = _user(row)
    assert user is not None
    return user


async def get(db: Executor, channel: str, external_id: str) -> User | None:
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM users WHERE channel = $1 AND external_id = $2", channel, str(external_id)
    )
    return _user(row)


async def get_by_id(db: Executor, user_id: int) -> User | None:
    return _user(await db.fetchrow(f"SELECT {_COLUMNS} FROM users WHERE id = $1", user_id))


async def set_role(db: Executor, user_id: int, role: str) -> None:
    await db.execute("UPDATE users SET role = $2 WHERE id = $1", user_id, role)


async def set_consent(db: Executor, user_id: int) -> None:
    await db.execute("UPDATE users SET consent_at = COALESCE(consent_at, now()) WHERE id = $1", user_id)


async def set_admin(db: Executor, user_id: int, is_admin: bool) -> None:
    await db.execute("UPDATE users SET is_admin = $2 WHERE id = $1", user_id, is_admin)


async def set_active(
    db: Executor, channel: str, external_id: str, active: bool, reason: str | None = None
) -> None:
    """Mark a user (in)active, e.g. when Telegram says the bot was blocked (403)."""
    await db.execute(
        "UPDATE users SET active = $3, inactive_reason = $4 WHERE channel = $1 AND external_id = $2",
        channel,
        str(external_id),
        active,
        reason,
    )


async def erase(db: Executor, user_id: int) -> None:
    """Delete the user and, by cascade, their conversations, messages, feedback, suggestion sets and article
    checks; then, in the same transaction, the quotes of their messages in queued or sent digests
    (``digest.scrub_quotes``)."""
    if isinstance(db, asyncpg.Pool):
        async with db.acquire() as conn:
            await _erase(conn, user_id)
    else:
        await _erase(db, user_id)


async def _erase(conn: asyncpg.Connection, user_id: int) -> None:
    async with conn.transaction():
        await conn.execute("DELETE FROM users WHERE id = $1", user_id)
        await digest.scrub_quotes(conn)


async def admin_external_ids(db: Executor, channel: str) -> list[str]:
    rows = await db.fetch("SELECT external_id FROM users WHERE channel = $1 AND is_admin", channel)
    return [r["external_id"] for r in rows]


async def admin_chat_ids(db: Executor, settings: Settings) -> list[str]:
    """Telegram chats of the admins: ``ADMIN_IDS`` first, then users flagged admin in the database (a private
    chat's id is the user's id). The admin menu, the digest and import reports all go to these."""
    ids = [str(i) for i in settings.admin_ids]
    for external_id in await admin_external_ids(db, "telegram"):
        if external_id not in ids:
            ids.append(external_id)
    return ids
