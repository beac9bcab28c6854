"""Drain the outbox (bulk sends: digests, broadcasts) at Telegram's limits: at most ``rate`` messages per
second overall (default 25, under Telegram's ~30) and at most one per ``per_chat_interval`` seconds per
chat (default 1 s), each chat's messages in queue order.

Exclusivity and claims are rows, never a lock held by a session (``db.outbox``): the drainer holds the
channel's drain lease (a second caller returns 0 at once), so the global rate holds however many workers
exist, and claims each message right before sending it, both renewed in one transaction on one connection.
A send is cut off at half the lease, so a live drainer's claim never runs out under it. A drainer that dies
leaves leases that run out after ``lease`` seconds; the next drainer then sends what it had claimed.

Delivery is at least once: a message is sent twice only when its drainer died (or lost the database) after
Telegram accepted it and before the "sent" mark, or a send was cut off after Telegram had accepted it.
Payloads are whole messages, so a repeat shows the same text or picture again, never a half. 429s are waited out by
the bot session's ``DeliveryPolicy``; a 403 marks the user inactive there and the row is given up; other
failures are retried later with backoff and kept in the table (``last_error``) — never lost silently.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.types import BufferedInputFile

from db import outbox
from db.pool import CONNECTION_ERRORS

log = logging.getLogger("medbot.telegram.outbox")
DEFAULT_LEASE_SECONDS = 120.0
_SEND_FIELDS = {
    "text", "parse_mode", "reply_markup", "disable_notification", "link_preview_options", "message_thread_id"
}  # fmt: skip


async def send_payload(bot: Bot, chat_id: int, payload: dict[str, Any]) -> None:
    """Send one outbox payload (format: ``db.outbox``): text, or a photo/document with a caption."""
    kind = payload.get("type", "text")
    if kind == "text":
        fields = {k: v for k, v in payload.items() if k in _SEND_FIELDS}
        fields.setdefault("parse_mode", None)  # plain text unless the producer asked for HTML
        await bot.send_message(chat_id=chat_id, **fields)
        return
    data = (
        base64.b64decode(payload["data_b64"])
        if payload.get("data_b64")
        else Path(payload["path"]).read_bytes()
    )
    file = BufferedInputFile(
        data, filename=payload.get("filename") or Path(payload.get("path") or "file").name
    )
    caption = payload.get("caption") or None
    parse_mode = payload.get("parse_mode")
    if kind == "photo":
        await bot.send_photo(chat_id, file, caption=caption, parse_mode=parse_mode)
    else:
        await bot.send_document(chat_id, file, caption=caption, parse_mode=parse_mode)


async def drain(
    bot: Bot,
    pool: asyncpg.Pool,
    *,
    rate: float = 25.0,
    per_chat_interval: float = 1.0,
    stop_when_empty: bool = True,
    lease: float = DEFAULT_LEASE_SECONDS,
    holder: str | None = None,
) -> int:
    """Send due outbox rows; returns how many were sent. Runs until the outbox is empty (or forever, or until
    another drainer took the lease over)."""
    holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    if not await outbox.acquire_drain(pool, holder, lease):
        log.info("outbox.busy another process is draining")
        return 0
    try:
        return await _drain(bot, pool, holder, rate, per_chat_interval, stop_when_empty, lease)
    finally:
        try:
            await outbox.release_drain(pool, holder)
        except Exception as exc:  # the lease runs out by itself
            log.warning("outbox.release_failed error=%r", exc)


async def _drain(
    bot: Bot,
    pool: asyncpg.Pool,
    holder: str,
    rate: float,
    per_chat: float,
    stop_when_empty: bool,
    lease: float,
) -> int:
    gap = 1.0 / rate
    next_slot = time.monotonic()
    last_sent: dict[str, float] = {}
    sent = 0
    claim_failures = 0
    while True:
        now = time.monotonic()
        cooling = [chat for chat, at in last_sent.items() if now - at < per_chat]
        try:
            row = await outbox.claim_next(pool, holder, lease, skip_chats=cooling)
        except outbox.DrainLeaseLost:
            log.warning("outbox.lease_lost holder=%s (another drainer took over)", holder)
            return sent
        except CONNECTION_ERRORS as exc:
            # A connection cut mid-claim: a claim that did commit runs out with its lease and is taken again
            # then, so asking again on a fresh connection can neither lose nor double a message. A database
            # that stays away ends this drain (the worker starts the next one).
            claim_failures += 1
            if claim_failures > 5:
                raise
            log.warning("outbox.claim_retry holder=%s error=%r", holder, exc)
            await asyncio.sleep(0.1 * 2**claim_failures)
            continue
        claim_failures = 0
        if row is None:
            if cooling and await outbox.waiting_in(pool, cooling):
                wake = min(last_sent[chat] + per_chat for chat in cooling)
                await asyncio.sleep(max(0.01, wake - time.monotonic()))
                continue
            if stop_when_empty:
                return sent
            await asyncio.sleep(1.0)
            continue
        delay = next_slot - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        next_slot = max(next_slot, time.monotonic()) + gap
        failure: tuple[str, float | None] | None = None  # (error, retry in seconds or never)
        try:
            async with asyncio.timeout(lease / 2):
                await send_payload(bot, int(row.chat_id), row.payload)
        except TelegramForbiddenError as exc:
            failure = (str(exc), None)
        except TelegramBadRequest as exc:  # will never succeed as is
            failure = (str(exc), None)
            log.warning("outbox.rejected id=%s error=%s", row.id, exc)
        except (TelegramAPIError, TimeoutError) as exc:
            failure = (str(exc) or f"no answer within {lease / 2:g}s", 30.0 * (row.attempts + 1))
            log.warning("outbox.retry_later id=%s error=%s", row.id, failure[0])
        await _settle(pool, row.id, failure, lease)
        if failure is None:
            sent += 1
        last_sent[row.chat_id] = time.monotonic()


async def _settle(
    pool: asyncpg.Pool, row_id: int, failure: tuple[str, float | None] | None, lease: float
) -> None:
    """Record a send's outcome (idempotent), again on a fresh connection if the database connection dropped,
    for as long as the claim safely holds; past that the claim runs out and the message goes out again."""
    deadline = time.monotonic() + lease / 4
    pause = 0.1
    while True:
        try:
            if failure is None:
                await outbox.mark_sent(pool, row_id)
            else:
                await outbox.mark_failed(pool, row_id, failure[0], retry_in_s=failure[1])
            return
        except CONNECTION_ERRORS as exc:
            if time.monotonic() + pause > deadline:
                raise
            log.warning("outbox.record_retry id=%s error=%r", row_id, exc)
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)
