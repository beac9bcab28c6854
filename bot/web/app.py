"""The web application: ``GET /healthz`` and the clinic console under ``/console``.

:func:`add_console` is the one place the console is mounted: on the Telegram webhook app (``medbot run`` with
``TELEGRAM_WEBHOOK_URL``, so production serves both on ``PORT``) and on :func:`build_app`'s, which
``medbot web`` serves alone (``bot.web_cli.serve``) for a bot that polls or is not set up yet.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import asyncpg
from aiohttp import web

from bot.web.console import console_app
from bot.web.console.security import PREFIX
from bot.web.console.services import ConsoleServices

log = logging.getLogger("medbot.web")


def add_console(app: web.Application, services: ConsoleServices) -> None:
    """Mount the clinic console at ``/console`` on ``app``."""
    app.add_subapp(PREFIX, console_app(services))


def healthz_handler(pool: asyncpg.Pool) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``GET /healthz``: 200 ``{"status": "ok"}``, or 503 ``{"status": "degraded"}`` when the database does
    not answer (the error is only logged)."""

    async def healthz(request: web.Request) -> web.Response:
        try:
            await pool.fetchval("SELECT 1")
        except Exception as exc:
            # The detail (host, database, driver message) is for the operator's log, never the response.
            log.warning("healthz.degraded error=%r", exc)
            return web.json_response({"status": "degraded"}, status=503)
        return web.json_response({"status": "ok"})

    return healthz


def build_app(services: ConsoleServices) -> web.Application:
    """``/healthz`` and the console: what ``medbot web`` serves."""
    app = web.Application()
    app.router.add_get("/healthz", healthz_handler(services.pool))
    add_console(app, services)
    return app
