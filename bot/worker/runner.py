"""Run one job and record it in ``job_runs``: the single path used by the scheduler and ``--once``.

While a job runs, its worker holds a per-job advisory lock on a pooled connection. That lock keeps two runs
of the same job apart even outside the leader (an operator's ``--once`` beside the scheduler, or a leader that
lost its lock connection but has not noticed yet), and it tells a new leader that a ``running`` row left
behind by a dead process is abandoned: whoever holds the lock knows no one else is running the job.

A job that raises is recorded as ``failed`` with the error; nothing escapes to the caller except
cancellation (which is recorded first).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from db import jobs as jobs_db
from db.job_context import Counts, Job, JobContext, JobSkipped, worker_identity
from db.locks import lock_key, try_advisory_lock, unlock

log = logging.getLogger("medbot.worker")

LOCK_NAMESPACE = "worker-job"


@dataclass(slots=True)
class RunResult:
    """``status``: ok / failed / skipped (recorded), or busy (another run holds the job; nothing recorded)."""

    job: str
    status: str
    counts: Counts = field(default_factory=dict)
    error: str | None = None
    run_id: int | None = None
    seconds: float = 0.0


def _jsonable(counts: Any) -> Counts:
    if counts is None:
        return {}
    if not isinstance(counts, dict):
        counts = {"result": counts}
    return json.loads(json.dumps(counts, default=str))


def _error_text(exc: BaseException) -> str:
    tail = "".join(traceback.format_exception(exc)[-6:])
    return f"{type(exc).__name__}: {exc}\n{tail}"[:4000]


async def run_job(
    ctx: JobContext, job: Job, *, worker: str | None = None, time_limit: float | None = None
) -> RunResult:
    """Run ``job`` once now (if no other run of it is in progress) and record the run."""
    worker = worker or worker_identity()
    timeout = time_limit if time_limit is not None else ctx.worker.worker_job_timeout_seconds
    async with ctx.pool.acquire() as conn:
        if not await try_advisory_lock(conn, LOCK_NAMESPACE, job.name):
            log.info("job.busy job=%s (another run in progress)", job.name)
            return RunResult(job.name, "busy")
        try:
            reaped = await jobs_db.fail_abandoned(conn, job.name, "abandoned: the worker running it stopped")
            if reaped:
                log.warning("job.abandoned_runs job=%s count=%s", job.name, reaped)
            run_id = await jobs_db.start(conn, job.name, worker)
            started = time.monotonic()
            log.info("job.start job=%s run=%s manual=%s", job.name, run_id, ctx.manual)
            status, counts, error = "ok", {}, None
            try:
                reason = job.unavailable_reason(ctx)
                if reason:  # e.g. ``--once`` of a job this deployment cannot run: recorded as skipped
                    raise JobSkipped(reason)
                counts = _jsonable(await asyncio.wait_for(job.func(ctx), timeout))
            except JobSkipped as skip:
                status, counts = "skipped", _jsonable({**skip.counts, "reason": skip.reason})
            except asyncio.CancelledError:
                await jobs_db.finish(
                    conn, run_id, "failed", {}, "cancelled: the worker stopped during the run"
                )
                log.warning("job.cancelled job=%s run=%s", job.name, run_id)
                raise
            except TimeoutError as exc:
                status, error = "failed", f"timeout after {timeout:g}s" + (f": {exc}" if str(exc) else "")
            except Exception as exc:
                status, error = "failed", _error_text(exc)
            seconds = time.monotonic() - started
            await jobs_db.finish(conn, run_id, status, counts, error)
            if status == "failed":
                log.error(
                    "job.failed job=%s run=%s seconds=%.2f error=%s",
                    job.name,
                    run_id,
                    seconds,
                    (error or "").splitlines()[0],
                )
            else:
                log.info(
                    "job.%s job=%s run=%s seconds=%.2f counts=%s",
                    status,
                    job.name,
                    run_id,
                    seconds,
                    json.dumps(counts, ensure_ascii=False),
                )
            return RunResult(job.name, status, counts, error, run_id, seconds)
        finally:
            await unlock(conn, lock_key(LOCK_NAMESPACE, job.name))


def backoff_seconds(failures: int, base: float, cap: float) -> float:
    """Delay before retrying after ``failures`` consecutive failures: base, 2×base, 4×base … up to ``cap``."""
    if failures <= 0:
        return 0.0
    return float(min(cap, base * 2 ** min(failures - 1, 30)))
