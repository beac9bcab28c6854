"""``medbot web``: the web app alone on ``PORT`` — the clinic console (``/console``) and ``/healthz`` — for a
bot that polls, serves Zalo elsewhere or is not set up yet. An entry point: it builds the runtime and the
console's services through the composition root (``bot.wiring``)."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from bot.runtime import open_runtime
from bot.web.app import build_app
from bot.web.console.security import PREFIX
from bot.wiring import chat_service, console_services
from db.settings import Settings

log = logging.getLogger("medbot.web")
POOL_SIZE = 6


async def serve(settings: Settings, *, host: str = "0.0.0.0") -> int:
    """``medbot web``: serve :func:`build_app` on ``PORT`` until cancelled."""
    async with await open_runtime(settings, pool_size=POOL_SIZE) as runtime:
        runner = web.AppRunner(
            build_app(console_services(runtime, await chat_service(runtime))), access_log=None
        )
        await runner.setup()
        try:
            await web.TCPSite(runner, host, settings.port).start()
            log.info("web.serving port=%d console=%s/", settings.port, PREFIX)
            print(f"Clinic console on http://localhost:{settings.port}{PREFIX}/ (Ctrl-C to stop)")
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
    return 0
