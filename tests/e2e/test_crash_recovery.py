"""A bot killed (SIGKILL) while it answers a message: the platform redelivers, the restarted bot answers, once.

The answer is held mid-flight by the fake OpenAI server (the classification reply waits for an event the test
never sets before the kill), so the test knows the bot has claimed the update and not yet answered. Telegram
redelivers what was never acknowledged (the fake does, like Telegram, and the test delivers it once more);
for Zalo the test posts the same signed event again, as Zalo would. Also: an update another worker is
answering right now is not answered a second time, and Telegram is asked to deliver it again later.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp
import asyncpg

from bot.zalo.webhook import sign
from db import updates
from testkit.bot_process import BotProcess, StartBot
from testkit.fakes.openai_server import FakeOpenAI, Reply, chat_json
from testkit.fakes.telegram_server import FakeTelegram
from testkit.fakes.zalo_server import FakeZalo
from tests.e2e.conftest import DENTAL, add_kb, onboard

QUESTION = "rang bi e buot khi uong nuoc lanh thi lam sao"
CLASSIFY = {
    "input_type": "medical_question",
    "confidence": 0.9,
    "reason": "hỏi về ê buốt răng",
    "rag_questions": [],
}
LEASE = "2"  # UPDATE_LEASE_SECONDS of the bots here: a dead handler's claim runs out quickly
OA_SECRET = "oa-secret-crash"
ANSWER = {code: answer for code, _, answer, _ in DENTAL}  # what a message answered from that entry shows


def held_llm(held: int) -> tuple[FakeOpenAI, list[asyncio.Event], asyncio.Event]:
    """A fake model whose first ``held`` replies are held (arrived, gate); later calls fail at once, so the
    offline path answers."""
    llm = FakeOpenAI()
    arrived, gate = [asyncio.Event() for _ in range(held)], asyncio.Event()
    llm.push(*(Reply(content=chat_json(CLASSIFY), arrived=a, gate=gate) for a in arrived))
    llm.default = Reply(status=400)
    return llm, arrived, gate


async def kill(proc: BotProcess) -> None:
    assert proc.proc is not None
    proc.proc.kill()  # SIGKILL: nothing runs on the way out
    await proc.proc.wait()


async def stored_questions(db: asyncpg.Pool, channel: str, external_id: str, text: str) -> int:
    return int(
        await db.fetchval(
            "SELECT count(*) FROM messages m JOIN users u ON u.id = m.user_id "
            "WHERE u.channel = $1 AND u.external_id = $2 AND m.direction = 'in' AND m.text = $3",
            channel,
            external_id,
            text,
        )
    )


async def test_update_another_worker_is_answering_is_asked_again_not_answered_twice(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    chat = 1602
    await onboard(fake, chat)
    update = fake.make_message_update(chat, "Có nên lấy cao răng định kỳ không?")
    other = await updates.claim(db, "telegram", update["update_id"])  # another worker is answering it now
    assert other.ours
    await fake.deliver(update)
    await fake.wait_for(
        lambda: fake.delivered.get(update["update_id"]) == 503, what="503: in progress elsewhere"
    )
    await updates.done(db, other)  # that worker has answered it
    await fake.wait_for(lambda: fake.delivered.get(update["update_id"]) == 200, 30, "the retry acknowledged")
    marker = await fake.send_text(chat, "/help")
    await fake.wait_delivered(marker)
    assert not any(ANSWER["D002"] in m.plain for m in fake.messages[chat])  # the other worker answers it
    assert await stored_questions(db, "telegram", str(chat), "Có nên lấy cao răng định kỳ không?") == 0


class ZaloSender:
    """Signed Zalo events posted to a bot process, as Zalo does."""

    def __init__(self, zalo: FakeZalo) -> None:
        self.zalo = zalo
        self.seq = 0

    def event(self, user_id: str, text: str, msg_id: str) -> bytes:
        self.seq += 1
        event: dict[str, Any] = {
            "app_id": self.zalo.app_id,
            "user_id_by_app": f"app-{user_id}",
            "event_name": "user_send_text",
            "timestamp": str(int(time.time() * 1000) + self.seq),
            "recipient": {"id": "oa-1"},
            "sender": {"id": user_id},
            "message": {"msg_id": msg_id, "text": text},
        }
        return json.dumps(event, ensure_ascii=False).encode()

    async def post(self, proc: BotProcess, body: bytes) -> int:
        timestamp = str(json.loads(body)["timestamp"])
        headers = {"Content-Type": "application/json",
                   "X-ZEvent-Signature": sign(self.zalo.app_id, body, timestamp, OA_SECRET)}  # fmt: skip
        async with aiohttp.ClientSession() as s, s.post(f"http://127.0.0.1:{proc.port}/zalo/webhook",
                                                        data=body, headers=headers) as r:  # fmt: skip
            return r.status


async def test_bot_killed_mid_answer_answers_each_redelivery_once(
    db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot
) -> None:
    """One bot serving Telegram and Zalo is killed while it answers a message from each; after the restart,
    each platform's redelivery is answered, once."""
    llm, arrived, gate = held_llm(2)
    zalo = FakeZalo()
    await llm.start()
    await zalo.start()
    try:
        await add_kb(db, DENTAL)
        env = {
            "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": llm.base_url, "LLM_TIMEOUT": "120",
            "UPDATE_LEASE_SECONDS": LEASE, "ZALO_APP_ID": zalo.app_id, "ZALO_APP_SECRET": zalo.app_secret,
            "ZALO_OA_SECRET": OA_SECRET, "ZALO_OA_ACCESS_TOKEN": zalo.access_token,
            "ZALO_OA_REFRESH_TOKEN": zalo.refresh_token, "ZALO_API_BASE": zalo.base_url,
            "ZALO_OAUTH_BASE": zalo.base_url,
        }  # fmt: skip
        first = await start_bot(env=env)
        chat = 1601
        await onboard(fake, chat)
        sender, user = ZaloSender(zalo), "8800111"
        assert await sender.post(first, sender.event(user, "#role:patient_dental", "zr-1")) == 200

        update = fake.make_message_update(chat, QUESTION)
        await fake.deliver(update)
        await asyncio.wait_for(arrived[0].wait(), 30)  # answering the Telegram message: the model was asked
        zalo_question = "Răng bị ê buốt khi uống nước lạnh thì làm sao?"
        body = sender.event(user, zalo_question, "zq-1")
        in_flight = asyncio.create_task(sender.post(first, body))
        await asyncio.wait_for(arrived[1].wait(), 30)  # and the Zalo one
        await kill(first)
        try:
            await in_flight
            raise AssertionError("the killed bot answered the webhook")
        except aiohttp.ClientError:
            pass  # Zalo saw the connection die: no acknowledgement
        assert not any(ANSWER["D001"] in m.plain for m in fake.messages[chat])
        assert not any(ANSWER["D001"] in m.text for m in zalo.to(user))

        second = await start_bot(env=env)
        # Telegram redelivers what was never acknowledged (the fake keeps retrying too, like Telegram).
        await fake.deliver(update)
        # delivered after every copy: one update per chat at a time
        marker = await fake.send_text(chat, "/help")
        # Zalo delivers its event again.
        status = await sender.post(second, body)
        if status == 503:  # the dead handler's claim had not run out yet: in progress, try later
            deadline = time.monotonic() + 30
            while await db.fetchval(
                "SELECT lease_until > now() FROM processed_updates WHERE channel = 'zalo' AND update_id = 'zq-1'"
            ):
                assert time.monotonic() < deadline, "the dead handler's lease never ran out"
                await asyncio.sleep(0.1)  # polling the lease's own expiry, a database condition
            status = await sender.post(second, body)
        assert status == 200
        assert await sender.post(second, body) == 200  # a later duplicate is dropped

        assert await fake.wait_delivered(marker, timeout=90) == 200
        answers = [m.plain for m in fake.messages[chat] if ANSWER["D001"] in m.plain]
        assert len(answers) == 1, [m.plain for m in fake.messages[chat]]
        assert fake.delivered[update["update_id"]] == 200
        assert await stored_questions(db, "telegram", str(chat), QUESTION) == 1
        zalo_answers = [m.text for m in zalo.to(user) if ANSWER["D001"] in m.text]
        assert len(zalo_answers) == 1, [m.text for m in zalo.to(user)]
        assert await stored_questions(db, "zalo", user, zalo_question) == 1
    finally:
        gate.set()
        await zalo.stop()
        await llm.stop()
