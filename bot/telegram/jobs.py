"""Telegram's background jobs, registered with the worker by :data:`JOBS`:

* ``digest`` (``bot.telegram.digest``): yesterday's numbers, unanswered and 👎 questions and a chart, queued
  in the outbox for the admins' Telegram chats;
* ``outbox_drain``: sends pending ``outbox`` rows (digests, import reports) through the Telegram sender
  (``bot.telegram.outbox.drain``), which keeps Telegram's limits (≤ 25 msg/s overall, ≤ 1 msg/s per chat,
  429 → wait, 403 → user inactive) and lets only one process drain at a time (a lease row, renewed as it
  sends; ``WORKER_OUTBOX_LEASE_SECONDS`` is how long a dead drainer's claims hold before another takes over).
  Without ``TELEGRAM_BOT_TOKEN`` the job is unavailable: not scheduled, skipped by ``--once``.
"""

from __future__ import annotations

from bot.telegram import digest
from db.job_context import Counts, Job, JobContext, worker_identity


def unavailable(ctx: JobContext) -> str | None:
    if ctx.settings.telegram_bot_token is None:
        return "TELEGRAM_BOT_TOKEN is not set"
    return None


async def outbox_drain(ctx: JobContext) -> Counts:
    from bot.telegram.outbox import drain  # lazy: aiogram (seconds of models) only in a worker with a token
    from bot.telegram.session import build_bot  # lazy: aiogram, as above

    bot = build_bot(ctx.settings, ctx.pool)
    try:
        # One holder per process: a run that failed half-way (the database went away) leaves its lease behind,
        # and this process's next run picks it up at once instead of waiting for it to run out.
        lease = ctx.worker.worker_outbox_lease_seconds
        return {"sent": await drain(bot, ctx.pool, lease=lease, holder=worker_identity())}
    finally:
        await bot.session.close()


JOBS = [
    Job("digest", digest.run, "cron 0 7 * * *", "Daily digest of yesterday to the admins (outbox)"),
    Job(
        "outbox_drain",
        outbox_drain,
        "every 15s",
        "Send pending outbox rows through the Telegram sender",
        unavailable,
    ),
]
