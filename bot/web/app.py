"""The web application: ``GET /healthz`` and the clinic console under ``/console``.

:func:`add_console` is the one place the console is mounted: on the Telegram webhook app (``medbot run`` with
``TELEGRAM_WEBHOOK_URL``, so production serves both on ``PORT``) and on :func:`build_app`'s, which
``medbot web`` serves alone (:func:`serve`) for a bot that polls or is not set up yet.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import asyncpg
from aiohttp import web

from bot.runtime import open_runtime
from bot.web.console import console_app
from bot.web.console.security import PREFIX
from db.settings import Settings

log = logging.getLogger("medbot.web")
POOL_SIZE = 6


def add_console(app: web.Application, pool: asyncpg.Pool, settings: Settings) -> None:
    """Mount the clinic console at ``/console`` on ``app``."""
    app.add_subapp(PREFIX, console_app(pool, settings))


def healthz_handler(pool: asyncpg.Pool) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``GET /healthz``: 200 ``{"status": "ok"}``, or 503 ``{"status": "degraded"}`` when the database does
    not answer (the error is only logged)."""

    async def healthz(request: web.Request) -> web.Response:
        try:
            await pool.fetchval("SELECT 1")
        except Exception as exc:
            log.warning("healthz.degraded error=%r", exc)
            return web.json_response({"status": "degraded"}, status=503)
        return web.json_response({"status": "ok"})

    return healthz


def build_app(pool: asyncpg.Pool, settings: Settings) -> web.Application:
    """``/healthz`` and the console: what ``medbot web`` serves."""
    app = web.Application()
    app.router.add_get("/healthz", healthz_handler(pool))
    add_console(app, pool, settings)
    return app


async def serve(settings: Settings, *, host: str = "0.0.0.0") -> int:
    """``medbot web``: serve :func:`build_app` on ``PORT`` until cancelled."""
    async with await open_runtime(settings, pool_size=POOL_SIZE) as runtime:
        runner = web.AppRunner(build_app(runtime.pool, settings), access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, settings.port).start()
            log.info("web.serving port=%d console=%s/", settings.port, PREFIX)
            print(f"Clinic console on http://localhost:{settings.port}{PREFIX}/ (Ctrl-C to stop)")
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
    return 0
