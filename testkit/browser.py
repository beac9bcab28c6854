"""The browser tests' Chromium and web server: Debian's ``chromium`` driven by Playwright, and an aiohttp
app served in-process on an ephemeral port.

Nothing is downloaded at run time: Playwright's own browsers are never installed (``playwright install`` is
not run); it drives the system's ``/usr/bin/chromium`` (``CHROMIUM`` overrides the path), which ``.ci/run``
installs with apt when it is missing. The flags keep Chromium off the network (no component updates, sync,
background fetches or QUIC) and working as root in a container (``--no-sandbox``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp import web
from playwright.async_api import Browser, Playwright

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> Path | None:
    """The system Chromium (``CHROMIUM``, else ``/usr/bin/chromium``), or None when it is not installed."""
    path = Path(os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium")
    return path if path.is_file() and os.access(path, os.X_OK) else None


async def launch_chromium(playwright: Playwright, path: Path) -> Browser:
    return await playwright.chromium.launch(
        executable_path=str(path), headless=True, args=CHROMIUM_ARGS, timeout=30_000
    )


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1 on a free port; yields its base URL (``http://127.0.0.1:PORT``)."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
