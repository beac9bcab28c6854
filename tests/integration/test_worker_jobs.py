"""The worker's jobs against the real database: backfill, retention, digest, cleanup, --once / --list."""

from __future__ import annotations

import argparse
import base64
from datetime import datetime, time, timedelta
from pathlib import Path

import asyncpg
import numpy as np
import pytest

from bot.worker import cli as worker_cli
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db import jobs as jobs_db
from db import kb, staff, users
from db.backfill import kb_embedding_text
from db.job_context import Job
from db.settings import load_settings
from engine.embedding import E5Embedder
from engine.types import KBEntry
from kb_import import backfill
from tests.integration.worker_helpers import make_ctx

JOBS = {j.name: j for j in default_jobs()}


def _arr(value: object) -> np.ndarray:
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return v / np.linalg.norm(v)


async def test_backfill_embeds_exactly_missing_and_outdated_rows(db: asyncpg.Pool, tmp_path: Path) -> None:
    ctx = make_ctx(db, tmp_path, worker_backfill_batch=2)
    model = E5Embedder().name
    current = _vec(1)

    async def add(
        code: str, question: str, answer: str, vec: np.ndarray | None, emb_model: str | None
    ) -> int:
        entry = KBEntry(id=0, role="patient_dental", code=code, question=question, answer=answer)
        return await kb.add_entry(db, entry, embedding=vec, embedding_model=emb_model)

    missing1 = await add("D001", "Răng bị ê buốt phải làm sao?", "Dùng kem chống ê buốt.", None, None)
    missing2 = await add("D002", "Có nên cạo vôi răng định kỳ?", "Nên, 6 tháng một lần.", None, None)
    outdated = await add(
        "D003", "Trẻ mấy tuổi thì đánh răng?", "Từ khi mọc răng đầu tiên.", _vec(2), "old-model"
    )
    blank_q = await add("D004", "  ", "Súc miệng nước muối ấm giúp giảm viêm nhẹ.", None, None)
    up_to_date = await add("D005", "Niềng răng có đau không?", "Hơi ê vài ngày đầu.", current, model)
    inactive = await add("D006", "Câu hỏi cũ", "Trả lời cũ", None, None)
    await db.execute("UPDATE kb_entries SET active = false WHERE id = $1", inactive)

    doc = await db.fetchval(
        "INSERT INTO guideline_documents (title, filename, sha256) VALUES ('HD', 'hd.md', 'x') RETURNING id"
    )
    chunk_missing = await db.fetchval(
        "INSERT INTO guideline_chunks (document_id, ord, text) VALUES ($1, 0, 'Metformin là thuốc đầu tay.') "
        "RETURNING id",
        doc,
    )
    chunk_current = await db.fetchval(
        "INSERT INTO guideline_chunks (document_id, ord, text, embedding, embedding_model) "
        "VALUES ($1, 1, 'HbA1c mục tiêu dưới 7%.', $2, $3) RETURNING id",
        doc,
        current,
        model,
    )

    result = await run_job(ctx, JOBS["embedding_backfill"])
    assert result.status == "ok", result.error
    assert result.counts["kb_entries"] == 4
    assert result.counts["guideline_chunks"] == 1
    assert result.counts["remaining"] == 0

    rows = {
        r["id"]: r
        for r in await db.fetch("SELECT id, question, answer, embedding, embedding_model FROM kb_entries")
    }
    for entry_id in (missing1, missing2, outdated, blank_q):
        assert rows[entry_id]["embedding_model"] == model
    assert rows[inactive]["embedding"] is None
    assert np.allclose(_arr(rows[up_to_date]["embedding"]), current)  # untouched

    # The stored vectors are the embedder's vectors of the chosen text (the answer when the question is blank).
    e5 = ctx.embedder()
    expected = await e5.inner.embed_passages(
        [kb_embedding_text(rows[i]["question"], rows[i]["answer"]) for i in (missing1, blank_q)]
    )
    assert np.allclose(_arr(rows[missing1]["embedding"]), expected[0], atol=1e-4)
    assert np.allclose(_arr(rows[blank_q]["embedding"]), expected[1], atol=1e-4)

    chunks = {
        r["id"]: r for r in await db.fetch("SELECT id, embedding, embedding_model FROM guideline_chunks")
    }
    assert chunks[chunk_missing]["embedding_model"] == model
    assert np.allclose(_arr(chunks[chunk_current]["embedding"]), current)

    again = await backfill.run(ctx)
    assert again["kb_entries"] == 0 and again["guideline_chunks"] == 0 and again["model_calls"] == 0


