"""/start (with deep links ``/start <role>``), /chuyenkhoa and the role picker, /help."""

from __future__ import annotations

import html

from aiogram import Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import CallbackQuery, Message

from bot.service import ChatService
from bot.telegram import texts
from bot.telegram.callbacks import RoleCb
from bot.telegram.render import role_keyboard
from bot.telegram.roles import role_label
from db.settings import Settings
from db.users import User

router = Router(name="start")


def _welcome(message: Message, settings: Settings) -> str:
    name = html.escape(message.from_user.first_name if message.from_user else "bạn")
    return "\n\n".join([texts.WELCOME.format(name=name), texts.PRIVACY, html.escape(settings.disclaimer)])


def _chosen(role: str) -> str:
    example = texts.EXAMPLES.get(role, texts.EXAMPLE_DEFAULT)
    return texts.ROLE_CHOSEN.format(label=html.escape(role_label(role)), example=html.escape(example))


@router.message(CommandStart())
async def start(
    message: Message, command: CommandObject, user: User, service: ChatService, settings: Settings
) -> None:
    wanted = (command.args or "").strip()
    if wanted and await service.set_role(user, wanted):
        await message.answer(_welcome(message, settings) + "\n\n" + _chosen(wanted))
        return
    await message.answer(
        _welcome(message, settings) + "\n\n" + texts.PICK_ROLE, reply_markup=role_keyboard(service.roles)
    )


@router.message(Command("chuyenkhoa"))
async def change_role(message: Message, user: User, service: ChatService) -> None:
    current = (
        texts.ROLE_PRESELECTED.format(label=html.escape(role_label(user.role))) + "\n\n" if user.role else ""
    )
    await message.answer(current + texts.PICK_ROLE, reply_markup=role_keyboard(service.roles))


@router.callback_query(RoleCb.filter())
async def pick_role(query: CallbackQuery, callback_data: RoleCb, user: User, service: ChatService) -> None:
    if not await service.set_role(user, callback_data.role):
        await query.answer(texts.ROLE_UNKNOWN, show_alert=True)
        return
    await query.answer(role_label(callback_data.role))
    if isinstance(query.message, Message):
        # Replace the picker by the confirmation: no dead buttons left behind.
        await query.message.edit_text(_chosen(callback_data.role), reply_markup=None)


@router.message(Command("help"))
async def help_(message: Message, user: User, settings: Settings) -> None:
    is_admin = user.is_admin or (message.from_user is not None and message.from_user.id in settings.admin_ids)
    await message.answer(texts.HELP + (texts.HELP_ADMIN if is_admin else ""))
