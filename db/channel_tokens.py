"""OAuth tokens of a channel (Zalo OA): one row per channel in ``channel_tokens``.

The refresh token of Zalo is single-use, so a refresh must be serialised across processes: callers open a
transaction, read the row with :func:`lock` (``SELECT ... FOR UPDATE``), call the provider, and
:func:`store` the new pair before committing. A second process waiting on the lock then reads the new
tokens and does not spend the old refresh token again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from db.types import Executor


@dataclass(slots=True)
class ChannelToken:
    channel: str
    access_token: str
    refresh_token: str | None
    expires_at: datetime | None
    updated_at: datetime


_COLUMNS = "channel, access_token, refresh_token, expires_at, updated_at"


def _token(row: asyncpg.Record | None) -> ChannelToken | None:
    return ChannelToken(**dict(row)) if row else None


async def get(db: Executor, channel: str) -> ChannelToken | None:
    return _token(await db.fetchrow(f"SELECT {_COLUMNS} FROM channel_tokens WHERE channel = $1", channel))


async def seed(
    db: Executor,
    channel: str,
    access_token: str,
    refresh_token: str | None,
    expires_at: datetime | None = None,
) -> bool:
    """Insert the first tokens (from the environment); True when inserted, False when a row already exists."""
    status = await db.execute(
        """
        INSERT INTO channel_tokens (channel, access_token, refresh_token, expires_at)
        VALUES ($1, $2, $3, $4) ON CONFLICT (channel) DO NOTHING
        """,
        channel,
        access_token,
        refresh_token,
        expires_at,
    )
    return status.endswith(" 1")


async def lock(conn: asyncpg.Connection, channel: str) -> ChannelToken | None:
    """The row, locked until the caller's transaction ends (must run inside ``conn.transaction()``)."""
    return _token(
        await conn.fetchrow(f"SELECT {_COLUMNS} FROM channel_tokens WHERE channel = $1 FOR UPDATE", channel)
    )


async def store(
    db: Executor, channel: str, access_token: str, refresh_token: str | None, expires_at: datetime | None
) -> None:
    """Write a refreshed pair (insert or replace)."""
    await db.execute(
        """
        INSERT INTO channel_tokens (channel, access_token, refresh_token, expires_at, updated_at)
        VALUES ($1, $2, $3, $4, now())
        ON CONFLICT (channel) DO UPDATE SET access_token = EXCLUDED.access_token,
            refresh_token = EXCLUDED.refresh_token, expires_at = EXCLUDED.expires_at, updated_at = now()
        """,
        channel,
        access_token,
        refresh_token,
        expires_at,
    )