async def test_retention_removes_exactly_what_is_older_than_the_cutoff(
    db: asyncpg.Pool, tmp_path: Path
) -> None:
    ctx = make_ctx(db, tmp_path, retention_days=30)
    user = await users.get_or_create(db, "telegram", "5001")

    async def conversation(age: str) -> int:
        return await db.fetchval(
            "INSERT INTO conversations (user_id, role, started_at, last_activity_at) "
            "VALUES ($1, 'patient_dental', now() - $2::text::interval, now() - $2::text::interval) RETURNING id",
            user.id,
            age,
        )

    async def message(conv: int, age: str, direction: str = "in") -> int:
        return await db.fetchval(
            "INSERT INTO messages (conversation_id, user_id, direction, text, trace, created_at) "
            "VALUES ($1, $2, $3, 'x', '[{\"node\": \"IngestQuery\"}]', now() - $4::text::interval) RETURNING id",
            conv,
            user.id,
            direction,
            age,
        )

    old_conv = await conversation("30 days 1 hour")
    old_in = await message(old_conv, "31 days")
    old_out = await message(old_conv, "30 days 1 minute", "out")
    await db.execute(
        "INSERT INTO feedback (user_id, message_id, rating) VALUES ($1, $2, -1)", user.id, old_out
    )

    mixed_conv = await conversation("29 days")
    mixed_old = await message(mixed_conv, "40 days")
    mixed_new = await message(mixed_conv, "29 days 23 hours 59 minutes")
    recent_conv = await conversation("1 hour")
    recent = await message(recent_conv, "1 hour")
    empty_fresh = await conversation("1 minute")
    empty_old = await conversation("45 days")

    result = await run_job(ctx, JOBS["retention"])
    assert result.status == "ok", result.error
    assert result.counts["messages"] == 3
    assert result.counts["conversations"] == 2

    remaining = {r["id"] for r in await db.fetch("SELECT id FROM messages")}
    assert remaining == {mixed_new, recent}
    assert not {old_in, old_out, mixed_old} & remaining
    conversations = {r["id"] for r in await db.fetch("SELECT id FROM conversations")}
    assert conversations == {mixed_conv, recent_conv, empty_fresh}
    assert empty_old not in conversations
    assert await db.fetchval("SELECT count(*) FROM feedback") == 0

    again = await run_job(ctx, JOBS["retention"])
    assert again.counts["messages"] == 0 and again.counts["conversations"] == 0


