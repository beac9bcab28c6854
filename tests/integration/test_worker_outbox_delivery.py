"""Admin notices queued by worker jobs (text and chart) reach Telegram through the worker's outbox job."""

from __future__ import annotations

import base64
from pathlib import Path

import asyncpg

from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db import outbox
from testkit.fakes.telegram_server import FakeTelegram
from tests.integration.worker_helpers import make_ctx

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


async def test_outbox_job_delivers_text_and_photo(db: asyncpg.Pool, tmp_path: Path) -> None:
    async with FakeTelegram("123:ABC") as fake:
        ctx = make_ctx(db, tmp_path, telegram_bot_token="123:ABC", telegram_api_base=fake.base_url)
        await outbox.enqueue_to_all(
            db,
            [111],
            [
                {"type": "text", "text": "Báo cáo ngày: 3 câu hỏi <chưa> có câu trả lời", "kind": "digest"},
                {"type": "photo", "data_b64": base64.b64encode(PNG).decode(), "filename": "chart.png",
                 "caption": "Biểu đồ"},
            ],
        )  # fmt: skip
        job = next(j for j in default_jobs() if j.name == "outbox_drain")
        run = await run_job(ctx, job)
        assert run.status == "ok" and run.counts["sent"] == 2
        sent = fake.messages[111]
        assert sent[0].plain == "Báo cáo ngày: 3 câu hỏi <chưa> có câu trả lời"  # plain text, not HTML
        assert sent[1].kind == "photo" and sent[1].file_bytes == PNG and sent[1].caption == "Biểu đồ"
        assert await db.fetchval("SELECT count(*) FROM outbox WHERE status = 'sent'") == 2
