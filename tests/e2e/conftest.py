"""End-to-end harness: the bot runs as a real subprocess (``testkit.bot_process``) against the fake Telegram
Bot API (``testkit/fakes/telegram_server.py``) and the suite's real PostgreSQL; this file holds the fixtures
and the KB and onboarding helpers of the tests.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from engine import triage
from engine.data_folder import models_folder
from engine.embedding import E5Embedder
from engine.types import KBEntry
from kb_import.add import add_entries
from testkit.bot_process import TOKEN, BotProcess, StartBot, bot_processes
from testkit.fakes.telegram_server import FakeTelegram


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
    """One fake + one webhook bot (ADMIN_IDS 999 and 7110, CLINICIAN_IDS of ``testkit.bot_process``) shared by the tests that need
    nothing special.

    Starting a bot costs seconds (aiogram's pydantic models), so most tests share this pair and keep to
    their own chat ids; the database is still emptied before each test by the ``db`` fixture, and the fake
    forgets the earlier tests' chats (``FakeTelegram.start_over``), so a chat that several tests use
    (ADMIN_ID's) starts empty in each, whatever ran before.
    """
    if "fake" not in _SHARED:
        stack = contextlib.AsyncExitStack()
        fake = await stack.enter_async_context(FakeTelegram(TOKEN))
        start = await stack.enter_async_context(
            bot_processes(db_url, fake, tmp_path_factory.mktemp("shared"))
        )
        _SHARED.update(fake=fake, proc=await start(), stack=stack, start=start)
    fake = _SHARED["fake"]
    fake.start_over()  # each test's chats start empty, as its database does
    yield fake
    # This test's last updates handled before the next test empties the database and the chats: a late edit or
    # callback answer must not land in the next test (best effort: a test that stopped the bot leaves its
    # updates to redelivery, and the next test starts anyway, as it did before).
    with contextlib.suppress(AssertionError):
        await fake.settle(timeout=10)
    proc = _SHARED["proc"]
    assert proc.proc is not None and proc.proc.returncode is None, proc.log()


def shared_bot() -> BotProcess:
    """The process behind ``shared_fake`` (request ``shared_fake`` first): e.g. to read its log, from an
    offset taken at the start of a test (``BotProcess.log_path``), as earlier tests wrote to it too."""
    return _SHARED["proc"]


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
    await add_entries(pool, _embedder(), [
        KBEntry(id=0, role=role, code=code, question=question, answer=answer, topic=topic)
        for code, question, answer, topic in rows
    ])  # fmt: skip


def data_folder(path: Path) -> Path:
    """A new ``MEDBOT_DATA_DIR`` at ``path`` for a bot of its own, holding the emergency model the suite fitted
    (``triage_model_ready``), as ``medbot setup`` leaves it before a first start. A bot finding no model there
    fits one in a background thread: seconds of CPU, and of its GIL, while the test talks to it."""
    fitted = triage.default_model().cache_file
    assert fitted is not None and fitted.is_file(), "the suite's triage model was not kept in a file"
    models = models_folder(path)
    models.mkdir(parents=True)
    shutil.copy2(fitted, models / fitted.name)
    return path


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
