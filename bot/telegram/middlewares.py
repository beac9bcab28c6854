"""Update middlewares, outermost first: triage → per-chat ordering lock → update dedupe → user loading; and
the admin authorisation middleware of the admin router.

- ``TriageMiddleware`` passes the text (or caption) of every message through ``ChatService.guard`` before
  anything that needs the database: an emergency is answered at once, in any chat state, even when
  PostgreSQL is down; the rest of the chain then runs best effort with ``emergency`` in the handler data.

- ``ChatOrderMiddleware`` serialises one chat's updates: an in-process FIFO lock (updates handled as tasks
  keep their arrival order) and the PostgreSQL advisory lock (``ChatService.chat_lock``) across workers.
  Both cover handling *and* sending. A semaphore bounds how many chats are handled at once so lock holders
  always find a free pool connection (each held lock pins one).
- ``DedupeMiddleware`` claims ``update_id`` in ``processed_updates`` with a lease (``db.updates``) before
  anything else happens, renews it while the update is handled and marks it done once answered. A
  redelivery of an answered update is acknowledged and dropped; one whose handler died (its lease ran out)
  is handled; one that another handler holds right now raises ``UpdateInProgress``, which the webhook
  answers 503 so that Telegram delivers it again later. If handling raises, the claim is released.
- ``UserMiddleware`` loads (or creates) the user and puts it in the handler data as ``user``.
- ``FairUseMiddleware`` counts each message and button tap of a sender (``ChatService.admit``,
  ``bot/fair_use.py``) after the dedupe claim, so a redelivery is not counted twice, and under the chat lock,
  so the notice keeps its place among the chat's replies. An emergency (``emergency`` in the handler data,
  answered by the triage middleware already) is neither counted nor refused. A refused update is dropped: a
  callback query is answered (no spinning button), and the first refusal of a window sends the notice.
- ``AdminMiddleware`` (inner, on the admin router) lets a matched admin handler run only for an administrator
  (``ChatService.is_admin``: ``ADMIN_IDS`` or users flagged admin in the database); everyone else gets a polite refusal and nothing changes. Even an
  admin is served only in a private chat: in a group or channel (where the answer would show patients'
  questions to everyone there) the admin gets a short note to write privately, and no data.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.enums import ChatType
from aiogram.fsm.middleware import FSMContextMiddleware
from aiogram.types import CallbackQuery, Chat, Message, TelegramObject, Update, User
from aiogram.utils.text_decorations import html_decoration

from bot.service import ChatService, Emergency
from bot.telegram import texts
from db import updates
from db.updates import Claim

log = logging.getLogger("medbot.telegram")
Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]
CHANNEL = "telegram"


class KeyedLocks:
    """asyncio locks by key, created on demand and dropped when nobody holds or waits for them."""

    def __init__(self) -> None:
        self._locks: dict[int, tuple[asyncio.Lock, int]] = {}

    async def __call__(self, key: int, fn: Callable[[], Awaitable[Any]]) -> Any:
        lock, users_ = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users_ + 1)
        try:
            async with lock:
                return await fn()
        finally:
            lock, users_ = self._locks[key]
            if users_ <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users_ - 1)


def chat_key(data: dict[str, Any]) -> int | None:
    chat = data.get("event_chat")
    if chat is not None:
        return int(chat.id)
    user: User | None = data.get("event_from_user")
    return int(user.id) if user is not None else None


def in_staff_chat(data: dict[str, Any], staff_chat_id: int | None) -> bool:
    """Whether the update comes from the staff handoff's group (``STAFF_CHAT_ID``): staff, not patients."""
    chat = data.get("event_chat")
    return staff_chat_id is not None and chat is not None and chat.id == staff_chat_id


class TriageMiddleware(BaseMiddleware):
    """``staff_chat_id``: the staff group, whose messages are about patients, not emergencies of the writer."""

    def __init__(self, service: ChatService, staff_chat_id: int | None = None) -> None:
        self.service = service
        self.staff_chat_id = staff_chat_id

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        assert isinstance(event, Update)
        message = event.message
        text = (message.text or message.caption) if message is not None else None
        if message is None or not text or text.startswith("/") or in_staff_chat(data, self.staff_chat_id):
            return await handler(event, data)
        bot: Bot = data["bot"]
        chat_id = message.chat.id

        async def deliver(answer: str) -> None:
            await bot.send_message(chat_id, html_decoration.quote(answer))

        async def handle(emergency: Emergency | None) -> None:
            data["emergency"] = emergency
            await handler(event, data)

        sender = message.from_user.id if message.from_user else chat_id
        await self.service.guard(CHANNEL, sender, text, deliver, handle)
        return None


class ChatOrderMiddleware(BaseMiddleware):
    def __init__(self, service: ChatService, concurrency: int) -> None:
        self.service = service
        self.local = KeyedLocks()
        self.slots = asyncio.Semaphore(max(1, concurrency))

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        key = chat_key(data)
        if key is None:
            return await handler(event, data)

        async def locked() -> Any:
            async with self.slots, self.service.chat_lock(CHANNEL, key):
                return await handler(event, data)

        return await self.local(key, locked)


class UpdateInProgress(Exception):
    """Another handler holds a live lease on this update: not handled here, and not acknowledged either."""


