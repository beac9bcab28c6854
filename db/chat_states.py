"""What a chat waits for: aiogram's FSM storage (``BaseStorage``) on PostgreSQL, plus single-use slots.

One row per (chat, user, thread, destiny) in ``chat_states`` holds the FSM state ("Waiting:article": the
next message is an article to verify) and its data. Every webhook worker and a restarted process see the
same state, so "this chat waits for X" survives deploys like the rest of the conversation. The bot id is not
part of the key: one deployment serves one bot.

``take_slot`` is what a button tap uses: a data slot (``{"token": n, "at": epoch seconds, ...}``) written
when the buttons were sent is removed and returned in one statement, only when the tap's token matches and
the slot is younger than ``SLOT_TTL``: a stale, forged or doubled tap finds nothing. ``delete_idle`` is the
worker's clean-up of rows nobody touched for ``IDLE_DAYS``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import asyncpg
from aiogram.fsm.state import State
from aiogram.fsm.storage.base import BaseStorage, StateType, StorageKey

from db.types import Executor

SLOT_TTL = 24 * 3600.0  # seconds a button's pending action stays valid
IDLE_DAYS = 30

_KEY = "chat_id = $1 AND user_id = $2 AND thread_id = $3 AND destiny = $4"


def _key(key: StorageKey) -> tuple[int, int, int, str]:
    return key.chat_id, key.user_id, key.thread_id or 0, key.destiny


def _state_name(state: StateType) -> str | None:
    return state.state if isinstance(state, State) else state


class PgStateStorage(BaseStorage):
    """aiogram FSM storage in the ``chat_states`` table."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        await self.pool.execute(
            """INSERT INTO chat_states (chat_id, user_id, thread_id, destiny, state) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (chat_id, user_id, thread_id, destiny)
               DO UPDATE SET state = EXCLUDED.state, updated_at = now()""",
            *_key(key),
            _state_name(state),
        )

    async def get_state(self, key: StorageKey) -> str | None:
        return await self.pool.fetchval(f"SELECT state FROM chat_states WHERE {_KEY}", *_key(key))

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        await self.pool.execute(
            """INSERT INTO chat_states (chat_id, user_id, thread_id, destiny, data) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (chat_id, user_id, thread_id, destiny)
               DO UPDATE SET data = EXCLUDED.data, updated_at = now()""",
            *_key(key),
            dict(data),
        )

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        data = await self.pool.fetchval(f"SELECT data FROM chat_states WHERE {_KEY}", *_key(key))
        return dict(data or {})

    async def update_data(self, key: StorageKey, data: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``data`` into the stored data in one statement (concurrent updates of other keys survive)."""
        merged = await self.pool.fetchval(
            """INSERT INTO chat_states (chat_id, user_id, thread_id, destiny, data) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (chat_id, user_id, thread_id, destiny)
               DO UPDATE SET data = chat_states.data || EXCLUDED.data, updated_at = now()
               RETURNING data""",
            *_key(key),
            dict(data),
        )
        return dict(merged)

    async def take_slot(self, key: StorageKey, slot: str, token: int) -> dict[str, Any] | None:
        """Remove and return data slot ``slot`` when its token is ``token`` and it is younger than
        ``SLOT_TTL``; None otherwise (unknown, expired, another button's, or already taken)."""
        value = await self.pool.fetchval(
            f"""WITH old AS (
                    SELECT data -> $5 AS value FROM chat_states
                    WHERE {_KEY} AND (data -> $5 ->> 'token') = $6::text
                      AND (data -> $5 ->> 'at')::float8 > $7
                    FOR UPDATE
                )
                UPDATE chat_states SET data = data - $5, updated_at = now()
                WHERE {_KEY} AND EXISTS (SELECT 1 FROM old)
                RETURNING (SELECT value FROM old)""",
            *_key(key),
            slot,
            str(token),
            time.time() - SLOT_TTL,
        )
        return dict(value) if value is not None else None

    async def close(self) -> None:
        """The pool belongs to the runtime, which closes it."""


def new_slot(token: int, **values: Any) -> dict[str, Any]:
    """A data slot for ``take_slot``: the values with the button's token and the time it was made."""
    return {**values, "token": token, "at": time.time()}


async def delete_idle(db: Executor, days: int = IDLE_DAYS) -> int:
    """Forget chat states nobody touched for ``days`` days; returns how many."""
    status = await db.execute(
        "DELETE FROM chat_states WHERE updated_at < now() - make_interval(days => $1)", days
    )
    return int(status.split()[-1])
