"""/xoadulieu: erase everything the bot stored about the user, after a confirm button."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message

from bot.service import ChatService
from bot.telegram import texts
from bot.telegram.callbacks import EraseCb
from db.users import User

router = Router(name="account")


@router.message(Command("xoadulieu"))
async def ask_erase(message: Message) -> None:
    markup = InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text=texts.ERASE_YES, callback_data=EraseCb(confirm=True).pack()),
                InlineKeyboardButton(text=texts.ERASE_NO, callback_data=EraseCb(confirm=False).pack()),
            ]
        ]
    )
    await message.answer(texts.ERASE_CONFIRM, reply_markup=markup)


@router.callback_query(EraseCb.filter())
async def erase(query: CallbackQuery, callback_data: EraseCb, user: User, service: ChatService) -> None:
    await query.answer()
    if callback_data.confirm:
        await service.erase(user)
        text = texts.ERASED
    else:
        text = texts.ERASE_CANCELLED
    if isinstance(query.message, Message):
        await query.message.edit_text(text, reply_markup=None)
