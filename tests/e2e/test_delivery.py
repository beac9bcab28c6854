"""Delivery guarantees end to end: redelivery dedupe, 429 retry, splitting, HTML safety, erasure,
webhook secret, and two webhook workers keeping every chat's order."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import asyncpg

from db import users
from testkit.bot_process import StartBot
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard, shows


async def test_redelivered_update_gets_one_reply(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    chat = 2001
    await onboard(fake, chat)
    update = fake.make_message_update(chat, "Có nên lấy cao răng định kỳ không?")
    await fake.deliver(update)
    await fake.deliver(update)  # Telegram redelivers the same update_id
    await fake.wait_for(lambda: fake.delivered.get(update["update_id"]) == 200, what="first delivery")
    marker = await fake.send_text(chat, "/help")  # delivered after both copies (one chat at a time)
    await fake.wait_delivered(marker)
    answers = [m for m in fake.messages[chat] if shows(m.plain, "D002")]
    assert len(answers) == 1
    count = await db.fetchval(
        "SELECT count(*) FROM messages m JOIN users u ON u.id = m.user_id WHERE u.external_id = $1 AND direction = 'in'",
        str(chat),
    )
    assert count == 1


async def test_429_is_retried_after_retry_after(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    chat = 2002
    await onboard(fake, chat)
    fake.inject_error("sendMessage", 429, retry_after=1)
    started = time.monotonic()
    await fake.send_text(chat, "Niềng răng mất bao lâu thì xong?")
    msgs = await fake.wait_for_messages(chat, 2, timeout=20)
    assert shows(msgs[1].plain, "D004")
    assert time.monotonic() - started >= 1.0
    assert any("Too Many Requests" in desc for _, desc in fake.errors)


async def test_long_answer_is_split_with_buttons_on_last_part(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    paragraphs = [
        f"Đoạn {i}: " + ("chăm sóc răng miệng đúng cách mỗi ngày. " * 30).strip() for i in range(1, 11)
    ]
    long_answer = "\n\n".join(paragraphs)
    assert len(long_answer) > 9000
    await add_kb(
        db, [("L001", "Hướng dẫn chăm sóc răng miệng toàn diện", long_answer, "Vệ sinh"), *DENTAL[:2]]
    )
    chat = 2003
    await onboard(fake, chat)
    await fake.send_text(chat, "Hướng dẫn chăm sóc răng miệng toàn diện")
    await fake.wait_for(lambda: any("📚 Nguồn" in m.plain for m in fake.messages[chat]), what="last part")
    parts = fake.messages[chat][1:]
    assert len(parts) >= 3
    assert all(len(p.plain) <= 4096 for p in parts)
    assert all(not p.buttons for p in parts[:-1]) and parts[-1].buttons
    text = "\n\n".join(p.plain for p in parts)
    positions = [text.index(f"Đoạn {i}:") for i in range(1, 11)]
    assert positions == sorted(positions)  # every paragraph, in order, none cut in two
    for i in range(1, 11):
        assert any(paragraphs[i - 1] in p.plain for p in parts)


async def test_kb_text_with_markup_characters_renders_safely(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    tricky = "Dùng <thuốc> & nước *muối* ấm, 2 < 3 > 1, tên_file_như_thế này & <b>không</b> in đậm."
    await add_kb(db, [("H001", "Súc miệng nước muối có tốt không?", tricky, "Vệ sinh"), *DENTAL[:2]])
    chat = 2004
    await onboard(fake, chat)
    await fake.send_text(chat, "Súc miệng nước muối có tốt không?")
    msgs = await fake.wait_for_messages(chat, 2)
    assert tricky in msgs[1].plain  # shown literally: escaped, not interpreted
    assert not fake.errors


async def test_erase_leaves_no_row_of_the_user(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    chat = 2005
    await onboard(fake, chat)
    await fake.send_text(chat, "Trẻ em mấy tuổi thì nên đi khám răng lần đầu?")
    msgs = await fake.wait_for_messages(chat, 2)
    cq = await fake.tap(chat, msgs[1].message_id, msgs[1].button("fb:")["callback_data"])
    await fake.wait_callback_answered(cq)
    user = await users.get(db, "telegram", str(chat))
    assert user is not None

    await fake.send_text(chat, "/xoadulieu")
    msgs = await fake.wait_for_messages(chat, 3)
    cq = await fake.tap(chat, msgs[2].message_id, msgs[2].button("erase:1")["callback_data"])
    await fake.wait_callback_answered(cq)
    await fake.wait_for(lambda: not msgs[2].buttons, what="erase confirmation")
    assert "Đã xoá" in msgs[2].plain
    for table in ("users", "conversations", "messages", "feedback", "suggestion_sets"):
        column = "id" if table == "users" else "user_id"
        assert await db.fetchval(f"SELECT count(*) FROM {table} WHERE {column} = $1", user.id) == 0, table
    assert await users.get(db, "telegram", str(chat)) is None


async def test_webhook_requires_the_secret(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    update = fake.make_message_update(2006, "/help")
    async with aiohttp.ClientSession() as s:
        for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
            async with s.post(fake.webhook_url, json=update, headers=headers) as r:
                assert r.status == 401
    assert not fake.messages[2006]
    assert await db.fetchval("SELECT count(*) FROM processed_updates") == 0


async def test_two_workers_keep_every_chat_in_order(
    db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot
) -> None:
    questions = [
        (f"N{k:02d}", f"Câu hỏi số {k} về {topic}?", f"Trả lời số {k}.", topic)
        for k, topic in enumerate(
            [
                "sâu răng",
                "nhổ răng",
                "tẩy trắng",
                "hôi miệng",
                "chảy máu chân răng",
                "răng khôn",
                "trám răng",
                "bọc sứ",
                "cấy ghép",
                "viêm tủy",
            ]
        )
    ]
    await add_kb(db, questions)
    # Both processes start at once (each spends seconds importing; readiness is still awaited for each).
    a, b = await asyncio.gather(start_bot(wait_webhook=False), start_bot(wait_webhook=False))
    fake.webhook_targets = [a.webhook, b.webhook]
    await fake.wait_for(lambda: fake.webhook_secret is not None, what="setWebhook")
    chats = [3000 + i for i in range(20)]

    async def run_chat(chat: int) -> None:
        await fake.send_text(chat, "/start patient_dental")
        for _, question, _, _ in questions:
            await fake.send_text(chat, question)

    started = time.monotonic()
    await asyncio.gather(*(run_chat(c) for c in chats))
    for chat in chats:
        await fake.wait_for_messages(chat, 11, timeout=90)
    elapsed = time.monotonic() - started
    for chat in chats:
        replies = fake.messages[chat][1:]
        assert len(replies) == 10, [m.plain for m in replies]
        for (code, _, _, _), reply in zip(questions, replies, strict=True):
            assert shows(reply.plain, code), (chat, code, reply.plain)
    await fake.wait_for(
        lambda: sum(1 for s in fake.delivered.values() if s == 200) == 20 * 11, what="all 200s"
    )
    print(f"two workers: 220 updates in {elapsed:.1f}s")
