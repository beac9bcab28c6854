"""Anything that is not a question we can read: stickers, photos, voice… and unknown commands."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.types import Message

from bot.telegram import texts

router = Router(name="fallback")


@router.message(F.text.startswith("/"))
async def unknown_command(message: Message) -> None:
    await message.answer(texts.UNKNOWN_COMMAND)


@router.message()
async def not_text(message: Message) -> None:
    await message.answer(texts.NOT_TEXT)