class DedupeMiddleware(BaseMiddleware):
    def __init__(self, service: ChatService, lease_s: float = updates.DEFAULT_LEASE_SECONDS) -> None:
        self.service = service
        self.lease_s = lease_s

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        assert isinstance(event, Update)
        held = await updates.claim(self.service.db, CHANNEL, event.update_id, self.lease_s)
        if held.outcome is Claim.DONE:
            log.info("update.duplicate update_id=%s", event.update_id)
            return None
        if held.outcome is Claim.BUSY:
            log.info("update.in_progress update_id=%s (redelivery asked for)", event.update_id)
            raise UpdateInProgress(event.update_id)
        if held.outcome is Claim.TAKEN_OVER:
            log.warning(
                "update.taken_over update_id=%s (its handler stopped before answering)", event.update_id
            )
        try:
            # renewals through the pool: the lock's connection is busy with the handler's queries
            async with updates.keep_alive(self.service.pool, held, self.lease_s):
                result = await handler(event, data)
        except BaseException:
            try:  # the pool, not the lock's connection: it may be the thing that failed
                await updates.release(self.service.pool, held)
            except Exception as exc:
                log.warning("update.release_failed update_id=%s error=%r", event.update_id, exc)
            raise
        try:
            await updates.done(self.service.db, held)
        except Exception as exc:  # answered all the same; the lease runs out, Telegram has its 200
            log.warning("update.done_failed update_id=%s error=%r", event.update_id, exc)
        return result


class UserMiddleware(BaseMiddleware):
    """No user is created for the staff group's members (``staff_chat_id``): they are not patients."""

    def __init__(self, service: ChatService, staff_chat_id: int | None = None) -> None:
        self.service = service
        self.staff_chat_id = staff_chat_id

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        tg_user: User | None = data.get("event_from_user")
        if (
            tg_user is not None and not tg_user.is_bot and not in_staff_chat(data, self.staff_chat_id)
        ):  # active again if they had blocked the bot
            data["user"] = await self.service.sender(CHANNEL, tg_user.id, tg_user.full_name)
        return await handler(event, data)


class FairUseMiddleware(BaseMiddleware):
    def __init__(self, service: ChatService) -> None:
        self.service = service

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        assert isinstance(event, Update)
        user = data.get("user")
        counted = event.message is not None or event.callback_query is not None
        if user is None or not counted:
            return await handler(event, data)
        admission = await self.service.admit(user, emergency=data.get("emergency"))
        if admission.admitted:
            return await handler(event, data)
        if event.callback_query is not None:
            await event.callback_query.answer()
        chat: Chat | None = data.get("event_chat")
        if admission.notice and chat is not None:
            bot: Bot = data["bot"]
            await bot.send_message(chat.id, html_decoration.quote(admission.notice))
        return None


async def _refuse(event: TelegramObject, alert: str, reply: str) -> None:
    """Tell the sender of a refused button tap (an alert) or message (a reply) why nothing happens."""
    if isinstance(event, CallbackQuery):
        await event.answer(alert, show_alert=True)
    elif isinstance(event, Message):
        await event.answer(reply)


class AdminMiddleware(BaseMiddleware):
    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        tg_user: User | None = data.get("event_from_user")
        user = data.get("user")
        service: ChatService = data["service"]
        if tg_user is None or user is None or not service.is_admin(user):
            log.warning(
                "admin.refused user=%s event=%s", tg_user.id if tg_user else None, type(event).__name__
            )
            document = isinstance(event, Message) and event.document is not None
            await _refuse(
                event, texts.ADMIN_ONLY, texts.ADMIN_ONLY_DOCUMENT if document else texts.ADMIN_ONLY
            )
            return None
        chat: Chat | None = data.get("event_chat")
        if chat is not None and chat.type != ChatType.PRIVATE:
            log.info("admin.not_private user=%s chat=%s type=%s", tg_user.id, chat.id, chat.type)
            await _refuse(event, texts.ADMIN_PRIVATE_ONLY, texts.ADMIN_PRIVATE_ONLY)
            return None
        return await handler(event, data)


class StaffMiddleware(BaseMiddleware):
    """Inner middleware of the verification router: a handler that matched runs for clinic staff only
    (``ChatService.is_staff``, the one rule of ``bot/access.py``); anyone else gets a short refusal."""

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        service: ChatService = data["service"]
        user = data.get("user")
        if user is not None and service.is_staff(user):
            return await handler(event, data)
        log.warning("staff.refused user=%s event=%s", user.id if user else None, type(event).__name__)
        await _refuse(event, texts.STAFF_ONLY, texts.STAFF_ONLY)
        return None


class ChatStateMiddleware(BaseMiddleware):
    """aiogram's FSM context (``bot.telegram.states``: what the chat waits for), read from the database for
    clinic staff only. Only staff (administrators included) are ever put in a waiting state, so a patient's
    message costs no query: it gets the context (``state``) with ``raw_state`` None. Someone who stopped
    being staff while a state was set is answered as anyone else."""

    def __init__(self, fsm: FSMContextMiddleware) -> None:
        self.fsm = fsm

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        service: ChatService = data["service"]
        user = data.get("user")
        if user is not None and service.is_staff(user):
            return await self.fsm(handler, event, data)
        data["fsm_storage"] = self.fsm.storage
        context = self.fsm.resolve_event_context(data["bot"], data)
        if context is not None:
            data.update(state=context, raw_state=None)
        return await handler(event, data)
