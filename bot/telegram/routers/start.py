"""/start (with deep links ``/start <role>``), /chuyenkhoa and the role picker, /help.

The picker offers ``ChatService.roles_for(user)``: clinician roles to clinic staff only. A patient's deep
link to a clinician role (``/start doctor_endocrine``) gets a polite note that the section is for the clinic's
health professionals and the patients' picker; a forged callback with such a role is refused with an alert.
"""

from __future__ import annotations

import html

from aiogram import Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import CallbackQuery, Message

from bot.service import ChatService, RoleChoice
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
    choice = await service.choose_role(user, wanted) if wanted else RoleChoice.UNKNOWN
    if choice is RoleChoice.SET:
        await message.answer(_welcome(message, settings) + "\n\n" + _chosen(wanted))
        return
    pick = texts.STAFF_ONLY_ROLE if choice is RoleChoice.STAFF_ONLY else texts.PICK_ROLE
    await message.answer(
        _welcome(message, settings) + "\n\n" + pick, reply_markup=role_keyboard(service.roles_for(user))
    )


@router.message(Command("chuyenkhoa"))
async def change_role(message: Message, user: User, service: ChatService) -> None:
    role = service.answer_role(user)
    current = texts.ROLE_PRESELECTED.format(label=html.escape(role_label(role))) + "\n\n" if role else ""
    await message.answer(current + texts.PICK_ROLE, reply_markup=role_keyboard(service.roles_for(user)))


@router.callback_query(RoleCb.filter())
async def pick_role(query: CallbackQuery, callback_data: RoleCb, user: User, service: ChatService) -> None:
    choice = await service.choose_role(user, callback_data.role)
    if choice is not RoleChoice.SET:
        refusal = texts.STAFF_ONLY_ROLE_ALERT if choice is RoleChoice.STAFF_ONLY else texts.ROLE_UNKNOWN
        await query.answer(refusal, show_alert=True)
        return
    await query.answer(role_label(callback_data.role))
    if isinstance(query.message, Message):
        # Replace the picker by the confirmation: no dead buttons left behind.
        await query.message.edit_text(_chosen(callback_data.role), reply_markup=None)


@router.message(Command("help"))
async def help_(message: Message, user: User, service: ChatService) -> None:
    staff = texts.HELP_STAFF if service.is_staff(user) else ""
    await message.answer(texts.HELP + staff + (texts.HELP_ADMIN if service.is_admin(user) else ""))