async def test_digest_lands_in_the_outbox(db: asyncpg.Pool, tmp_path: Path) -> None:
    ctx = make_ctx(db, tmp_path, admin_ids=[111], score_threshold=0.5)
    tz = ctx.worker.tz
    yesterday = datetime.now(tz).date() - timedelta(days=1)
    at = datetime.combine(yesterday, time(10, 15), tzinfo=tz)
    db_admin = await users.get_or_create(db, "telegram", "333")
    await users.set_admin(db, db_admin.id, True)
    patient = await users.get_or_create(db, "telegram", "9001")
    conv = await db.fetchval(
        "INSERT INTO conversations (user_id, role) VALUES ($1, 'patient_dental') RETURNING id", patient.id
    )

    async def turn(question: str, *, score: float, codes: list[str], hour_shift: int = 0) -> int:
        when = at + timedelta(hours=hour_shift)
        await db.execute(
            "INSERT INTO messages (conversation_id, user_id, direction, text, input_type, created_at) "
            "VALUES ($1, $2, 'in', $3, 'medical_question', $4)",
            conv,
            patient.id,
            question,
            when,
        )
        return await db.fetchval(
            "INSERT INTO messages (conversation_id, user_id, direction, text, input_type, retrieval_score, "
            "citations, latency_ms, created_at) VALUES ($1, $2, 'out', 'trả lời', 'medical_question', $3, $4, 120, $5) "
            "RETURNING id",
            conv,
            patient.id,
            score,
            codes,
            when + timedelta(seconds=1),
        )

    await turn("Răng bị ê buốt phải làm sao?", score=0.9, codes=["D001"])
    await turn("Ăn kẹo cao su có hại men răng không?", score=0.2, codes=[], hour_shift=3)
    disliked = await turn("Bao lâu thì nên thay bàn chải?", score=0.8, codes=["D007"], hour_shift=5)
    await db.execute(
        "INSERT INTO feedback (user_id, message_id, rating, created_at) VALUES ($1, $2, -1, $3)",
        patient.id,
        disliked,
        at + timedelta(hours=6),
    )
    # Today's traffic is not part of yesterday's digest.
    await db.execute(
        "INSERT INTO messages (conversation_id, user_id, direction, text) VALUES ($1, $2, 'in', 'hôm nay')",
        conv,
        patient.id,
    )

    result = await run_job(ctx, JOBS["digest"])
    assert result.status == "ok", result.error
    assert result.counts["date"] == yesterday.isoformat()
    assert result.counts["messages_in"] == 3
    assert result.counts["unanswered"] == 1
    assert result.counts["thumbs_down"] == 1

    rows = await db.fetch("SELECT chat_id, payload, status FROM outbox ORDER BY id")
    assert sorted({r["chat_id"] for r in rows}) == ["111", "333"]
    assert all(r["status"] == "pending" for r in rows)
    texts = [r["payload"] for r in rows if r["payload"]["type"] == "text"]
    photos = [r["payload"] for r in rows if r["payload"]["type"] == "photo"]
    assert len(texts) == 2 and len(photos) == 2
    text = texts[0]["text"]
    assert f"{yesterday:%d/%m/%Y}" in text
    assert "Ăn kẹo cao su có hại men răng không?" in text  # unanswered / low score
    assert "Bao lâu thì nên thay bàn chải?" in text  # 👎
    assert "Răng bị ê buốt" not in text  # answered well: not listed
    assert len(text) <= 4096
    png = Path(photos[0]["path"]).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert base64.b64decode(photos[0]["data_b64"]) == png

    # The scheduled run does not send the same day twice; an operator's --once does.
    again = await run_job(ctx, JOBS["digest"])
    assert again.status == "skipped"
    assert await db.fetchval("SELECT count(*) FROM outbox") == 4


async def test_cleanup_removes_expired_suggestions_old_updates_and_runs(
    db: asyncpg.Pool, tmp_path: Path
) -> None:
    ctx = make_ctx(db, tmp_path)
    user = await users.get_or_create(db, "telegram", "7001")
    await db.execute(
        "INSERT INTO suggestion_sets (user_id, questions, expires_at) VALUES "
        "($1, '{a}', now() - interval '1 minute'), ($1, '{b}', now() + interval '1 day')",
        user.id,
    )
    await db.execute(
        "INSERT INTO processed_updates (channel, update_id, processed_at) VALUES "
        "('telegram', '1', now() - interval '8 days'), ('telegram', '2', now() - interval '6 days')"
    )
    await db.execute(
        "INSERT INTO job_runs (job, started_at, status) VALUES ('x', now() - interval '40 days', 'ok')"
    )
    clinician = await staff.create_account(db, "bs.an@phongkham.vn", "clinician", "mat-khau-bac-si-9")
    live, _ = await staff.create_session(db, clinician.id)
    expired, _ = await staff.create_session(db, clinician.id)
    await db.execute(
        "UPDATE staff_sessions SET expires_at = now() - interval '1 minute' WHERE token_hash = $1",
        staff.token_hash(expired),
    )
    result = await run_job(ctx, JOBS["cleanup"])
    assert result.status == "ok", result.error
    assert result.counts["staff_sessions"] == 1  # a console session that ended is removed, a live one stays
    assert await staff.session_for(db, live) is not None
    assert await db.fetchval("SELECT count(*) FROM staff_sessions") == 1
    assert result.counts["suggestion_sets"] == 1
    assert result.counts["processed_updates"] == 1
    assert result.counts["job_runs"] == 1
    assert await db.fetchval("SELECT array_agg(update_id) FROM processed_updates") == ["2"]
    assert await db.fetchval("SELECT count(*) FROM suggestion_sets") == 1


