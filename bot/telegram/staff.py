"""The staff desk on Telegram (``bot.handoff.StaffDesk``): a supergroup with topics where the clinic's staff
answer handed-off patients, checked at start-up; and the outbox kicker that sends patient-bound handoff
messages at once.

``check_staff_chat`` runs when ``medbot run`` starts with ``STAFF_CHAT_ID``: the chat must be a supergroup
with topics turned on, and the bot an administrator there allowed to manage topics; otherwise the process
stops with a message naming the setting and what to change.

``TelegramDesk.open_topic`` creates the topic (``createForumTopic``) and posts the summary in it with the
"Kết thúc hỗ trợ" button; ``post`` sends a patient's message into the topic, and when Telegram does not take
it now, queues it in the outbox (``message_thread_id`` kept) so the worker retries it.

``OutboxKicker``: staff replies and closing notices are queued in the outbox (``db.outbox``) and a drain
(``bot.telegram.outbox.drain``) runs in this process right away; a kick during a drain runs another one after
it, so nothing queued here waits for the worker's next run. Failed sends stay in the outbox for the worker.
"""

from __future__ import annotations

import logging

import asyncpg
from aiogram import Bot
from aiogram.enums import ChatMemberStatus, ChatType
from aiogram.exceptions import TelegramAPIError
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from bot import handoff as ho
from bot.kicker import DrainKicker
from bot.telegram.callbacks import HandoffCloseCb
from bot.telegram.outbox import drain
from bot.telegram.topic_queue import queue_post
from db import outbox
from db.settings import SettingsError

log = logging.getLogger("medbot.telegram.staff")


async def check_staff_chat(bot: Bot, chat_id: int) -> None:
    """Stop the start-up (``SettingsError``) unless ``chat_id`` is a supergroup with topics where the bot
    may manage topics."""
    try:
        chat = await bot.get_chat(chat_id)
        me = await bot.get_me()
        member = await bot.get_chat_member(chat_id, me.id)
    except TelegramAPIError as exc:
        raise SettingsError(
            f"STAFF_CHAT_ID: the bot cannot open chat {chat_id} ({exc}); add the bot to the staff group"
        ) from exc
    if chat.type != ChatType.SUPERGROUP or not chat.is_forum:
        raise SettingsError(
            f"STAFF_CHAT_ID: chat {chat_id} must be a supergroup with topics turned on (group settings → Topics)"
        )
    if member.status != ChatMemberStatus.CREATOR and not (
        member.status == ChatMemberStatus.ADMINISTRATOR and getattr(member, "can_manage_topics", False)
    ):
        raise SettingsError(
            f"STAFF_CHAT_ID: make the bot an administrator of chat {chat_id} allowed to manage topics"
        )


def close_keyboard(handoff_id: int) -> InlineKeyboardMarkup:
    button = InlineKeyboardButton(text=ho.END_BUTTON, callback_data=HandoffCloseCb(h=handoff_id).pack())
    return InlineKeyboardMarkup(inline_keyboard=[[button]])


class TelegramDesk:
    """The staff group as a ``bot.handoff.StaffDesk``."""

    def __init__(self, bot: Bot, pool: asyncpg.Pool, chat_id: int, kick: OutboxKicker) -> None:
        self.bot = bot
        self.pool = pool
        self.chat_id = chat_id
        self.kick = kick

    async def open_topic(self, name: str, summary: str, handoff_id: int) -> int:
        topic = await self.bot.create_forum_topic(self.chat_id, name)
        thread = topic.message_thread_id
        await self.post(thread, outbox.fit(summary), markup=close_keyboard(handoff_id))
        return thread

    async def post(self, topic_id: int, text: str, markup: InlineKeyboardMarkup | None = None) -> None:
        try:
            await self.bot.send_message(
                self.chat_id,
                outbox.fit(text),
                message_thread_id=topic_id,
                reply_markup=markup,
                parse_mode=None,
            )
        except TelegramAPIError as exc:
            log.warning("handoff.topic_send_failed topic=%s error=%s (queued)", topic_id, exc)
            dumped = markup.model_dump(exclude_none=True) if markup is not None else None
            await queue_post(self.pool, self.chat_id, topic_id, text, dumped)
            self.kick()

    async def delete_topic(self, topic_id: int) -> None:
        await self.bot.delete_forum_topic(self.chat_id, topic_id)


class OutboxKicker(DrainKicker):
    """Drain the Telegram outbox now, in the background (``bot.kicker``)."""

    def __init__(self, bot: Bot, pool: asyncpg.Pool) -> None:
        super().__init__(lambda: drain(bot, pool, holder=None), "handoff")
