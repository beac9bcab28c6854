"""Storage's own background jobs: retention and clean-ups (registered with the worker by :data:`JOBS`).

* ``retention``: messages (and the traces stored on them) older than ``RETENTION_DAYS`` are deleted, then the
  conversations left empty, suggestion sets and article checks as old, users whose erasure a channel deferred,
  and last the digests' quotes of every message now gone (``db.digest.scrub_quotes``). The cut-off is
  ``now() - RETENTION_DAYS`` on the database clock; a message exactly at the cut-off is kept.
* ``cleanup``: expired suggestion sets, processed-update records older than ``WORKER_PROCESSED_UPDATES_DAYS``
  (7), job runs older than ``WORKER_JOB_RUNS_KEEP_DAYS`` (30), outbox rows no longer pending older than
  ``WORKER_OUTBOX_KEEP_DAYS`` (30) and digest charts as old; fair-use counters whose day is over
  (``db.rate_limits``); chat states nobody touched for 30 days (``db.chat_states``); expired console sessions,
  console audit rows older than ``CONSOLE_AUDIT_DAYS`` (365; 0 keeps them) and console uploads waiting more
  than :data:`UPLOADS_KEEP_SECONDS` (a day; the console itself refuses them after an hour).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from db import chat_states, digest, rate_limits, staff, suggestions, updates
from db import jobs as jobs_db
from db import retention as retention_db
from db.job_context import Counts, Job, JobContext

# A console upload (``Settings.console_uploads_dir``) left this long is removed: a day, well past the hour the
# console keeps it usable, so an import still applying one is never pulled from under it.
UPLOADS_KEEP_SECONDS = 86400.0


async def retention(ctx: JobContext) -> Counts:
    days = ctx.settings.retention_days
    before = await retention_db.cutoff(ctx.pool, days)
    messages = await retention_db.delete_messages_before(ctx.pool, before)
    conversations = await retention_db.delete_empty_conversations_before(ctx.pool, before)
    suggestion_sets = await retention_db.delete_suggestion_sets_before(ctx.pool, before)
    verification_sessions = await retention_db.delete_verification_sessions_before(ctx.pool, before)
    erased = await retention_db.complete_erasures(ctx.pool)
    quotes = await digest.scrub_quotes(ctx.pool)
    return {
        "retention_days": days,
        "cutoff": before.isoformat(),
        "messages": messages,
        "conversations": conversations,
        "suggestion_sets": suggestion_sets,
        "verification_sessions": verification_sessions,
        "users_erased": erased,
        "digests_scrubbed": quotes,
    }


async def cleanup(ctx: JobContext) -> Counts:
    w = ctx.worker
    counts: Counts = {
        "suggestion_sets": await suggestions.delete_expired(ctx.pool),
        "processed_updates": await updates.delete_older_than(ctx.pool, w.worker_processed_updates_days),
        "job_runs": await jobs_db.delete_older_than(ctx.pool, w.worker_job_runs_keep_days),
        "outbox": await retention_db.delete_outbox_done_older_than(ctx.pool, w.worker_outbox_keep_days),
        "rate_counters": await rate_limits.delete_stale(ctx.pool),
        "chat_states": await chat_states.delete_idle(ctx.pool),
        "staff_sessions": await staff.delete_expired_sessions(ctx.pool),
        "console_audit": await staff.delete_audit_older_than(ctx.pool, ctx.settings.console_audit_days),
        "console_uploads": _prune_uploads(ctx.settings.console_uploads_dir),
    }
    charts = 0
    folder = ctx.settings.digests_dir
    if folder.is_dir():
        limit = time.time() - w.worker_outbox_keep_days * 86400
        for png in folder.glob("*.png"):
            if png.stat().st_mtime < limit:
                png.unlink(missing_ok=True)
                charts += 1
    counts["digest_charts"] = charts
    return counts


def _prune_uploads(folder: Path) -> int:
    """Remove the console uploads (one folder each, a claimed one's too) untouched for UPLOADS_KEEP_SECONDS."""
    if not folder.is_dir():
        return 0
    limit = time.time() - UPLOADS_KEEP_SECONDS
    removed = 0
    for upload in folder.iterdir():
        try:
            if upload.lstat().st_mtime >= limit:
                continue
            if upload.is_dir() and not upload.is_symlink():
                shutil.rmtree(upload)
            else:
                upload.unlink()
        except OSError:
            continue
        removed += 1
    return removed


JOBS = [
    Job("retention", retention, "cron 30 2 * * *", "Delete messages and traces older than RETENTION_DAYS"),
    Job(
        "cleanup",
        cleanup,
        "every 1h",
        "Expired suggestion sets, console sessions and uploads, old processed updates, job runs, console audit",
    ),
]
