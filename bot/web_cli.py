"""``medbot web``: the web app alone on ``PORT`` — the clinic console (``/console``) and ``/healthz`` — for a
bot that polls, serves Zalo elsewhere or is not set up yet. It has no channel sender: the console's replies to
handed-off patients ("Hỗ trợ trực tiếp") are queued in the outbox and sent by the worker (``medbot worker``)
within its outbox jobs' interval (15 s Telegram, 30 s Zalo). An entry point: it builds the runtime and the
console's services through the composition root (``bot.wiring``)."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from bot.runtime import open_runtime
from bot.telegram.topic_queue import QueuedDesk
from bot.web.app import build_app
from bot.web.console.security import PREFIX
from bot.wiring import attach_handoff, chat_service, console_services
from db.settings import Settings

log = logging.getLogger("medbot.web")
POOL_SIZE = 6


async def serve(settings: Settings, *, host: str = "0.0.0.0") -> int:
    """``medbot web``: serve :func:`build_app` on ``PORT`` until cancelled."""
    async with await open_runtime(settings, pool_size=POOL_SIZE) as runtime:
        service = await chat_service(runtime)
        # No channel sender here: console replies to handed-off patients wait in the outbox for the worker's
        # outbox jobs; a topic of the staff group is posted to through the outbox too (QueuedDesk).
        desk = (
            QueuedDesk(runtime.pool, settings.staff_chat_id) if settings.staff_chat_id is not None else None
        )
        attach_handoff(runtime, service, desk=desk)
        runner = web.AppRunner(build_app(console_services(runtime, service)), access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, settings.port).start()
            log.info("web.serving port=%d console=%s/", settings.port, PREFIX)
            print(f"Clinic console on http://localhost:{settings.port}{PREFIX}/ (Ctrl-C to stop)")
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
    return 0
