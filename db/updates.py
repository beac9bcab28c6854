"""Processed channel updates (exactly-once handling of redelivered webhooks) and their clean-up."""

from __future__ import annotations

from db.types import Executor


async def claim(db: Executor, channel: str, update_id: str | int) -> bool:
    """Record an update id; False when it was already recorded (a redelivery to drop)."""
    status = await db.execute(
        "INSERT INTO processed_updates (channel, update_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        channel,
        str(update_id),
    )
    return status.endswith(" 1")


async def release(db: Executor, channel: str, update_id: str | int) -> None:
    """Forget an update whose handling failed, so Telegram's retry is processed."""
    await db.execute("DELETE FROM processed_updates WHERE channel = $1 AND update_id = $2", channel, str(update_id))


async def delete_older_than(db: Executor, days: int) -> int:
    status = await db.execute(
        "DELETE FROM processed_updates WHERE processed_at < now() - make_interval(days => $1)", days
    )
    return int(status.split()[-1])
