"""Patient data stays where the patient put it (issue 16 §4), piece by piece; the whole journey through the
bot is tests/e2e/test_privacy.py.

* The LLM's rejected output echoes the patient's words: logs (INFO and up) and the stored trace name only the
  failing fields and error types, while the model itself still gets the full explanation to correct itself.
* The admins' digest quotes patients' questions and 👎 comments: a patient's erasure, and the retention purge,
  replace exactly the quotes of the messages that are gone, in pending and sent digests alike, and the admin
  receives the digest without them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.telegram.digest import ERASED_QUOTE
from bot.wiring import engine_deps
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db import outbox, users
from engine.deps import EngineDeps
from engine.flows import run_medical_flow
from testkit.fakes.openai_server import FakeOpenAI, Reply, chat_json
from testkit.fakes.telegram_server import FakeTelegram
from tests.conftest import runtime_with_llm
from tests.integration.worker_helpers import make_ctx

JOBS = {j.name: j for j in default_jobs()}
MARKER = "ZQX-5b0c2f1e9d8a4c7b"


@pytest.fixture
async def deps(sample_runtime: Any, fake_openai: FakeOpenAI) -> AsyncIterator[EngineDeps]:
    """The production engine wiring on the sample KB, with the fake server as its LLM."""
    made = engine_deps(runtime_with_llm(sample_runtime, fake_openai.base_url))
    made.config.llm_wait, made.config.llm_max_wait = 0.01, 0.05
    yield made
    assert made.llm is not None
    await made.llm.aclose()


async def test_rejected_llm_output_is_logged_by_field_and_type_never_by_value(
    deps: EngineDeps, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    classify_ok = {"input_type": "medical_question", "confidence": 0.9, "reason": "niềng răng",
                   "rag_questions": ["Niềng răng mất bao lâu?"]}  # fmt: skip
    fake_openai.push(
        # Classification: a wrong input_type that quotes the patient, then a good reply.
        Reply(content=chat_json({"input_type": f"hỏi về {MARKER}", "confidence": 0.9})),
        Reply(content=chat_json(classify_ok)),
        # Pruning: codes that are not candidates (the patient's words) every time → the unpruned list.
        *[Reply(content=chat_json({"keep_codes": [MARKER]}))] * 3,
        # Composing: suggestions that are not a list, every time → the curated answer.
        *[Reply(content=chat_json({"explanation": "", "suggestion_questions": MARKER, "used_codes": []}))]
        * 3,
    )
    shared: dict[str, Any] = {"role": "patient_dental", "input": f"niềng răng mất bao lâu {MARKER}"}
    out = await run_medical_flow(deps, shared)

    assert shared["classification_source"] == "llm" and shared["answer_source"] == "offline"
    assert out.citations == ["NK-027"]  # the patient still gets the curated answer
    assert MARKER not in caplog.text
    assert MARKER not in json.dumps(out.trace, ensure_ascii=False)
    assert MARKER not in json.dumps(shared["pruning"], ensure_ascii=False)
    # What went wrong is still there for the operator: the step, the field, the kind of error.
    assert "input_type: literal_error" in caplog.text
    assert "suggestion_questions: list_type" in caplog.text
    assert "keep_codes has 1 unknown code(s)" in caplog.text
    # And the model is told what to fix (the message, not the value it sent).
    refine = fake_openai.requests[1]["messages"][-1]["content"]
    assert "input_type" in refine and "Input should be 'medical_question'" in refine


async def test_digest_quotes_go_with_erasure_and_retention(db: asyncpg.Pool, tmp_path: Path) -> None:
    ctx = make_ctx(db, tmp_path, admin_ids=[111, 222], score_threshold=0.5, manual=True)
    yesterday = datetime.now(ctx.worker.tz).date() - timedelta(days=1)
    at = datetime.combine(yesterday, time(9), tzinfo=ctx.worker.tz)

    async def ask(external_id: str, question: str, *, comment: str | None = None) -> users.User:
        user = await users.get_or_create(db, "telegram", external_id)
        conv = await db.fetchval(
            "INSERT INTO conversations (user_id, role) VALUES ($1, 'patient_dental') RETURNING id", user.id
        )
        await db.execute(
            "INSERT INTO messages (conversation_id, user_id, direction, text, created_at) "
            "VALUES ($1, $2, 'in', $3, $4)",
            conv, user.id, question, at,
        )  # fmt: skip
        reply = await db.fetchval(
            "INSERT INTO messages (conversation_id, user_id, direction, text, input_type, retrieval_score, "
            "created_at) VALUES ($1, $2, 'out', 'Bạn mô tả thêm nhé.', 'medical_question', 0.1, $3) RETURNING id",
            conv, user.id, at,
        )  # fmt: skip
        if comment is not None:
            await db.execute(
                "INSERT INTO feedback (user_id, message_id, rating, comment, created_at) VALUES ($1, $2, -1, $3, $4)",
                user.id, reply, comment, at,
            )  # fmt: skip
        return user

    lan = await ask("9001", f"Răng cửa bị lung lay sau khi ngã {MARKER}?", comment=f"Chưa đúng ý {MARKER}")
    await ask("9002", "Đau nhức răng khôn về đêm phải làm sao?")
    result = await run_job(ctx, JOBS["digest"])
    assert result.status == "ok", result.error
    before = next(r["payload"] for r in await outbox.pending(db) if r["payload"]["type"] == "text")
    assert MARKER in before["text"] and "Đau nhức răng khôn về đêm" in before["text"]
    await db.execute("UPDATE outbox SET status = 'sent' WHERE payload->>'type' = 'text'")  # delivered already

    # Lan erases her data: her question and her comment leave every digest; the other patient's stays.
    await users.erase(db, lan.id)
    texts = [
        r["payload"]["text"] for r in await db.fetch("SELECT payload FROM outbox WHERE payload ? 'text'")
    ]
    assert len(texts) == 2 and all(MARKER not in t and t.count(f"“{ERASED_QUOTE}”") == 3 for t in texts), (
        texts
    )
    assert all("“Đau nhức răng khôn về đêm phải làm sao?”" in t for t in texts)
    rows = await db.fetch("SELECT payload FROM outbox")
    assert MARKER not in json.dumps([r["payload"] for r in rows], ensure_ascii=False)

    # Retention removes the rest of yesterday's messages: their quotes go too; the numbers stay.
    await db.execute("UPDATE messages SET created_at = created_at - interval '3 days'")
    purged = await run_job(make_ctx(db, tmp_path, retention_days=1), JOBS["retention"])
    assert purged.status == "ok" and purged.counts["digests_scrubbed"] == 2, purged.counts
    texts = [
        r["payload"]["text"] for r in await db.fetch("SELECT payload FROM outbox WHERE payload ? 'text'")
    ]
    assert all("Đau nhức răng khôn" not in t and t.count(f"“{ERASED_QUOTE}”") == 4 for t in texts), texts
    assert all("Câu hỏi y khoa: 2" in t for t in texts)

    # A digest still waiting in the outbox goes out with the quotes replaced.
    await db.execute("UPDATE outbox SET status = 'pending'")
    async with FakeTelegram("123:ABC") as fake:
        drain = make_ctx(db, tmp_path, telegram_bot_token="123:ABC", telegram_api_base=fake.base_url)
        assert (await run_job(drain, JOBS["outbox_drain"])).status == "ok"
        delivered = fake.messages[111][0].plain
    assert delivered.startswith("📊 Báo cáo ngày") and MARKER not in delivered
    assert "❓ Câu hỏi chưa trả lời tốt" in delivered and f"1. “{ERASED_QUOTE}”" in delivered
