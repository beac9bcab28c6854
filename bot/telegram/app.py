"""The Telegram channel's assembly and delivery: the Dispatcher with its middlewares and routers, and the two
ways updates arrive (the Bot itself comes from ``bot.telegram.session``). The services it carries (chat,
verification, embedder) are built by the composition root (``bot.wiring``) and handed in by ``bot.main``.

- Webhook (production, ``TELEGRAM_WEBHOOK_URL`` set): one aiohttp app on ``PORT`` with
  ``POST /telegram/webhook`` and ``GET /healthz`` (200 ``{"status": "ok"}``, or 503 ``{"status": "degraded"}``
  when the database does not answer — the error itself is only logged). The secret header is compared in constant time (401
  otherwise). The handler awaits ``Dispatcher.feed_update`` and answers 200 only once the update has been
  handled, stored and replied to — so Telegram redelivers anything a crashed worker did not finish, and the
  redelivery is handled once the crashed claim's lease has run out (``db.updates``). An update another worker
  is handling right now is answered 503, so Telegram tries it again later.
  The secret is ``TELEGRAM_WEBHOOK_SECRET`` or, when unset, derived from the bot token (every worker of
  one bot derives the same value).
  The clinic console (``/console``, ``bot.web``) is served by the same app.
- Long polling (development): ``Dispatcher.start_polling``; updates run as tasks, and the per-chat lock
  keeps each chat's order.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import signal
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from aiogram import Bot, Dispatcher
from aiogram.exceptions import TelegramForbiddenError
from aiogram.filters import ExceptionTypeFilter
from aiogram.types import ErrorEvent, Update
from aiohttp import web

from bot.handoff import StaffDesk
from bot.service import ChatService
from bot.telegram import texts
from bot.telegram.commands import set_menus
from bot.telegram.middlewares import (
    ChatOrderMiddleware,
    ChatStateMiddleware,
    DedupeMiddleware,
    FairUseMiddleware,
    TriageMiddleware,
    UpdateInProgress,
    UserMiddleware,
)
from bot.telegram.routers import all_routers
from bot.telegram.session import build_bot
from bot.telegram.staff import OutboxKicker, TelegramDesk, check_staff_chat
from bot.verify_service import VerificationService
from bot.web.app import add_console, healthz_handler
from bot.web.console.services import ConsoleServices
from bot.zalo import zalo_configured
from bot.zalo.outbox import ZaloOutboxKicker
from bot.zalo.webhook import ZaloChannel, pool_share, zalo_routes
from db.chat_states import PgStateStorage
from db.settings import Settings
from engine.embedding import CachedEmbedder

log = logging.getLogger("medbot.telegram")
WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
POOL_SIZE = 16
# The composition root's decision on the staff handoff, given this process's staff desk and outbox kickers.
AttachHandoff = Callable[[StaffDesk | None, dict[str, Callable[[], object]]], object]


def webhook_secret(settings: Settings) -> str:
    if settings.telegram_webhook_secret and settings.telegram_webhook_secret.get_secret_value():
        return settings.telegram_webhook_secret.get_secret_value()
    assert settings.telegram_bot_token is not None
    token = settings.telegram_bot_token.get_secret_value()
    return hashlib.sha256(f"medbot-webhook:{token}".encode()).hexdigest()[:48]


def webhook_url(settings: Settings) -> str:
    url = settings.telegram_webhook_url or ""
    return url.rstrip("/") + WEBHOOK_PATH if urlsplit(url).path in ("", "/") else url


def pool_size(settings: Settings) -> int:
    """Connections ``medbot run`` opens for Telegram; with Zalo on the same webhook app, its handlers get
    connections of their own (bot/zalo/webhook.py)."""
    zalo_share = pool_share(settings) if settings.telegram_webhook_url and zalo_configured(settings) else 0
    return POOL_SIZE + zalo_share


def build_dispatcher(
    service: ChatService,
    settings: Settings,
    *,
    verify_service: VerificationService,
    embedder: CachedEmbedder,
    concurrency: int = POOL_SIZE - 4,
) -> Dispatcher:
    """The Dispatcher: middlewares, routers and the services every handler may ask for by name."""
    dp = Dispatcher(
        storage=PgStateStorage(service.pool),  # what each chat waits for (bot.telegram.states)
        service=service,
        settings=settings,
        verify_service=verify_service,
        pool=service.pool,
        embedder=embedder,
    )
    # aiogram puts its FSM middleware first; it reads the chat's state from the database, so it runs last,
    # after triage (an emergency is answered before any query), and for staff only (ChatStateMiddleware).
    dp.update.outer_middleware.unregister(dp.fsm)
    dp.update.outer_middleware(TriageMiddleware(service, settings.staff_chat_id))
    dp.update.outer_middleware(ChatOrderMiddleware(service, concurrency))
    dp.update.outer_middleware(DedupeMiddleware(service, settings.update_lease_seconds))
    # no user for the staff group: so no fair-use count either (FairUseMiddleware needs one)
    dp.update.outer_middleware(UserMiddleware(service, settings.staff_chat_id))
    dp.update.outer_middleware(FairUseMiddleware(service))  # after triage: emergencies always answered
    dp.update.outer_middleware(ChatStateMiddleware(dp.fsm))
    dp.include_routers(*all_routers(settings))
    dp.errors.register(on_error, ~ExceptionTypeFilter(UpdateInProgress))  # that one reaches the webhook
    inline_sync_filters(dp)
    return dp


def inline_sync_filters(dp: Dispatcher) -> int:
    """Evaluate synchronous filters (``F.text``, ``F.document``, lambdas) on the event loop.

    aiogram runs every non-async filter through ``asyncio.to_thread``: for a patient's text message that is
    several thread hops (submit, wake-up, GIL hand-over, loop wake-up) just to test attributes, about a
    tenth of a worker's CPU per message. These filters are pure attribute checks, so they run inline here;
    results are the same. Returns how many filters were changed."""
    changed = 0
    for router in dp.chain_tail:
        for observer in router.observers.values():
            for handler in [observer._handler, *observer.handlers]:
                for flt in handler.filters or []:
                    if not flt.awaitable:
                        flt.callback = _inline(flt.callback)
                        flt.awaitable = True
                        changed += 1
    return changed


def _inline(fn: Any) -> Any:
    async def check(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return check


async def on_error(event: ErrorEvent, bot: Bot) -> bool:
    """Log the failure and tell the user something kind; never leave a callback spinning."""
    exc = event.exception
    if isinstance(exc, TelegramForbiddenError):
        return True  # blocked: the user was marked inactive by the delivery policy
    log.error("update.failed update_id=%s error=%r", event.update.update_id, exc, exc_info=exc)
    try:
        if event.update.callback_query:
            await event.update.callback_query.answer(texts.ERROR, show_alert=True)
        elif event.update.message:
            await bot.send_message(event.update.message.chat.id, texts.ERROR)
    except Exception as again:
        log.warning("update.error_reply_failed error=%r", again)
    return True


def webhook_app(
    bot: Bot, dp: Dispatcher, service: ChatService, secret: str, console: ConsoleServices
) -> web.Application:
    expected = secret.encode()

    async def handle(request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, expected):
            return web.json_response({"ok": False, "error": "unauthorized"}, status=401)
        try:
            update = Update.model_validate(await request.json(), context={"bot": bot})
        except Exception:
            return web.json_response({"ok": False, "error": "bad update"}, status=400)
        try:
            await dp.feed_update(bot, update)
        except UpdateInProgress:
            return web.json_response({"ok": False, "error": "in progress"}, status=503)
        except Exception:
            log.exception("webhook.failed update_id=%s", update.update_id)
            return web.json_response({"ok": False}, status=500)
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post(WEBHOOK_PATH, handle)
    app.router.add_get("/healthz", healthz_handler(service.pool))
    add_console(app, console)  # the clinic console on the same app and PORT
    return app


async def _wait_for_stop() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def run_telegram(
    settings: Settings,
    service: ChatService,
    dp: Dispatcher,
    *,
    console: ConsoleServices,
    zalo: ZaloChannel | None = None,
    attach_handoff: AttachHandoff | None = None,
) -> int:
    """Serve Telegram until SIGTERM/SIGINT: the webhook app on ``PORT`` (with ``zalo``'s route when given) when
    ``TELEGRAM_WEBHOOK_URL`` is set, else long polling. The caller owns the runtime behind ``service``.

    The staff handoff: this process's pieces — the staff group's desk (with ``STAFF_CHAT_ID``, checked first)
    and the outbox kickers of the patient channels it can deliver to (Telegram; Zalo when served by the same
    app) — go to ``attach_handoff`` (the composition root's ``bot.wiring.attach_handoff``), which decides."""
    bot = build_bot(settings, service.pool)
    kicker = OutboxKicker(bot, service.pool)  # no task until kicked
    zalo_kicker: ZaloOutboxKicker | None = None
    try:
        desk: TelegramDesk | None = None
        if settings.staff_chat_id is not None:  # the staff group (bot/handoff.py): checked at start-up
            await check_staff_chat(bot, settings.staff_chat_id)
            desk = TelegramDesk(bot, service.pool, settings.staff_chat_id, kicker)
        kicks: dict[str, Callable[[], object]] = {"telegram": kicker}
        if zalo is not None:  # Zalo patients too: staff replies go out through the Zalo client
            zalo_kicker = ZaloOutboxKicker(zalo.client, service.pool)
            kicks["zalo"] = zalo_kicker
        if attach_handoff is not None:
            attach_handoff(desk, kicks)
        await set_menus(bot, service.pool, settings)
        if settings.telegram_webhook_url:
            secret = webhook_secret(settings)
            app = webhook_app(bot, dp, service, secret, console)
            if zalo is not None:  # one app on PORT serves both channels
                zalo_routes(app, zalo)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "0.0.0.0", settings.port).start()
            await bot.set_webhook(webhook_url(settings), secret_token=secret,
                                  allowed_updates=dp.resolve_used_update_types())  # fmt: skip
            log.info("telegram.webhook port=%s url=%s", settings.port, webhook_url(settings))
            try:
                await _wait_for_stop()
            finally:
                await runner.cleanup()
        else:
            await bot.delete_webhook(drop_pending_updates=False)
            log.info("telegram.polling")
            # Our own signal handling: cancelling the poll beats waiting out a pending long-poll request.
            polling = asyncio.create_task(
                dp.start_polling(bot, polling_timeout=20, handle_signals=False, close_bot_session=False)
            )
            stop = asyncio.create_task(_wait_for_stop())
            await asyncio.wait({polling, stop}, return_when=asyncio.FIRST_COMPLETED)
            for task in (polling, stop):
                task.cancel()
            await asyncio.gather(polling, stop, return_exceptions=True)
    finally:
        for running in (kicker, zalo_kicker):
            if running is not None:
                await running.stop()
        await bot.session.close()
    return 0
