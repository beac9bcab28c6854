"""Patient flow end to end: /start → role → question → answer with buttons → suggestion tap → 👍."""

from __future__ import annotations

import asyncpg

from db import users
from testkit.bot_process import StartBot
from testkit.fakes.openai_server import FakeOpenAI, Reply, chat_json
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard, shows


async def test_new_user_full_flow(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    chat = 1001
    await fake.send_text(chat, "/start")
    [welcome] = await fake.wait_for_messages(chat, 1)
    assert "/xoadulieu" in welcome.plain and "115" in welcome.plain  # privacy notice + disclaimer
    assert {b["callback_data"] for b in welcome.buttons} >= {"role:patient_dental", "role:patient_diabetes"}

    cq = await fake.tap(chat, welcome.message_id, "role:patient_dental")
    await fake.wait_callback_answered(cq)
    await fake.wait_for(lambda: not welcome.buttons, what="role picker replaced by confirmation")
    user = await users.get(db, "telegram", str(chat))
    assert user is not None and user.role == "patient_dental" and user.consent_at is not None

    await fake.send_text(chat, "rang bi e buot khi uong nuoc lanh thi lam sao")
    msgs = await fake.wait_for_messages(chat, 2)
    answer = msgs[1]
    assert shows(answer.plain, "D001")
    suggestions = [b for b in answer.buttons if b["callback_data"].startswith("sq:")]
    assert suggestions, answer.buttons
    assert {b["text"] for b in answer.buttons} >= {"👍", "👎"}
    assert all(len(b["callback_data"].encode()) <= 64 for b in answer.buttons)

    tapped = suggestions[0]
    cq = await fake.tap(chat, answer.message_id, tapped["callback_data"])
    await fake.wait_callback_answered(cq)
    msgs = await fake.wait_for_messages(chat, 3)
    code = next(c for c, q, _, _ in DENTAL if q.startswith(tapped["text"].rstrip("…")))
    assert shows(msgs[2].plain, code), msgs[2].plain  # the tapped question was answered

    fb = msgs[2].button("fb:")["callback_data"]
    cq = await fake.tap(chat, msgs[2].message_id, fb)
    assert "Cảm ơn" in (await fake.wait_callback_answered(cq)).get("text", "")
    rating = await db.fetchval(
        "SELECT rating FROM feedback f JOIN users u ON u.id = f.user_id WHERE u.external_id = $1", str(chat)
    )
    assert rating == 1
    turns = await db.fetchval(
        "SELECT count(*) FROM messages m JOIN users u ON u.id = m.user_id WHERE u.external_id = $1", str(chat)
    )
    assert turns == 4  # two questions, two answers
    assert chat not in fake.unanswered_callbacks.values() and not fake.errors


async def test_deep_link_preselects_role_polling(
    db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot
) -> None:
    await start_bot(webhook=False)
    chat = 1002
    await fake.send_text(chat, "/start patient_diabetes")
    [welcome] = await fake.wait_for_messages(chat, 1)
    assert "Tiểu đường" in welcome.plain
    assert not welcome.buttons
    user = await users.get(db, "telegram", str(chat))
    assert user is not None and user.role == "patient_diabetes"
    assert fake.commands["default"][0]["command"] == "start"
    assert any(c["command"] == "stats" for c in fake.commands["chat:999"])


async def test_non_text_and_stale_suggestion(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    chat = 1003
    await onboard(fake, chat)
    await fake.send_sticker(chat)
    msgs = await fake.wait_for_messages(chat, 2)
    assert "gõ câu hỏi" in msgs[1].plain

    await fake.send_text(chat, "Niềng răng mất bao lâu?")
    msgs = await fake.wait_for_messages(chat, 3)
    await db.execute("UPDATE suggestion_sets SET expires_at = now() - interval '1 minute'")
    cq = await fake.tap(chat, msgs[2].message_id, msgs[2].button("sq:")["callback_data"])
    answer = await fake.wait_callback_answered(cq)
    assert "hết hạn" in answer["text"]
    assert len(fake.messages[chat]) == 3  # nothing else was sent
    assert chat not in fake.unanswered_callbacks.values()


async def test_slow_answer_shows_typing_first(
    db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot
) -> None:
    """An answer that takes a while (here: a slow LLM) is preceded by "typing…"; quick ones need none."""
    llm = FakeOpenAI()
    await llm.start()
    try:
        classify = {"input_type": "medical_question", "confidence": 0.9, "reason": "hỏi về ê buốt răng",
                    "rag_questions": []}  # fmt: skip
        llm.push(Reply(content=chat_json(classify), delay=1.0))  # "typing…" goes out after 0.4 s
        llm.default = Reply(status=400)  # later LLM steps fail at once: the offline composition answers
        await add_kb(db, DENTAL)
        await start_bot(env={"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": llm.base_url})
        chat = 1077
        await onboard(fake, chat, "patient_dental")
        before, first_call = len(fake.messages[chat]), len(fake.calls)
        await fake.send_text(chat, "rang bi e buot khi uong nuoc lanh thi lam sao")
        [answer] = (await fake.wait_for_messages(chat, before + 1))[before:]
        assert shows(answer.plain, "D001")
        calls = [(m, p) for m, p in fake.calls[first_call:] if str(p.get("chat_id")) == str(chat)]
        order = [m if m != "sendChatAction" else p["action"] for m, p in calls]
        assert "typing" in order and order.index("typing") < order.index("sendMessage"), order
    finally:
        await llm.stop()
