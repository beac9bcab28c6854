"""The Bot (:func:`build_bot`, pointed at ``TELEGRAM_API_BASE`` when set) and the outgoing request policy for
every Bot API call (an aiogram session middleware). The dispatcher (``bot.telegram.app``) and the worker's
outbox drain (``bot.telegram.jobs``) both send through a Bot built here.

- 429 Too Many Requests: wait ``retry_after`` and retry (up to ``max_retries`` times);
- transient network / 5xx errors: retry with a short exponential backoff;
- 403 Forbidden (the user blocked the bot): mark the user inactive, then re-raise.
"""

from __future__ import annotations

import asyncio
import io
import logging
from typing import TYPE_CHECKING, Any

import asyncpg
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.exceptions import (
    TelegramForbiddenError,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)

from db import users
from db.settings import Settings

if TYPE_CHECKING:
    from aiogram.methods import Response, TelegramMethod

log = logging.getLogger("medbot.telegram.send")


class DeliveryPolicy(BaseRequestMiddleware):
    def __init__(self, pool: asyncpg.Pool | None, *, max_retries: int = 5, max_wait_s: float = 60.0) -> None:
        self.pool = pool
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s

    async def __call__(
        self, make_request: NextRequestMiddlewareType[Any], bot: Bot, method: TelegramMethod[Any]
    ) -> Response[Any]:
        attempt = 0
        while True:
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as exc:
                attempt += 1
                if attempt > self.max_retries:
                    raise
                wait = min(float(exc.retry_after), self.max_wait_s)
                log.warning(
                    "send.rate_limited method=%s retry_after=%s attempt=%d",
                    method.__api_method__,
                    exc.retry_after,
                    attempt,
                )
                await asyncio.sleep(wait)
            except (TelegramNetworkError, TelegramServerError) as exc:
                attempt += 1
                if attempt > 3:
                    raise
                log.warning("send.retry method=%s error=%s attempt=%d", method.__api_method__, exc, attempt)
                await asyncio.sleep(0.2 * 2**attempt)
            except TelegramForbiddenError:
                chat_id = getattr(method, "chat_id", None)
                if chat_id is not None and self.pool is not None:
                    await users.set_active(self.pool, "telegram", str(chat_id), False, "blocked")
                    log.info("user.blocked_bot chat=%s", chat_id)
                raise


def build_bot(settings: Settings, pool: Any) -> Bot:
    """The Bot for ``TELEGRAM_BOT_TOKEN``: HTML by default, every request through :class:`DeliveryPolicy`."""
    assert settings.telegram_bot_token is not None
    base = settings.telegram_api_base
    session = AiohttpSession(api=TelegramAPIServer.from_base(base)) if base else AiohttpSession()
    session.middleware(DeliveryPolicy(pool))
    return Bot(
        settings.telegram_bot_token.get_secret_value(),
        session=session,
        default=DefaultBotProperties(parse_mode=ParseMode.HTML, link_preview_is_disabled=True),
    )


async def download(bot: Bot, file_id: str) -> bytes:
    """The bytes of a file a user sent (a document the admin or the verify router reads)."""
    buffer = io.BytesIO()
    await bot.download(file_id, destination=buffer)
    return buffer.getvalue()
