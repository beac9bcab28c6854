"""Fair use on Telegram, end to end (issue 16 §5): the bot as a subprocess on the fake Bot API, real PostgreSQL,
and for the LLM budget the real ``openai`` client against the fake OpenAI server.

A minute window is ended by moving the sender's counter row back a minute (our own real table), never by
waiting.
"""

from __future__ import annotations

import re
from typing import Any

import asyncpg

from bot.fair_use import MINUTE_NOTICE
from testkit.bot_process import CLINICIAN_ID, StartBot
from testkit.fakes.openai_server import FakeOpenAI, answer
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard, shows

SENSITIVE = "Răng bị ê buốt khi uống nước lạnh thì làm sao?"  # D001
BRACES = "Niềng răng mất bao lâu thì xong?"  # D004
CHEST_PAIN = "bố tôi đau ngực dữ dội lan ra cánh tay trái, vã mồ hôi lạnh"
COMPOSED = "Theo tài liệu của phòng khám (câu trả lời do mô hình soạn)"  # only the fake model writes this


def is_card(text: str) -> bool:
    return "115" in text and "CẤP CỨU" in text


async def say(fake: FakeTelegram, chat: int, text: str) -> list[Any]:
    """Send ``text`` and return what the bot sent in reply (the webhook answers 200 once it is handled)."""
    n = len(fake.messages[chat])
    update_id = await fake.send_text(chat, text)
    assert await fake.wait_delivered(update_id) == 200
    return fake.messages[chat][n:]


async def test_messages_over_the_minute_limit_get_one_notice_and_emergencies_still_get_the_card(
    db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot
) -> None:
    await add_kb(db, DENTAL)
    await start_bot(env={"RATE_LIMIT_PER_MINUTE": "5", "RATE_LIMIT_PER_DAY": "0"})
    patient = 5501
    await onboard(fake, patient)  # /start and the role button: 2 of the 5
    for _ in range(3):
        (reply,) = await say(fake, patient, SENSITIVE)
        assert shows(reply.plain, "D001")
    answered = fake.messages[patient][-1]

    (notice,) = await say(fake, patient, SENSITIVE)  # the 6th: the notice, once
    assert notice.plain == MINUTE_NOTICE.format(limit=5)
    assert "hơi nhanh" in notice.plain and "115" in notice.plain
    assert await say(fake, patient, BRACES) == []  # nothing more this minute: no answer, no second notice
    assert await say(fake, patient, "/start") == []
    cq = await fake.tap(patient, answered.message_id, answered.button("sq:")["callback_data"])
    await fake.wait_callback_answered(cq)  # a refused tap is still answered: no spinning button
    assert not fake.unanswered_callbacks

    (card,) = await say(fake, patient, CHEST_PAIN)  # an emergency is always answered
    assert is_card(card.plain)

    # Clinic staff are not limited: /start, the role button and five questions, all answered.
    await onboard(fake, CLINICIAN_ID)
    for _ in range(5):
        (reply,) = await say(fake, CLINICIAN_ID, SENSITIVE)
        assert shows(reply.plain, "D001")

    # The next minute, the patient is answered again.
    await db.execute("UPDATE rate_counters SET minute_start = minute_start - interval '1 minute'")
    (reply,) = await say(fake, patient, BRACES)
    assert shows(reply.plain, "D004")


def fake_model(body: dict[str, Any]) -> dict[str, Any]:
    """A model that does each step of the flow right, naming only codes it was given."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if system.startswith("You route messages"):
        return answer({"input_type": "medical_question", "confidence": 0.9, "reason": "hỏi về răng",
                       "rag_questions": []})  # fmt: skip
    if system.startswith("You select knowledge-base entries"):
        return answer({"keep_codes": re.findall(r"^([A-Z0-9\-]+):", user, re.MULTILINE)[:7]})
    codes = sorted(set(re.findall(r"\[([A-Z0-9\-]+)\]", user)))
    return answer(
        {"explanation": f"{COMPOSED}: hãy khám nha sĩ.", "suggestion_questions": [], "used_codes": codes}
    )


async def test_after_the_daily_llm_budget_no_more_calls_reach_the_model_and_answers_still_come(
    db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot, fake_openai: FakeOpenAI
) -> None:
    fake_openai.default = fake_model  # type: ignore[assignment]  # every request, in any order
    await add_kb(db, DENTAL)
    await start_bot(env={
        "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_MODEL": "fake-model",
        "LLM_STEPS": "classify=on,expand=on,prune=on,compose=on", "LLM_DAILY_CALLS_PER_USER": "1",
    })  # fmt: skip
    patient, other = 5601, 5602
    await onboard(fake, patient)
    (first,) = await say(fake, patient, SENSITIVE)
    assert COMPOSED in first.plain  # within the budget: the model composed it
    calls = len(fake_openai.requests)
    assert calls >= 1

    # Budget spent (1 call a day): the offline path answers, and the model hears nothing more of this patient.
    (second,) = await say(fake, patient, BRACES)
    (third,) = await say(fake, patient, SENSITIVE)
    assert shows(second.plain, "D004") and shows(third.plain, "D001")
    assert COMPOSED not in second.plain + third.plain
    assert len(fake_openai.requests) == calls
    asked = [m["content"] for r in fake_openai.requests for m in r["messages"] if m["role"] == "user"]
    assert not any(f"User message: {BRACES}" in text for text in asked)

    # The budget is per patient; clinic staff have none.
    await onboard(fake, other)
    (reply,) = await say(fake, other, BRACES)
    assert COMPOSED in reply.plain and len(fake_openai.requests) > calls
    asked = [m["content"] for r in fake_openai.requests for m in r["messages"] if m["role"] == "user"]
    assert any(f"User message: {BRACES}" in text for text in asked)  # what the check above would have seen
    await onboard(fake, CLINICIAN_ID)
    for _ in range(2):
        (reply,) = await say(fake, CLINICIAN_ID, SENSITIVE)
        assert COMPOSED in reply.plain
