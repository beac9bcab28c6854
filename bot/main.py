"""``medbot run``: the Telegram bot when ``TELEGRAM_BOT_TOKEN`` is set (webhook when
``TELEGRAM_WEBHOOK_URL`` is set, else long polling); without a token, the console chat."""

from __future__ import annotations

from db.settings import Settings


async def run(settings: Settings) -> int:
    token = settings.telegram_bot_token.get_secret_value() if settings.telegram_bot_token else ""
    if not token:
        from bot.console import chat

        return await chat(settings, role=None)
    from bot.telegram.app import run_telegram

    return await run_telegram(settings)
