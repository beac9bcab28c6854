"""``GET /healthz`` of the production webhook app (built as ``medbot run`` builds it) when its database goes
away for real: a bare status for whoever asks, the error only in the log. The same app serves the clinic
console."""

from __future__ import annotations

import logging

import httpx
import pytest
from aiohttp import web

from bot.runtime import Runtime
from bot.telegram.app import build_dispatcher, webhook_app
from bot.telegram.session import build_bot
from bot.wiring import chat_service, console_services, embedder_for, verification_for
from db.pool import create_pool
from db.settings import load_settings
from testkit.database import drop_database, recreate_database
from tests.conftest import run_database


async def test_healthz_reports_a_status_and_logs_the_database_error(
    server_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    name = run_database("medbot_healthz")
    url = await recreate_database(server_url, name)
    settings = load_settings(telegram_bot_token="123:ABC", database_url=url, openai_api_key=None)
    runtime = Runtime(settings=settings, url=url, pool=await create_pool(url, max_size=2))
    service = await chat_service(runtime)
    dp = build_dispatcher(
        service, settings, verify_service=verification_for(runtime), embedder=embedder_for(runtime)
    )
    bot = build_bot(settings, runtime.pool)
    runner = web.AppRunner(webhook_app(bot, dp, service, "secret", console_services(runtime, service)))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            ok = await http.get("/healthz")
            assert (ok.status_code, ok.json()) == (200, {"status": "ok"})
            console = await http.get("/console/")  # the clinic console is served by the same app
            assert (console.status_code, console.headers["location"]) == (303, "/console/login")
            assert "Đăng nhập" in (await http.get("/console/login")).text

            await drop_database(server_url, name)  # the database is gone: connections killed, reconnects fail
            caplog.set_level(logging.WARNING)
            for _ in range(2):  # the broken connection, then the failed reconnect
                down = await http.get("/healthz")
                assert down.status_code == 503
                assert down.json() == {"status": "degraded"}  # no driver message, host or database name
                assert name not in down.text
        logged = [r.getMessage() for r in caplog.records if "healthz.degraded" in r.getMessage()]
        assert len(logged) == 2 and any(name in line for line in logged), logged  # the detail is in the log
    finally:
        await runner.cleanup()
        await bot.session.close()
        await runtime.close()
        await drop_database(server_url, name)
