"""Housekeeping: expired suggestion sets, processed-update records older than
``WORKER_PROCESSED_UPDATES_DAYS`` (7), job runs older than ``WORKER_JOB_RUNS_KEEP_DAYS`` (30), outbox rows no
longer pending older than ``WORKER_OUTBOX_KEEP_DAYS`` (30) and digest charts as old; fair-use counters whose
day is over (``db.rate_limits``); chat states nobody touched for 30 days (``db.chat_states``).
"""

from __future__ import annotations

import time

from db import chat_states, rate_limits, suggestions, updates
from db import jobs as jobs_db
from db import retention as retention_db
from kb_import.worker.context import Counts, JobContext


async def run(ctx: JobContext) -> Counts:
    w = ctx.worker
    counts: Counts = {
        "suggestion_sets": await suggestions.delete_expired(ctx.pool),
        "processed_updates": await updates.delete_older_than(ctx.pool, w.worker_processed_updates_days),
        "job_runs": await jobs_db.delete_older_than(ctx.pool, w.worker_job_runs_keep_days),
        "outbox": await retention_db.delete_outbox_done_older_than(ctx.pool, w.worker_outbox_keep_days),
        "rate_counters": await rate_limits.delete_stale(ctx.pool),
        "chat_states": await chat_states.delete_idle(ctx.pool),
    }
    charts = 0
    folder = ctx.settings.medbot_data_dir / "digests"
    if folder.is_dir():
        limit = time.time() - w.worker_outbox_keep_days * 86400
        for png in folder.glob("*.png"):
            if png.stat().st_mtime < limit:
                png.unlink(missing_ok=True)
                charts += 1
    counts["digest_charts"] = charts
    return counts
