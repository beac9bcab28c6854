"""Serving a fake: an aiohttp application on 127.0.0.1 at a port the OS picks."""

from __future__ import annotations

from typing import Any

from aiohttp import web


async def serve(app: web.Application, **runner_options: Any) -> tuple[web.AppRunner, str]:
    """Start ``app`` on loopback; return its runner (``await runner.cleanup()`` stops it) and its base URL,
    ``http://127.0.0.1:PORT``. ``runner_options`` go to ``web.AppRunner`` (``shutdown_timeout`` defaults to
    0.1 s: a fake has nothing to drain)."""
    runner = web.AppRunner(app, **{"shutdown_timeout": 0.1, **runner_options})
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"
