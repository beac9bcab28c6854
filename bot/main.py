"""``medbot run``: the Telegram bot when ``TELEGRAM_BOT_TOKEN`` is set (webhook when
``TELEGRAM_WEBHOOK_URL`` is set, else long polling; the webhook app also serves Zalo when configured); Zalo
alone when only Zalo is configured; otherwise the console chat."""

from __future__ import annotations

from bot import llm_selfcheck
from db.settings import Settings


async def run(settings: Settings) -> int:
    llm_selfcheck.arm()  # with a key, the model's self-check runs in the background once the engine is built
    token = settings.telegram_bot_token.get_secret_value() if settings.telegram_bot_token else ""
    if token:
        from bot.telegram.app import run_telegram

        return await run_telegram(settings)
    from bot.zalo import zalo_configured

    if zalo_configured(settings):
        from bot.zalo.webhook import serve

        return await serve(settings)
    from bot.console import chat

    print("TELEGRAM_BOT_TOKEN is not set: starting the console chat (Ctrl-D to quit).")
    return await chat(settings, role=None)
