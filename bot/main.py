"""``medbot run``: the Telegram bot when a token is set, otherwise the console chat."""

from __future__ import annotations

from db.settings import Settings


async def run(settings: Settings) -> int:
    if settings.telegram_bot_token is None:
        from bot.console import chat

        print("TELEGRAM_BOT_TOKEN is not set: starting the console chat (Ctrl-D to quit).")
        return await chat(settings)
    raise SystemExit("medbot: the Telegram channel is not available in this version yet.")
