"""Posting in a staff topic through the outbox alone, for a process that has no Telegram Bot of its own.

``queue_post`` queues a plain text for a topic of the staff group (``message_thread_id`` kept, kind
``handoff``): the Telegram outbox drain sends it (the worker's ``outbox_drain`` job every 15 s, or a web
process's kicker). ``TelegramDesk.post`` falls back to it when Telegram does not take a message now.

``QueuedDesk`` is a ``bot.handoff.StaffDesk`` that only posts, by queueing: ``medbot web`` (the console served
next to a bot that polls) attaches it so that a reply or a close made in the console's "Hỗ trợ trực tiếp"
still reaches the handoff's topic; it never opens a topic (that process serves no patients) and leaves topic
deletion to the process that holds the Bot. No aiogram here: ``medbot web`` starts without loading it.
"""

from __future__ import annotations

import logging
from typing import Any

import asyncpg

from db import outbox

log = logging.getLogger("medbot.telegram.staff")


async def queue_post(
    pool: asyncpg.Pool, chat_id: int, topic_id: int, text: str, reply_markup: dict[str, Any] | None = None
) -> None:
    """Queue ``text`` (plain) for topic ``topic_id`` of chat ``chat_id``."""
    payload: dict[str, Any] = {
        "type": "text",
        "text": outbox.fit(text),
        "message_thread_id": topic_id,
        "kind": "handoff",
    }
    if reply_markup is not None:
        payload["reply_markup"] = reply_markup
    await outbox.enqueue(pool, chat_id, payload)


class QueuedDesk:
    """The staff group, reached through the outbox only (see the module docstring)."""

    def __init__(self, pool: asyncpg.Pool, chat_id: int) -> None:
        self.pool = pool
        self.chat_id = chat_id

    async def open_topic(self, name: str, summary: str, handoff_id: int) -> int:
        raise RuntimeError("this process has no Telegram bot: it cannot open a staff topic")

    async def post(self, topic_id: int, text: str) -> None:
        await queue_post(self.pool, self.chat_id, topic_id, text)

    async def delete_topic(self, topic_id: int) -> None:
        log.warning("handoff.topic_not_deleted topic=%s (no Telegram bot in this process)", topic_id)