async def test_cleanup_keeps_the_console_audit_for_console_audit_days(
    db: asyncpg.Pool, tmp_path: Path
) -> None:
    admin = await staff.create_account(db, "lan.admin@phongkham.vn", "admin", "mat-khau-quan-tri-1")
    for age in (400, 364, 0):  # days
        await staff.audit(db, admin.id, "login", f"{age} ngày trước")
        await db.execute(
            "UPDATE console_audit SET at = now() - make_interval(days => $1) WHERE subject = $2",
            age,
            f"{age} ngày trước",
        )

    async def shown() -> list[str]:  # what the console's audit page lists
        return [e.subject for e in await staff.recent_audit(db)]

    kept = await run_job(make_ctx(db, tmp_path), JOBS["cleanup"])  # CONSOLE_AUDIT_DAYS: 365 by default
    assert kept.status == "ok", kept.error
    assert kept.counts["console_audit"] == 1
    assert await shown() == ["0 ngày trước", "364 ngày trước"]

    forever = await run_job(make_ctx(db, tmp_path, console_audit_days=0), JOBS["cleanup"])
    assert forever.counts["console_audit"] == 0
    assert await shown() == ["0 ngày trước", "364 ngày trước"]

    month = await run_job(make_ctx(db, tmp_path, console_audit_days=30), JOBS["cleanup"])
    assert month.counts["console_audit"] == 1
    assert await shown() == ["0 ngày trước"]


async def test_failing_job_is_recorded_and_unavailable_jobs_skip(db: asyncpg.Pool, tmp_path: Path) -> None:
    ctx = make_ctx(db, tmp_path)

    async def boom(_: object) -> dict:
        raise ValueError("bảng tính hỏng")

    result = await run_job(ctx, Job("boom", boom, "off", "raises"))
    assert result.status == "failed"
    row = (await jobs_db.runs(db, "boom"))[0]
    assert row["status"] == "failed" and row["finished_at"] is not None
    assert "ValueError: bảng tính hỏng" in row["error"]

    # No Telegram token / no Zalo configuration: recorded as skipped with the reason, never failed.
    for name in ("outbox_drain", "zalo_token_refresh"):
        skipped = await run_job(ctx, JOBS[name])
        assert skipped.status == "skipped"
        assert skipped.counts["reason"]


async def test_run_left_running_by_a_dead_worker_is_marked_failed(db: asyncpg.Pool, tmp_path: Path) -> None:
    ctx = make_ctx(db, tmp_path)
    stale = await jobs_db.start(db, "cleanup", "gone-host:1")
    result = await run_job(ctx, JOBS["cleanup"])
    assert result.status == "ok"
    row = next(r for r in await jobs_db.runs(db, "cleanup") if r["id"] == stale)
    assert row["status"] == "failed" and "abandoned" in row["error"]


async def test_cli_once_and_list(
    db: asyncpg.Pool,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setenv("WORKER_MIGRATE", "false")
    settings = load_settings(database_url=db_url, medbot_data_dir=tmp_path, kb_import_dir=tmp_path / "imp")
    code = await worker_cli.worker_command(argparse.Namespace(once="cleanup", list=False), settings)
    assert code == 0
    assert "cleanup: ok" in capsys.readouterr().out
    assert [r["status"] for r in await jobs_db.runs(db, "cleanup")] == ["ok"]

    assert await worker_cli.worker_command(argparse.Namespace(once="nope", list=False), settings) == 2

    code = await worker_cli.worker_command(argparse.Namespace(once=None, list=True), settings)
    assert code == 0
    out = capsys.readouterr().out
    for job in JOBS:
        assert job in out
    assert "every 10m" in out and "cron 0 7 * * *" in out
    assert "never" in out  # jobs that have not run yet
