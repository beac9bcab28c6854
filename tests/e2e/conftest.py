"""End-to-end harness: the bot runs as a real subprocess (``python -m bot.cli run``) against the fake
Telegram Bot API (tests/fakes/telegram_server.py) and the suite's real PostgreSQL.

Readiness is awaited by polling ``GET /healthz`` (webhook mode) or the fake seeing ``getUpdates`` (polling
mode), both bounded — never fixed sleeps. Each process's log goes to a file that is printed on failure.
"""

# ruff: noqa: ASYNC109
from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from db import kb
from engine.embedding import E5Embedder
from engine.types import KBEntry
from tests.fakes.telegram_server import FakeTelegram

TOKEN = "123:ABC"
SECRET = "s3cr3t-webhook-token"
ADMIN_ID = 999
# A second admin of every bot started here, for tests that keep out of ADMIN_ID's chat (others count it).
SECOND_ADMIN_ID = 7110
# Clinic staff of every bot started here (CLINICIAN_IDS): the clinicians' chats of the /verify tests and of
# tests/e2e/test_staff_access.py; a Zalo entry too, as a clinic would mix them.
CLINICIAN_ID = 7100
CLINICIAN_IDS = f"7001, 7002, 7004, {CLINICIAN_ID}; zalo:1234567890"
ROOT = Path(__file__).resolve().parents[2]


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

    async def start(self, ready: Callable[[], Awaitable[bool]], timeout: float = 60.0) -> None:
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


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    """A fake Bot API of this test only (for tests that start their own bot processes)."""
    async with FakeTelegram(TOKEN) as f:
        yield f


@pytest.fixture
async def start_bot(
    db: asyncpg.Pool, db_url: str, fake: FakeTelegram, tmp_path: Path
) -> AsyncIterator[StartBot]:
    async with bot_processes(db_url, fake, tmp_path) as start:
        yield start


_SHARED: dict[str, Any] = {}


@pytest.fixture
async def shared_fake(
    db: asyncpg.Pool, db_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeTelegram]:
    """One fake + one webhook bot (ADMIN_IDS 999 and 7110, CLINICIAN_IDS above) shared by the tests that need
    nothing special.

    Starting a bot costs seconds (aiogram's pydantic models), so most tests share this pair and keep to
    their own chat ids; the database is still emptied before each test by the ``db`` fixture.
    """
    if "fake" not in _SHARED:
        stack = contextlib.AsyncExitStack()
        fake = await stack.enter_async_context(FakeTelegram(TOKEN))
        start = await stack.enter_async_context(
            bot_processes(db_url, fake, tmp_path_factory.mktemp("shared"))
        )
        _SHARED.update(fake=fake, proc=await start(), stack=stack, start=start)
    fake = _SHARED["fake"]
    fake.errors.clear()
    yield fake
    proc = _SHARED["proc"]
    assert proc.proc is not None and proc.proc.returncode is None, proc.log()


async def restart_shared_bot() -> BotProcess:
    """Stop the shared bot (SIGTERM) and start a new process on the same fake, as a deploy would.

    Cheaper than a dedicated fake + two bots for tests of what survives a restart; later tests simply get
    the new process.
    """
    await _SHARED["proc"].stop()
    _SHARED["proc"] = await _SHARED["start"]()
    return _SHARED["proc"]


@pytest.fixture(scope="session", autouse=True)
async def _stop_shared_bot() -> AsyncIterator[None]:
    yield
    if "stack" in _SHARED:
        await _SHARED.pop("stack").aclose()


DENTAL = [
    ("D001", "Răng bị ê buốt khi uống nước lạnh thì làm sao?", "Bạn nên dùng kem đánh răng dành cho răng nhạy cảm và khám nha sĩ.", "Răng nhạy cảm"),
    ("D002", "Có nên lấy cao răng định kỳ không?", "Nên lấy cao răng 6 tháng một lần để phòng viêm nướu.", "Vệ sinh răng miệng"),
    ("D003", "Trẻ em mấy tuổi thì nên đi khám răng lần đầu?", "Trẻ nên được khám răng lần đầu khi mọc chiếc răng đầu tiên.", "Nha khoa trẻ em"),
    ("D004", "Niềng răng mất bao lâu thì xong?", "Thời gian niềng răng thường từ 18 đến 24 tháng.", "Chỉnh nha"),
]  # fmt: skip


# Every entry added by ``add_kb``: code → answer. Patients' answers carry no KB codes (only a plain source
# line), so a test recognises an answer by its text: ``shows(message.plain, "D001")``.
KB_ANSWERS: dict[str, str] = {}


def shows(plain: str, code: str) -> bool:
    """Whether a message shows the answer of KB entry ``code`` (added by ``add_kb``)."""
    return KB_ANSWERS[code] in plain


async def add_kb(
    pool: asyncpg.Pool, rows: list[tuple[str, str, str, str]], role: str = "patient_dental"
) -> None:
    """Add entries as an import would: with their embeddings, then a new KB version."""
    KB_ANSWERS.update({code: answer for code, _, answer, _ in rows})
    vectors = await _embedder().embed_passages([question for _, question, _, _ in rows])
    for (code, question, answer, topic), vector in zip(rows, vectors, strict=True):
        await kb.add_entry(
            pool,
            KBEntry(id=0, role=role, code=code, question=question, answer=answer, topic=topic),
            embedding=vector,
            embedding_model=_embedder().name,
        )
    await kb.bump_version(pool, role)


@functools.cache
def _embedder() -> E5Embedder:
    return E5Embedder()


async def onboard(fake: FakeTelegram, chat_id: int, role: str = "patient_dental") -> None:
    """/start and pick ``role`` with the role picker."""
    n = len(fake.messages[chat_id])
    await fake.send_text(chat_id, "/start")
    welcome = (await fake.wait_for_messages(chat_id, n + 1))[n]
    cq = await fake.tap(chat_id, welcome.message_id, welcome.button(f"role:{role}")["callback_data"])
    await fake.wait_callback_answered(cq)
    await fake.wait_for(lambda: not welcome.buttons, what="role picker replaced")


def last(fake: FakeTelegram, chat_id: int) -> Any:
    return fake.messages[chat_id][-1]
