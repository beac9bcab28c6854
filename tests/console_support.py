"""What the console's tests share: the web app as ``medbot web`` builds it, served on a free port against
the suite's database; staff accounts made through ``db.staff``; KB entries stored as an import stores them."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from bot.runtime import Runtime
from bot.web.app import build_app
from bot.web.console.services import ConsoleServices
from bot.wiring import build_service, console_services
from db import conversations, feedback, kb, users
from db import staff as staff_db
from db.conversations import StoredTurn
from db.settings import load_settings
from engine.types import KBEntry
from kb_import.texts import content_hash, search_text
from testkit.browser import serving

CLINIC = "Nha khoa Ánh Dương"
ADMIN = ("lan.admin@phongkham.vn", "mat-khau-quan-tri-1")
CLINICIAN = ("bs.minh@phongkham.vn", "mat-khau-bac-si-22")


async def services_for(
    pool: asyncpg.Pool, db_url: str, data_dir: Path, **overrides: object
) -> ConsoleServices:
    """The console's services as the composition root builds them (the ChatService patients are answered by),
    with ``data_dir`` as ``MEDBOT_DATA_DIR`` (where uploads wait for "Áp dụng"), never the working tree's;
    ``overrides``: other settings."""
    settings = load_settings(
        database_url=db_url, clinic_name=CLINIC, openai_api_key=None, medbot_data_dir=data_dir, **overrides
    )
    runtime = Runtime(settings=settings, url=db_url, pool=pool)
    return console_services(runtime, await build_service(runtime))


@asynccontextmanager
async def console_server(
    pool: asyncpg.Pool, db_url: str, services: ConsoleServices | None = None, *, data_dir: Path | None = None
) -> AsyncIterator[str]:
    """The web app (``bot.web.app.build_app``) on 127.0.0.1, with ``services`` (by default: new ones, whose data
    folder is ``data_dir``, else a temporary one removed afterwards); yields its base URL."""
    with tempfile.TemporaryDirectory(prefix="medbot-console-") as scratch:
        if services is None:
            services = await services_for(pool, db_url, data_dir or Path(scratch))
        async with serving(build_app(services)) as url:
            yield url


async def add_staff(pool: asyncpg.Pool) -> None:
    """The clinic's two accounts: an admin and a clinician (``ADMIN``, ``CLINICIAN``)."""
    await staff_db.create_account(pool, ADMIN[0], "admin", ADMIN[1])
    await staff_db.create_account(pool, CLINICIAN[0], "clinician", CLINICIAN[1])


async def add_entry(
    pool: asyncpg.Pool, role: str, code: str, question: str, answer: str, **fields: object
) -> int:
    entry = KBEntry(id=0, role=role, code=code, question=question, answer=answer, **fields)  # type: ignore[arg-type]
    entry_id = await kb.add_entry(
        pool, entry, search_text=search_text(entry), content_hash=content_hash(entry)
    )
    await kb.bump_version(pool, role)
    return entry_id


async def add_conversation(
    pool: asyncpg.Pool,
    turns: list[StoredTurn],
    *,
    external_id: str = "5550001",
    name: str | None = "Nguyễn Thị Hoa",
    channel: str = "telegram",
    role: str = "patient_dental",
    down_on: int | None = None,
) -> tuple[int, int]:
    """A patient's conversation stored as a channel stores it; ``down_on``: the turn the patient gave 👎.
    Returns (the patient's users.id, the conversation's id)."""
    user = await users.get_or_create(pool, channel, external_id, name)
    conversation_id = await conversations.new_conversation(pool, user.id, role)
    for n, turn in enumerate(turns):
        _, out_id = await conversations.store_turn(pool, conversation_id, user.id, turn)
        if n == down_on:
            assert await feedback.record(pool, user.id, out_id, -1)
    return user.id, conversation_id
