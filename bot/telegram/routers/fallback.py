"""Anything that is not a question we can read: stickers, photos, voice… and unknown commands; and every
callback no other router took.

The callback catch-all is the one place where unknown, stale, malformed or forged button payloads end up
(an unknown prefix, ``sq:abc:0``, ``fb:99999999999999999999:1``: the typed callback data of
``bot.telegram.callbacks`` refuses to unpack them, so no feature handler matches). It answers the callback,
so the button never keeps spinning, and logs one WARNING line; nothing else happens."""

from __future__ import annotations

import logging

from aiogram import F, Router
from aiogram.types import CallbackQuery, Message

from bot.service import ChatService
from bot.telegram import texts
from db.users import User

log = logging.getLogger("medbot.telegram")
router = Router(name="fallback")


@router.message(F.text.startswith("/"))
async def unknown_command(message: Message) -> None:
    await message.answer(texts.UNKNOWN_COMMAND)


@router.message()
async def not_text(message: Message, service: ChatService, user: User | None = None) -> None:
    """Not text: with a staff handoff open, the staff get a note that something was sent; else the hint."""
    if user is not None and await service.relay_attachment(user, _kind(message)):
        return
    await message.answer(texts.NOT_TEXT)


def _kind(message: Message) -> str:
    if message.photo:
        return "photo"
    if message.document:
        return "document"
    if message.voice or message.audio:
        return "voice"
    return "other"


@router.callback_query()
async def unknown_button(query: CallbackQuery) -> None:
    log.warning("callback.unhandled user=%s data=%r", query.from_user.id, (query.data or "")[:64])
    await query.answer(texts.BUTTON_EXPIRED)
