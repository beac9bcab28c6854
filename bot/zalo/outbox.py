"""The Zalo side of the outbox (``db.outbox`` rows with ``channel = 'zalo'``): messages the bot starts to a
Zalo user, today the staff handoff's (a staff member's reply, the closing notice; ``bot.handoff``).

``drain`` takes the Zalo drain lease (one drainer at a time, as on Telegram), sends each due row as a text
through the OA client (``bot.zalo.client``), in queue order per user, and settles it: sent; given up when Zalo
says the user cannot be reached (they unfollowed, or the 7-day window is closed: the user is marked inactive);
otherwise retried later with backoff. ``ZaloOutboxKicker`` runs a drain in the web process right after a row
is queued; the worker's ``zalo_outbox`` job (``bot.zalo.jobs``) retries what failed.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid

import asyncpg

from bot.kicker import DrainKicker
from bot.zalo.client import ZaloAPIError, ZaloClient, ZaloUserUnreachable
from db import outbox, users

log = logging.getLogger("medbot.zalo.outbox")
CHANNEL = "zalo"
LEASE_SECONDS = 120.0


async def drain(client: ZaloClient, pool: asyncpg.Pool, *, holder: str | None = None) -> int:
    """Send the due Zalo outbox rows; how many were sent (0 when another process is draining)."""
    holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    if not await outbox.acquire_drain(pool, holder, LEASE_SECONDS, channel=CHANNEL):
        return 0
    sent = 0
    try:
        while (row := await outbox.claim_next(pool, holder, LEASE_SECONDS, channel=CHANNEL)) is not None:
            try:
                await client.send_text({"user_id": row.chat_id}, str(row.payload.get("text") or ""))
            except ZaloUserUnreachable as exc:
                await users.set_active(pool, CHANNEL, row.chat_id, False, "zalo_230")
                await outbox.mark_failed(pool, row.id, exc.message, retry_in_s=None)
                continue
            except ZaloAPIError as exc:
                log.warning("zalo.outbox.retry_later id=%s code=%s", row.id, exc.code)
                await outbox.mark_failed(pool, row.id, exc.message, retry_in_s=30.0 * (row.attempts + 1))
                continue
            await outbox.mark_sent(pool, row.id)
            sent += 1
    finally:
        await outbox.release_drain(pool, holder, channel=CHANNEL)
    return sent


class ZaloOutboxKicker(DrainKicker):
    """Drain the Zalo outbox now, in the background (``bot.kicker``)."""

    def __init__(self, client: ZaloClient, pool: asyncpg.Pool) -> None:
        super().__init__(lambda: drain(client, pool), "zalo.outbox")
