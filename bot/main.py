"""``medbot run``: the Telegram bot when ``TELEGRAM_BOT_TOKEN`` is set (webhook when
``TELEGRAM_WEBHOOK_URL`` is set, else long polling; the webhook app also serves Zalo when configured); Zalo
alone when only Zalo is configured; otherwise the console chat.

This is the bot application's entry point: it opens the runtime sized for the channel it serves, takes the
services from the composition root (``bot.wiring``) and hands them to the channel.
"""

from __future__ import annotations

from collections.abc import Callable

from bot import console as console_chat
from bot import llm_selfcheck
from bot.handoff import StaffDesk
from bot.runtime import open_runtime
from bot.wiring import attach_handoff, chat_service, console_services, embedder_for, verification_for
from bot.zalo import webhook as zalo
from bot.zalo import zalo_configured
from bot.zalo.outbox import ZaloOutboxKicker
from db.settings import Settings


async def run(settings: Settings) -> int:
    llm_selfcheck.arm()  # with a key, the model's self-check runs in the background once the engine is built
    token = settings.telegram_bot_token.get_secret_value() if settings.telegram_bot_token else ""
    if token:
        from bot.telegram import app as telegram  # lazy: aiogram (~3 s of models) only for Telegram

        async with await open_runtime(settings, pool_size=telegram.pool_size(settings)) as runtime:
            service = await chat_service(runtime)
            dp = telegram.build_dispatcher(
                service, settings, verify_service=verification_for(runtime), embedder=embedder_for(runtime)
            )
            same_app = settings.telegram_webhook_url and zalo_configured(settings)
            channel = await zalo.build_channel(runtime, service) if same_app else None
            console = console_services(runtime, service)  # the clinic console (web), served with the webhook

            def handoff(desk: StaffDesk | None, kicks: dict[str, Callable[[], object]]) -> None:
                attach_handoff(runtime, service, desk=desk, kicks=kicks)

            return await telegram.run_telegram(
                settings, service, dp, console=console, zalo=channel, attach_handoff=handoff
            )
    if zalo_configured(settings):
        async with await open_runtime(settings, pool_size=zalo.pool_size(settings)) as runtime:
            service = await chat_service(runtime)
            channel = await zalo.build_channel(runtime, service)
            # no Telegram bot here: with CONSOLE_HANDOFF, staff answer Zalo patients from the console
            kicker = ZaloOutboxKicker(channel.client, runtime.pool)
            attach_handoff(runtime, service, kicks={"zalo": kicker})
            try:
                return await zalo.serve(runtime, service, console_services(runtime, service), channel=channel)
            finally:
                await kicker.stop()
    print("TELEGRAM_BOT_TOKEN is not set: starting the console chat (Ctrl-D to quit).")
    async with await open_runtime(settings) as runtime:
        return await console_chat.chat(await chat_service(runtime), settings, role=None)
