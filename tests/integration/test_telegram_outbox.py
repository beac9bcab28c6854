"""The outbox drain against the fake Bot API: Telegram's rate limits, per-chat order, 403 handling,
single drainer, a drainer whose connections drop or whose process is killed mid-send. Also the rendering
helpers' edge cases (splitting, escaping) on real strings."""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from pathlib import Path

import asyncpg
import pytest
from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from bot.service import Reply
from bot.telegram.outbox import drain
from bot.telegram.render import answer_html, split_html, utf16_len
from bot.telegram.session import DeliveryPolicy
from db import outbox, users
from db.pool import SESSION_SETTINGS, create_pool
from testkit.fakes.telegram_server import FakeTelegram, parse_html
from tests.conftest import ROOT
from tests.integration.worker_helpers import eventually


@pytest.fixture
async def fake_bot(db: asyncpg.Pool):
    async with FakeTelegram("123:ABC") as fake:
        session = AiohttpSession(api=TelegramAPIServer.from_base(fake.base_url))
        session.middleware(DeliveryPolicy(db))
        bot = Bot("123:ABC", session=session)
        yield fake, bot
        await bot.session.close()


async def test_drain_respects_limits_order_and_blocks(db: asyncpg.Pool, fake_bot) -> None:
    fake, bot = fake_bot
    blocked = await users.get_or_create(db, "telegram", "777")
    for i in range(3):
        await outbox.enqueue(db, 500, {"text": f"tin {i}"})
    for chat in range(600, 640):
        await outbox.enqueue(db, chat, {"text": "bản tin tuần này"})
    await outbox.enqueue(db, 777, {"text": "không tới"})
    fake.blocked_chats.add(777)  # that user blocked the bot: 403
    second = asyncio.create_task(drain(bot, db))
    sent = await drain(bot, db)
    assert await second == 0 or sent == 0  # only one drainer works at a time
    assert sent + await second == 43
    times = sorted(m.sent_at for msgs in fake.messages.values() for m in msgs)
    assert len(times) == 43
    for i in range(len(times)):
        in_window = [t for t in times if times[i] <= t < times[i] + 1.0]
        assert len(in_window) <= 26  # ≤ 25 msg/s (+1 for window edges)
    own = fake.messages[500]
    assert [m.plain for m in own] == ["tin 0", "tin 1", "tin 2"]
    assert all(b.sent_at - a.sent_at >= 0.95 for a, b in itertools.pairwise(own))
    user = await users.get_by_id(db, blocked.id)
    assert user is not None and not user.active
    assert await outbox.pending_count(db) == 0


def test_split_keeps_paragraphs_and_entities() -> None:
    para = "Chăm sóc răng & nướu <đều đặn> mỗi ngày. " * 60
    html_text = answer_html(Reply(text="\n\n".join([para] * 6), citations=["D1"]))
    parts = split_html(html_text, limit=4000)
    assert len(parts) >= 3
    for part in parts:
        assert utf16_len(part) <= 4000
        parse_html(part)  # every part parses: no entity or tag cut in two
    one = split_html("&amp;" * 1000, limit=4000)
    assert all(parse_html(p) for p in one) and sum(len(parse_html(p)) for p in one) == 1000


async def test_drainer_whose_connections_drop_mid_send_is_not_doubled(
    db: asyncpg.Pool, db_url: str, fake_bot
) -> None:
    """The first drainer's database connections are all cut while Telegram holds its first send (a pooler
    restart, a network blip). A second drainer started then must not send what the first is sending: each
    admin gets each message once."""
    fake, bot = fake_bot
    chats = [801, 802, 803]
    for chat in chats:
        await outbox.enqueue(db, chat, {"text": f"Báo cáo tuần cho {chat}"})
    first_pool = await create_pool(
        db_url, max_size=2, server_settings={**SESSION_SETTINGS, "application_name": "drainer-a"}
    )
    try:
        held = fake.hold("sendMessage")
        first = asyncio.create_task(drain(bot, first_pool))
        await asyncio.wait_for(held.arrived.wait(), 15)
        cut = await db.fetchval(
            "SELECT array_agg(pid) FROM pg_stat_activity WHERE application_name = 'drainer-a'"
        )
        assert cut
        await db.execute("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", cut)
        await eventually(  # the server has ended them (the pool opens new ones by itself)
            lambda: db.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", cut),
            lambda n: n == 0,
        )
        second = await drain(bot, db)
        held.release.set()
        sent = await asyncio.wait_for(first, 30)
    finally:
        await first_pool.close()
    assert {chat: [m.plain for m in fake.messages[chat]] for chat in chats} == {
        chat: [f"Báo cáo tuần cho {chat}"] for chat in chats
    }
    assert (sent, second) == (3, 0)
    assert await outbox.pending_count(db) == 0


async def test_killed_drainer_message_goes_out_once_after_its_lease(
    db: asyncpg.Pool, db_url: str, fake_bot, tmp_path: Path
) -> None:
    """``medbot worker --once outbox_drain`` is SIGKILLed while Telegram holds its send. Its claim holds for the
    lease (it may have been mid-send), so a drainer right after it sends nothing; once the lease has run out,
    the next drainer sends the message, once."""
    fake, bot = fake_bot
    chat = 811
    row_id = await outbox.enqueue(db, chat, {"text": "Báo cáo nhập kho kiến thức: 12 mục mới"})
    held = fake.hold("sendMessage")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WORKER_", "DATABASE_URL"))},
        "DATABASE_URL": db_url,
        "TELEGRAM_BOT_TOKEN": "123:ABC",
        "TELEGRAM_API_BASE": fake.base_url,
        "WORKER_MIGRATE": "false",
        "WORKER_OUTBOX_LEASE_SECONDS": "2",
        "MEDBOT_DATA_DIR": str(tmp_path / "data"),
        "LOG_LEVEL": "INFO",
        "PYTHONPATH": str(ROOT),
    }
    log = tmp_path / "drainer.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "worker", "--once", "outbox_drain",
            env=env, cwd=ROOT, stdout=out, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        try:
            await asyncio.wait_for(held.arrived.wait(), 60)
        except TimeoutError:
            raise AssertionError(log.read_text(errors="replace")) from None
        finally:
            proc.kill()
            await proc.wait()

    assert await drain(bot, db) == 0  # its claim still holds
    assert not fake.messages[chat]
    await eventually(
        lambda: db.fetchval("SELECT claimed_until < now() FROM outbox WHERE id = $1", row_id), bool, within=30
    )
    assert await drain(bot, db) == 1
    assert [m.plain for m in fake.messages[chat]] == ["Báo cáo nhập kho kiến thức: 12 mục mới"]
    assert await outbox.pending_count(db) == 0
