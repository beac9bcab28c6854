"""Drain the outbox (bulk sends: digests, broadcasts) at Telegram's limits: at most ``rate`` messages per
second overall (default 25, under Telegram's ~30) and at most one per ``per_chat_interval`` seconds per
chat (default 1 s), each chat's messages in queue order.

Only one process drains at a time (advisory lock ``outbox:telegram``; a second caller returns 0 at once),
so the global rate holds however many workers exist. 429s are waited out by the bot session's
``DeliveryPolicy``; a 403 marks the user inactive there and the row is given up; other failures are
retried later with backoff and kept in the table (``last_error``) — never lost silently.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from pathlib import Path
from typing import Any

import asyncpg
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.types import BufferedInputFile

from db import outbox
from db.locks import try_advisory_lock, unlock

log = logging.getLogger("medbot.telegram.outbox")
_SEND_FIELDS = {"text", "parse_mode", "reply_markup", "disable_notification", "link_preview_options"}


async def send_payload(bot: Bot, chat_id: int, payload: dict[str, Any]) -> None:
    """Send one outbox payload (format: ``db.outbox``): text, or a photo/document with a caption."""
    kind = payload.get("type", "text")
    if kind == "text":
        fields = {k: v for k, v in payload.items() if k in _SEND_FIELDS}
        fields.setdefault("parse_mode", None)  # plain text unless the producer asked for HTML
        await bot.send_message(chat_id=chat_id, **fields)
        return
    data = base64.b64decode(payload["data_b64"]) if payload.get("data_b64") else Path(payload["path"]).read_bytes()
    file = BufferedInputFile(data, filename=payload.get("filename") or Path(payload.get("path") or "file").name)
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
    batch: int = 200,
) -> int:
    """Send due outbox rows; returns how many were sent. Runs until the outbox is empty (or forever)."""
    async with pool.acquire() as lock_conn:
        if not await try_advisory_lock(lock_conn, "outbox", "telegram"):
            log.info("outbox.busy another process is draining")
            return 0
        try:
            return await _drain(bot, pool, rate, per_chat_interval, stop_when_empty, batch)
        finally:
            await unlock(lock_conn)


async def _drain(
    bot: Bot, pool: asyncpg.Pool, rate: float, per_chat: float, stop_when_empty: bool, batch: int
) -> int:
    gap = 1.0 / rate
    next_slot = time.monotonic()
    last_sent: dict[str, float] = {}
    sent = 0
    while True:
        rows = await outbox.due(pool, batch)
        if not rows:
            if stop_when_empty:
                return sent
            await asyncio.sleep(1.0)
            continue
        now = time.monotonic()
        chosen, seen = [], set()
        for row in rows:  # the oldest due row of each chat whose per-chat interval has passed
            if row.chat_id in seen:
                continue
            seen.add(row.chat_id)
            if now - last_sent.get(row.chat_id, -1e9) >= per_chat:
                chosen.append(row)
        if not chosen:
            wake = min(last_sent[c] + per_chat for c in seen if c in last_sent)
            await asyncio.sleep(max(0.01, wake - time.monotonic()))
            continue
        for row in chosen:
            delay = next_slot - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            next_slot = max(next_slot, time.monotonic()) + gap
            try:
                await send_payload(bot, int(row.chat_id), row.payload)
            except TelegramForbiddenError as exc:
                await outbox.mark_failed(pool, row.id, str(exc), retry_in_s=None)
            except TelegramBadRequest as exc:  # will never succeed as is
                await outbox.mark_failed(pool, row.id, str(exc), retry_in_s=None)
                log.warning("outbox.rejected id=%s error=%s", row.id, exc)
            except TelegramAPIError as exc:
                await outbox.mark_failed(pool, row.id, str(exc), retry_in_s=30.0 * (row.attempts + 1))
                log.warning("outbox.retry_later id=%s error=%s", row.id, exc)
            else:
                await outbox.mark_sent(pool, row.id)
                sent += 1
            last_sent[row.chat_id] = time.monotonic()
