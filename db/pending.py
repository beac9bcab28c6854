"""Pending channel actions awaiting a button tap (e.g. a dry-run import awaiting "Nhập"), single use."""

from __future__ import annotations

from typing import Any

from db.types import Executor


async def create(db: Executor, chat_id: str | int, kind: str, payload: dict[str, Any]) -> int:
    return int(
        await db.fetchval(
            "INSERT INTO telegram_pending_actions (chat_id, kind, payload) VALUES ($1, $2, $3) RETURNING id",
            str(chat_id),
            kind,
            payload,
        )
    )


async def take(db: Executor, pending_id: int, chat_id: str | int, kind: str) -> dict[str, Any] | None:
    """Remove and return the action's payload; None when unknown, expired, another chat's or already taken."""
    return await db.fetchval(
        """
        DELETE FROM telegram_pending_actions
        WHERE id = $1 AND chat_id = $2 AND kind = $3 AND expires_at > now()
        RETURNING payload
        """,
        pending_id,
        str(chat_id),
        kind,
    )


async def delete_expired(db: Executor) -> int:
    status = await db.execute("DELETE FROM telegram_pending_actions WHERE expires_at < now()")
    return int(status.split()[-1])
