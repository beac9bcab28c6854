"""The scheduler: a failing job is recorded and the worker goes on; one leader among several workers; the
leader killed (SIGKILL) → another takes over. Synchronisation is by polling ``job_runs`` with deadlines."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import asyncpg

from bot.worker.scheduler import Worker
from db import jobs as jobs_db
from db.job_context import Job, JobContext
from tests.integration.worker_helpers import eventually, make_ctx

ROOT = Path(__file__).resolve().parents[2]


def _fast(ctx: JobContext) -> None:
    ctx.worker.worker_leader_retry_seconds = 0.2
    ctx.worker.worker_retry_base_seconds = 0.2
    ctx.worker.worker_retry_max_seconds = 0.4


async def _statuses(db: asyncpg.Pool) -> Counter:
    rows = await db.fetch("SELECT job, status FROM job_runs")
    return Counter((r["job"], r["status"]) for r in rows)


async def test_failing_job_is_recorded_and_worker_keeps_running(
    db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db, tmp_path)
    _fast(ctx)
    calls = Counter()

    async def boom(_: JobContext) -> dict:
        calls["boom"] += 1
        raise RuntimeError("boom")

    async def tick(_: JobContext) -> dict:
        calls["tick"] += 1
        return {"n": calls["tick"]}

    jobs = [Job("boom", boom, "every 0.3s", "raises"), Job("tick", tick, "every 0.3s", "fine")]
    worker = Worker(ctx, db_url, jobs, worker_id="in-process")
    task = asyncio.create_task(worker.run())
    try:
        await eventually(
            lambda: _statuses(db), lambda c: c[("boom", "failed")] >= 3 and c[("tick", "ok")] >= 3, within=30
        )
        assert not task.done()  # the failures did not stop the worker
        assert worker.is_leader
        boom_rows = await jobs_db.runs(db, "boom")
        assert all("RuntimeError: boom" in r["error"] for r in boom_rows if r["status"] == "failed")
        first_failure = min(r["finished_at"] for r in boom_rows if r["status"] == "failed")
        tick_rows = await jobs_db.runs(db, "tick")
        assert any(r["started_at"] > first_failure for r in tick_rows)  # the next job still ran
    finally:
        worker.stop()
        await asyncio.wait_for(task, 10)
    assert not worker.is_leader


async def test_two_in_process_workers_one_leader_then_handover(
    db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db, tmp_path)
    _fast(ctx)

    async def tick(_: JobContext) -> dict:
        return {}

    jobs = [Job("tick", tick, "every 0.2s", "fine")]
    a = Worker(ctx, db_url, jobs, worker_id="A")
    b = Worker(ctx, db_url, jobs, worker_id="B")
    tasks = {"A": asyncio.create_task(a.run()), "B": asyncio.create_task(b.run())}
    try:
        await eventually(lambda: jobs_db.runs(db, "tick"), lambda rows: len(rows) >= 5, within=20)
        assert [a.is_leader, b.is_leader].count(True) == 1
        leader, follower = (a, b) if a.is_leader else (b, a)
        workers = {r["worker"] for r in await jobs_db.runs(db, "tick")}
        assert workers == {leader.worker_id}

        leader.stop()
        await asyncio.wait_for(tasks[leader.worker_id], 10)
        rows = await eventually(
            lambda: jobs_db.runs(db, "tick"), lambda rs: any(r["worker"] == follower.worker_id for r in rs)
        )
        assert follower.is_leader
        assert {r["status"] for r in rows} <= {"ok", "running"}
    finally:
        a.stop()
        b.stop()
        await asyncio.wait_for(asyncio.gather(*tasks.values()), 10)


async def test_overdue_cron_job_runs_on_takeover_and_failure_is_retried(
    db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db, tmp_path)
    _fast(ctx)
    calls = Counter()

    async def flaky_daily(_: JobContext) -> dict:
        calls["daily"] += 1
        if calls["daily"] == 1:
            raise RuntimeError("first attempt fails")
        return {"attempt": calls["daily"]}

    # A daily job whose due time passed without a successful run: the new leader runs it now; the failure is
    # retried after the backoff delay instead of waiting for tomorrow's tick.
    worker = Worker(ctx, db_url, [Job("daily", flaky_daily, "cron 0 7 * * *", "daily")], worker_id="solo")
    task = asyncio.create_task(worker.run())
    try:
        rows = await eventually(
            lambda: jobs_db.runs(db, "daily"), lambda rs: any(r["status"] == "ok" for r in rs), within=20
        )
        assert [r["status"] for r in reversed(rows)] == ["failed", "ok"]
    finally:
        worker.stop()
        await asyncio.wait_for(task, 10)


def _spawn(db_url: str, tmp_path: Path, name: str) -> tuple[subprocess.Popen, Path]:
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "MEDBOT_DATA_DIR": str(tmp_path / "data"),
        "KB_IMPORT_DIR": str(tmp_path / "import"),
        "WORKER_ONLY": "cleanup",
        "WORKER_SCHEDULES": "cleanup=every 0.2s",
        "WORKER_LEADER_RETRY_SECONDS": "0.2",
        "WORKER_MIGRATE": "false",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / f"{name}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "worker"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    return proc, log


async def test_two_worker_processes_run_each_tick_once_and_survivor_takes_over(
    db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    procs = [_spawn(db_url, tmp_path, name) for name in ("w1", "w2")]
    ids = {f"{socket.gethostname()}:{p.pid}": p for p, _ in procs}
    try:

        async def both_started() -> bool:
            return all("worker.start" in log.read_text(errors="replace") for _, log in procs)

        await eventually(both_started, bool, within=30, every=0.2)
        baseline = len(await jobs_db.runs(db, "cleanup"))
        rows = await eventually(
            lambda: jobs_db.runs(db, "cleanup", 1000), lambda rs: len(rs) >= baseline + 4, within=30
        )
        workers = {r["worker"] for r in rows}
        assert len(workers) == 1, workers  # one leader ran every tick
        leader_id = workers.pop()
        assert leader_id in ids
        finished = sorted((r["started_at"], r["finished_at"]) for r in rows if r["finished_at"])
        assert all(prev[1] <= nxt[0] for prev, nxt in itertools.pairwise(finished))  # never overlap

        leader = ids[leader_id]
        (survivor_id,) = set(ids) - {leader_id}
        killed_at = time.monotonic()
        leader.send_signal(signal.SIGKILL)
        leader.wait(10)
        await eventually(
            lambda: jobs_db.runs(db, "cleanup", 1000),
            lambda rs: any(r["worker"] == survivor_id and r["status"] == "ok" for r in rs),
            within=40,
            every=0.2,
        )
        assert time.monotonic() - killed_at < 60
        survivor = ids[survivor_id]
        assert survivor.poll() is None
        survivor.send_signal(signal.SIGTERM)
        assert survivor.wait(15) == 0
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


async def test_stopping_the_worker_records_the_interrupted_run(
    db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db, tmp_path)
    _fast(ctx)

    async def slow(_: JobContext) -> dict:
        await asyncio.sleep(60)
        return {}

    worker = Worker(ctx, db_url, [Job("slow", slow, "every 1h", "slow")], worker_id="solo")
    task = asyncio.create_task(worker.run())
    try:
        await eventually(lambda: jobs_db.runs(db, "slow"), lambda rs: rs and rs[0]["status"] == "running")
    finally:
        worker.stop()
        await asyncio.wait_for(task, 15)
    (row,) = await jobs_db.runs(db, "slow")
    assert row["status"] == "failed" and "cancelled" in row["error"]
