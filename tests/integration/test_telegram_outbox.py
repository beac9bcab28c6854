"""The outbox drain against the fake Bot API: Telegram's rate limits, per-chat order, 403 handling,
single drainer. Also the rendering helpers' edge cases (splitting, escaping) on real strings."""

from __future__ import annotations

import asyncio
import itertools

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
from tests.fakes.telegram_server import FakeTelegram, parse_html


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
