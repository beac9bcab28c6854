"""Triage first on Zalo and the console, with the real engine and database: the 115 answer comes before
anything else for a user with no role, and still comes when PostgreSQL is gone (``tests/netcut.py``)."""

from __future__ import annotations

import io

import asyncpg

from bot.console import _turn
from bot.runtime import Runtime
from bot.wiring import build_service
from bot.zalo.bot import PICK_ROLE_FIRST
from db.pool import create_pool
from db.settings import load_settings
from tests.integration.zalo_support import zalo_harness
from tests.netcut import PgRelay

DROWNING_DKA = "bé nhà tôi vừa đuối nước, vớt lên tím tái không thở"
HYPO = "mẹ tôi bị tiểu đường, đo đường huyết 2.1, giờ lơ mơ gọi không trả lời"


def is_card(text: str) -> bool:
    return "115" in text and "CẤP CỨU" in text


async def test_zalo_emergency_before_a_role_then_the_picker(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False) as z:
        await z.say("z1", HYPO)
        sent = z.fake.to("z1")
        assert is_card(sent[0].text) and "không cho ăn uống" in sent[0].text.lower(), sent[0].text
        assert sent[-1].text.startswith(PICK_ROLE_FIRST[:20])
        assert await db.fetchval("SELECT count(*) FROM messages WHERE red_flag AND direction = 'out'") == 1


async def test_zalo_emergency_with_the_database_down(db_url: str, db: asyncpg.Pool) -> None:
    async with PgRelay(db_url) as relay:
        pool = await create_pool(relay.url, max_size=4)
        try:
            async with zalo_harness(pool, seed=False) as z:
                await z.choose_role("z2")
                relay.cut()
                response = await z.post(z.event("z2", DROWNING_DKA))
                assert response.status_code == 200  # answered: Zalo must not redeliver it
                card = z.fake.to("z2")[-1].text
                assert is_card(card) and "ép tim" in card, card
        finally:
            pool.terminate()


async def test_console_emergency_with_the_database_down(db_url: str, db: asyncpg.Pool) -> None:
    async with PgRelay(db_url) as relay:
        pool = await create_pool(relay.url, max_size=4)
        try:
            runtime = Runtime(settings=load_settings(openai_api_key=None), url=relay.url, pool=pool)
            service = await build_service(runtime)
            user = await service.user("console", "nurse")
            relay.cut()
            out = io.StringIO()
            reply = await _turn(service, user, "cứu với, chồng tôi bị điện giật ngã ra bất tỉnh", out)
            assert reply is not None and reply.red_flag and reply.message_id is None  # not stored: DB gone
            shown = out.getvalue()
            assert is_card(shown) and ("ngắt" in shown or "cắt" in shown), shown
        finally:
            pool.terminate()
