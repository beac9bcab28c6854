"""Patient questions: free text and suggestion taps go through one path (``ask``), plus 👍/👎.

When the engine takes longer than ``TYPING_AFTER_S`` the chat shows "typing…" until the answer is sent
(an answer quicker than that would only flash it, at the cost of a Bot API call per message). The answer is rendered in HTML (engine/KB text escaped),
split on paragraph boundaries under the 4096 limit, with suggestion and 👍/👎 buttons on the last part only.
A patient with a staff handoff open gets no answer (``Reply.relayed``: the message went to the staff); the
reply that opens one carries a "Kết thúc hỗ trợ" button (``bot.telegram.routers.handoff``).
A reply that offers another section (``Reply.switch_role``) has "➡️ Chuyển sang mục …" first; pressing it
switches the role and answers the same message there (``ChatService.switch_and_answer``).
"""

from __future__ import annotations

import html
import logging

from aiogram import Bot, F, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from aiogram.utils.chat_action import ChatActionSender

from bot.service import ChatService, Emergency, Reply
from bot.telegram import texts
from bot.telegram.callbacks import FeedbackCb, SuggestCb, SuggestPageCb, SwitchCb
from bot.telegram.render import (
    answer_html,
    answer_keyboard,
    end_handoff_keyboard,
    role_keyboard,
    split_html,
    suggestion_keyboard,
    switch_button,
)
from bot.telegram.roles import role_label
from db.users import User

log = logging.getLogger(__name__)
router = Router(name="questions")
TYPING_AFTER_S = 0.4


async def ask(
    bot: Bot,
    chat_id: int,
    user: User,
    text: str,
    service: ChatService,
    *,
    tapped: bool = False,
    emergency: Emergency | None = None,
) -> None:
    """Answer ``text`` for ``user`` in ``chat_id`` (typed or tapped: the same path). ``emergency``: what the
    triage guard found (its answer may already be sent: then the exchange is only recorded)."""
    async with ChatActionSender.typing(bot=bot, chat_id=chat_id, initial_sleep=TYPING_AFTER_S):
        reply = await service.respond(user, text, channel="telegram", emergency=emergency)
    if reply.needs_role:  # no role yet, or a clinician's role held by a non-staff user
        ask_again = (
            texts.STAFF_ROLE_WITHDRAWN.format(label=html.escape(role_label(reply.withheld_role)))
            if reply.withheld_role
            else texts.PICK_ROLE_FIRST
        )
        await bot.send_message(chat_id, ask_again, reply_markup=role_keyboard(service.roles_for(user)))
        return
    if reply.delivered or reply.relayed:  # sent by the guard, or gone to the staff (a handoff is open)
        return
    if reply.handoff_opened:  # "a staff member answers here", with the patient's way out
        await bot.send_message(chat_id, html.escape(reply.text), reply_markup=end_handoff_keyboard())
        return
    await send_reply(bot, chat_id, reply, asked=text if tapped else None)
    if emergency is not None:  # a clinician's answer carries the card after it
        emergency.delivered = True


async def send_reply(bot: Bot, chat_id: int, reply: Reply, *, asked: str | None = None) -> None:
    """An answered reply as HTML parts, the buttons under the last one."""
    parts = split_html(answer_html(reply, asked=asked))
    markup = answer_keyboard(reply)
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        await bot.send_message(chat_id, part, reply_markup=markup if last else None)


@router.message(F.text & ~F.text.startswith("/"))
async def typed(
    message: Message, bot: Bot, user: User, service: ChatService, emergency: Emergency | None = None
) -> None:
    await ask(bot, message.chat.id, user, message.text or "", service, emergency=emergency)


@router.callback_query(SuggestCb.filter())
async def tapped(
    query: CallbackQuery, callback_data: SuggestCb, bot: Bot, user: User, service: ChatService
) -> None:
    text = await service.suggestion_text(user, callback_data.set_id, callback_data.i)
    if text is None:
        await query.answer(texts.SUGGESTION_EXPIRED, show_alert=True)
        return
    await query.answer()
    chat_id = query.message.chat.id if query.message else query.from_user.id
    await ask(bot, chat_id, user, text, service, tapped=True)


@router.callback_query(SwitchCb.filter())
async def switched(
    query: CallbackQuery, callback_data: SwitchCb, bot: Bot, user: User, service: ChatService
) -> None:
    """ "Chuyển sang mục …": switch to the role the reply offered and answer the same message there. The
    offer is read back from the stored reply (this user's), so a forged or stale button changes nothing."""
    chat_id = query.message.chat.id if query.message else query.from_user.id
    async with ChatActionSender.typing(bot=bot, chat_id=chat_id, initial_sleep=TYPING_AFTER_S):
        reply = await service.switch_and_answer(user, callback_data.m, channel="telegram")
    if reply is None:
        await query.answer(texts.BUTTON_EXPIRED, show_alert=True)
        return
    await query.answer(texts.SECTION_SWITCHED.format(label=role_label(user.role)))
    if isinstance(query.message, Message):  # the offer is taken: its button goes, the rest stays
        rows = (query.message.reply_markup.inline_keyboard if query.message.reply_markup else [])[1:]
        try:
            await query.message.edit_reply_markup(reply_markup=InlineKeyboardMarkup(inline_keyboard=rows))
        except TelegramBadRequest:
            log.debug("switch button already gone message=%s", callback_data.m)
    await send_reply(bot, chat_id, reply, asked=reply.asked)


@router.callback_query(SuggestPageCb.filter())
async def paged(query: CallbackQuery, callback_data: SuggestPageCb, user: User, service: ChatService) -> None:
    """◀ / ▶ under a long list: the same message's keyboard shows another page."""
    questions = await service.suggestion_set(user, callback_data.set_id)
    if questions is None:
        await query.answer(texts.SUGGESTION_EXPIRED, show_alert=True)
        return
    await query.answer()
    if isinstance(query.message, Message):
        markup = suggestion_keyboard(
            callback_data.set_id,
            questions,
            callback_data.m or None,
            callback_data.page,
            lead=switch_button(query.message.reply_markup),
        )
        try:
            await query.message.edit_reply_markup(reply_markup=markup)
        except TelegramBadRequest:  # the page shown already ("message is not modified")
            log.debug("suggestion page unchanged set=%s", callback_data.set_id)


@router.callback_query(FeedbackCb.filter())
async def rated(query: CallbackQuery, callback_data: FeedbackCb, user: User, service: ChatService) -> None:
    rating = 1 if callback_data.rating > 0 else -1
    if not await service.rate(user, callback_data.message_id, rating):
        await query.answer(texts.FEEDBACK_GONE)
        return
    await query.answer(texts.THANKS_UP if rating > 0 else texts.THANKS_DOWN)
