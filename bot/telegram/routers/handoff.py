"""The staff handoff on Telegram (policy: ``bot.service.ChatService``, texts: ``bot.handoff``).

Staff side (``staff_router``, first of all routers): every update from the staff group (``STAFF_CHAT_ID``,
authorised by that chat id, checked server-side) ends here and never reaches the patient routers. A text in a
topic of an open handoff is relayed to the patient (``ChatService.relay_to_patient``, with who wrote it: the
staff member's Telegram id and first name, shown in the console, never to the patient); ``/xong`` in the topic
or the "Kết thúc hỗ trợ" button under the summary closes it (twice is harmless); bot commands are never
relayed, nor messages of other bots; a picture or file gets a note that only text is relayed. A message from
any other chat, even in a thread with the same number, is not the staff's and is handled as any other chat's.

Patient side (``patient_router``): ``/ketthuc`` or the button under "a staff member answers here" ends the
patient's own handoff; with none open they are told so.
"""

from __future__ import annotations

import logging

from aiogram import Bot, F, Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery, Message

from bot import handoff as ho
from bot.service import ChatService
from bot.telegram.callbacks import HandoffCloseCb, HandoffEndCb
from db import handoffs
from db.settings import Settings
from db.users import User

log = logging.getLogger("medbot.telegram.handoff")
STAFF_ATTACHMENT = "Bot chỉ chuyển tin nhắn chữ tới bệnh nhân; tệp và ảnh không được chuyển."


def staff_router(settings: Settings) -> Router:
    router = Router(name="handoff_staff")
    if settings.staff_chat_id is None:
        return router
    staff = F.chat.id == settings.staff_chat_id
    router.message.register(staff_close, staff, Command(ho.STAFF_CLOSE_COMMAND))
    router.message.register(staff_text, staff, F.text, ~F.text.startswith("/"))
    router.message.register(staff_other, staff)
    router.callback_query.register(
        staff_button, HandoffCloseCb.filter(), F.message.chat.id == settings.staff_chat_id
    )
    return router


def _who(message: Message | CallbackQuery) -> str:
    """Who did it, as stored with the reply or the close: the Telegram user's id and first name."""
    user = message.from_user
    return handoffs.by_telegram(user.id, user.first_name) if user else "staff"


def _staff_name(message: Message | CallbackQuery) -> str:
    return message.from_user.first_name if message.from_user else "nhân viên"


async def staff_close(message: Message, service: ChatService) -> None:
    """/xong in a handoff's topic."""
    if message.message_thread_id is None or not message.is_topic_message:
        return
    closed = await service.close_handoff(
        message.chat.id, topic_id=message.message_thread_id, by=_who(message)
    )
    if closed is None:  # not (or no longer) an open handoff's topic
        await message.answer(ho.TOPIC_ALREADY_CLOSED, parse_mode=None)
    elif closed:
        await message.answer(ho.TOPIC_CLOSED_BY_STAFF.format(who=_staff_name(message)), parse_mode=None)


async def staff_text(message: Message, service: ChatService) -> None:
    """A staff member's text in a topic: to the patient of the topic's open handoff."""
    if message.from_user is None or message.from_user.is_bot or not message.is_topic_message:
        return
    if message.message_thread_id is None:
        return
    await service.relay_to_patient(
        message.chat.id, message.message_thread_id, message.text or "", by=_who(message)
    )


async def staff_other(message: Message) -> None:
    """Anything else in the staff group: a picture or file in a topic gets a note; the rest is not ours."""
    if message.is_topic_message and message.from_user and not message.from_user.is_bot:
        if message.photo or message.document or message.voice or message.video:
            await message.answer(STAFF_ATTACHMENT, parse_mode=None)


async def staff_button(query: CallbackQuery, callback_data: HandoffCloseCb, service: ChatService) -> None:
    chat_id = query.message.chat.id if query.message else 0
    closed = await service.close_handoff(chat_id, handoff_id=callback_data.h, by=_who(query))
    if closed is None or not closed:
        await query.answer(ho.TOPIC_ALREADY_CLOSED)
        return
    await query.answer()
    if isinstance(query.message, Message):
        await query.message.answer(ho.TOPIC_CLOSED_BY_STAFF.format(who=_staff_name(query)), parse_mode=None)


patient_router = Router(name="handoff_patient")


@patient_router.message(Command(ho.END_COMMAND))
async def patient_end(message: Message, user: User, service: ChatService) -> None:
    await message.answer(await service.end_handoff(user), parse_mode=None)


@patient_router.callback_query(HandoffEndCb.filter())
async def patient_end_button(query: CallbackQuery, bot: Bot, user: User, service: ChatService) -> None:
    await query.answer()
    chat_id = query.message.chat.id if query.message else query.from_user.id
    await bot.send_message(chat_id, await service.end_handoff(user), parse_mode=None)
