"""The ``job_runs`` journal of the background worker: one row per run (running → ok / failed / skipped).

A run's row is inserted when it starts and completed when it ends, so a run cut short by a dead process
stays ``running`` until the next leader marks it ``failed`` (:func:`fail_abandoned`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from db.types import Executor

STATUSES = ("running", "ok", "failed", "skipped")


async def start(db: Executor, job: str, worker: str) -> int:
    """Record that ``job`` started in ``worker``; returns the run id."""
    return int(
        await db.fetchval("INSERT INTO job_runs (job, worker) VALUES ($1, $2) RETURNING id", job, worker)
    )


async def finish(
    db: Executor, run_id: int, status: str, counts: dict[str, Any] | None = None, error: str | None = None
) -> None:
    if status not in STATUSES:
        raise ValueError(f"unknown job status {status!r}")
    await db.execute(
        "UPDATE job_runs SET finished_at = clock_timestamp(), status = $2, counts = $3, error = $4 WHERE id = $1",
        run_id,
        status,
        counts or {},
        error,
    )


async def fail_abandoned(db: Executor, job: str, reason: str) -> int:
    """Mark ``job``'s still-``running`` rows as failed; call only while holding the job's advisory lock."""
    status = await db.execute(
        """
        UPDATE job_runs SET status = 'failed', finished_at = clock_timestamp(), error = $2
        WHERE job = $1 AND status = 'running'
        """,
        job,
        reason,
    )
    return int(status.split()[-1])


async def last_runs(db: Executor) -> dict[str, dict[str, Any]]:
    """The latest run of every job, with the time of its latest success and its failure streak."""
    rows = await db.fetch(
        """
        SELECT DISTINCT ON (r.job) r.job, r.started_at, r.finished_at, r.status, r.counts, r.error, r.worker,
               (SELECT max(started_at) FROM job_runs s WHERE s.job = r.job AND s.status = 'ok') AS last_ok_at
        FROM job_runs r ORDER BY r.job, r.started_at DESC, r.id DESC
        """
    )
    return {r["job"]: dict(r) for r in rows}


async def runs(db: Executor, job: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
    """Recent runs, newest first (optionally of one job)."""
    rows = await db.fetch(
        """
        SELECT id, job, started_at, finished_at, status, counts, error, worker FROM job_runs
        WHERE $1::text IS NULL OR job = $1 ORDER BY started_at DESC, id DESC LIMIT $2
        """,
        job,
        limit,
    )
    return [dict(r) for r in rows]


async def last_ok_with(db: Executor, job: str, key: str, value: str) -> datetime | None:
    """When ``job`` last succeeded with ``counts[key] == value`` (e.g. the digest of a given date)."""
    return await db.fetchval(
        """
        SELECT max(started_at) FROM job_runs
        WHERE job = $1 AND status = 'ok' AND counts ->> $2 = $3
        """,
        job,
        key,
        value,
    )


async def delete_older_than(db: Executor, days: int) -> int:
    status = await db.execute(
        "DELETE FROM job_runs WHERE started_at < now() - make_interval(days => $1) AND status <> 'running'",
        days,
    )
    return int(status.split()[-1])
