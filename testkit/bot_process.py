"""``medbot run`` as a real subprocess (``python -m bot.cli run``) against the fake Telegram Bot API
(``testkit/fakes/telegram_server.py``) and a real PostgreSQL: what the end-to-end tests and ``bench_webhook``
start.

Readiness is awaited by polling ``GET /healthz`` (webhook mode) or the fake seeing ``getUpdates`` (polling
mode), both bounded — never fixed sleeps. Each process's log goes to a file (shown on failure).
"""

# ruff: noqa: ASYNC109
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp

from testkit.fakes.telegram_server import FakeTelegram

TOKEN = "123:ABC"
SECRET = "s3cr3t-webhook-token"
ADMIN_ID = 999
# A second admin of every bot started here, for tests that keep out of ADMIN_ID's chat (others count it).
SECOND_ADMIN_ID = 7110
# Clinic staff of every bot started here (CLINICIAN_IDS): the clinicians' chats of the /verify tests and of
# tests/e2e/test_staff_access.py; a Zalo entry too, as a clinic would mix them.
CLINICIAN_ID = 7100
CLINICIAN_IDS = f"7001, 7002, 7004, {CLINICIAN_ID}; zalo:1234567890"
ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class BotProcess:
    """One ``medbot run`` subprocess."""

    def __init__(self, env: dict[str, str], log_path: Path, port: int | None) -> None:
        self.env = env
        self.log_path = log_path
        self.port = port
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def webhook(self) -> str:
        return f"http://127.0.0.1:{self.port}/telegram/webhook"

    async def start(self, ready: Callable[[], Awaitable[bool]], timeout: float = 120.0) -> None:
        # A bot starts in about 8 s on an idle machine; the bound is generous because the suite's two workers
        # may start several bots at once on a loaded 2-core machine (one start took over 60 s at load 6).
        self._log = self.log_path.open("wb")
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", env=self.env, cwd=self.log_path.parent,
            stdout=self._log, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                raise AssertionError(f"bot exited with {self.proc.returncode}:\n{self.log()}")
            if await ready():
                return
            await asyncio.sleep(0.1)  # readiness polling interval (bounded by the deadline)
        raise AssertionError(f"bot not ready after {timeout}s:\n{self.log()}")

    async def healthy(self) -> bool:
        try:
            async with aiohttp.ClientSession() as s, s.get(f"http://127.0.0.1:{self.port}/healthz") as r:
                return r.status == 200
        except aiohttp.ClientError:
            return False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    async def stop(self) -> None:
        if self.proc and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        self._log.close()


def bot_env(
    db_url: str, fake: FakeTelegram, port: int | None, *, webhook: bool, admin_ids: str, clinician_ids: str
) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TELEGRAM_", "DATABASE_URL", "ADMIN_IDS", "CLINICIAN_IDS"))
    }
    env.update(
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_API_BASE=fake.base_url,
        DATABASE_URL=db_url,
        ADMIN_IDS=admin_ids,
        CLINICIAN_IDS=clinician_ids,
        LOG_LEVEL="INFO",
        PYTHONPATH=str(ROOT),
        # A bot given a fake model would check it at start and send it a dozen requests the test did not
        # make; the test of that check turns it back on.
        LLM_CHECK_AT_START="false",
    )
    if port is not None:
        env["PORT"] = str(port)
    if webhook:
        env["TELEGRAM_WEBHOOK_URL"] = f"http://127.0.0.1:{port}/telegram/webhook"
        env["TELEGRAM_WEBHOOK_SECRET"] = SECRET
    return env


StartBot = Callable[..., Awaitable[BotProcess]]


@contextlib.asynccontextmanager
async def bot_processes(db_url: str, fake: FakeTelegram, tmp: Path) -> AsyncIterator[StartBot]:
    procs: list[BotProcess] = []

    async def start(
        *,
        webhook: bool = True,
        admin_ids: str = f"{ADMIN_ID},{SECOND_ADMIN_ID}",
        clinician_ids: str = CLINICIAN_IDS,
        wait_webhook: bool = True,
        env: dict[str, str] | None = None,
    ) -> BotProcess:
        port = free_port()
        base = bot_env(db_url, fake, port, webhook=webhook, admin_ids=admin_ids, clinician_ids=clinician_ids)
        proc = BotProcess({**base, **(env or {})}, tmp / f"bot-{len(procs)}.log", port)
        procs.append(proc)
        if webhook:
            await proc.start(proc.healthy)
            if wait_webhook:
                await fake.wait_for(lambda: fake.webhook_url == proc.webhook, 30, "setWebhook")
        else:
            calls = fake.count_calls("getUpdates")
            await proc.start(lambda: _true(fake.count_calls("getUpdates") > calls))
        return proc

    try:
        yield start
    finally:
        await asyncio.gather(*(p.stop() for p in procs))


async def _true(value: bool) -> bool:
    return value
