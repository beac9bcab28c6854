"""The model's self-check at start (issue 20), end to end: ``medbot run`` with an OpenAI key whose model
answers garbage (the fake OpenAI server) checks it in the background, switches off the steps it breaks with
a log line, answers patients without asking the model for them, and ``/stats`` tells the admin why."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import asyncpg

from testkit.bot_process import ADMIN_ID, StartBot
from testkit.fakes.openai_server import FakeOpenAI, Reply
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, data_folder, onboard, shows


async def until(condition: Callable[[], bool], seconds: float, details: Callable[[], str]) -> None:
    """Wait for a condition of the bot's log (which no API call announces), polled under a deadline."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, details()[-3000:]
        await asyncio.sleep(0.1)


async def test_a_garbage_model_is_checked_at_start_and_its_steps_switched_off(
    db: asyncpg.Pool, fake: FakeTelegram, start_bot: StartBot, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    await add_kb(db, DENTAL)
    fake_openai.default = Reply(content="Tôi nghĩ đây là câu hỏi hay, bạn nên hỏi bác sĩ nhé.")
    data = data_folder(tmp_path / "data")
    bot = await start_bot(
        env={
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": fake_openai.base_url,
            "OPENAI_MODEL": "fake-model",
            "MEDBOT_DATA_DIR": str(data),
            "DEFAULT_ROLE": "patient_dental",
            "LLM_CHECK_AT_START": "true",
        }
    )
    await until(lambda: "llm_check.done" in bot.log(), 120, bot.log)
    assert (data / "llm_check.json").exists()
    log = bot.log()
    for step in ("classify", "expand", "compose"):
        assert f"LLM step {step} switched off by the self-check (breaks)" in log
    assert "LLM step prune switched off" not in log

    # A patient's question: the offline answer, and the model is not asked for the steps that are off.
    asked = len(fake_openai.requests)
    patient = 5301
    await onboard(fake, patient)
    n = len(fake.messages[patient])
    await fake.send_text(patient, "Răng bị ê buốt khi uống nước lạnh thì làm sao?")
    answer = (await fake.wait_for_messages(patient, n + 1))[n]
    assert shows(answer.plain, "D001")
    assert len(fake_openai.requests) == asked

    await onboard(fake, ADMIN_ID)
    await fake.send_text(ADMIN_ID, "/stats")
    text = await fake.wait_for(
        lambda: next((m for m in fake.messages[ADMIN_ID] if "Thống kê" in m.plain), None), what="stats"
    )
    assert "Mô hình AI fake-model: đã tắt 3 bước" in text.plain
    assert "soạn câu trả lời (thường bị lỗi, quá chậm hoặc trả lời không dùng được)" in text.plain
    assert "LLM_STEPS" in text.plain
