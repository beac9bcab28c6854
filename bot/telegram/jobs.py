"""Telegram's background jobs, registered with the worker by :data:`JOBS`:

* ``digest`` (``bot.telegram.digest``): yesterday's numbers, unanswered and 👎 questions and a chart, queued
  in the outbox for the admins' Telegram chats;
* ``outbox_drain``: sends pending ``outbox`` rows (digests, import reports) through the Telegram sender
  (``bot.telegram.outbox.drain``), which keeps Telegram's limits (≤ 25 msg/s overall, ≤ 1 msg/s per chat,
  429 → wait, 403 → user inactive) and lets only one process drain at a time (a lease row, renewed as it
  sends; ``WORKER_OUTBOX_LEASE_SECONDS`` is how long a dead drainer's claims hold before another takes over).
  Without ``TELEGRAM_BOT_TOKEN`` the job is unavailable: not scheduled, skipped by ``--once``.
* ``handoff_reminder``: an open staff handoff (``bot.handoff``) nobody has answered for
  ``HANDOFF_REMIND_MINUTES`` gets one reminder in its topic, queued in the outbox (sent by ``outbox_drain``).
  Unavailable without ``STAFF_CHAT_ID`` or with the reminder off (0).
"""

from __future__ import annotations

import time

from bot import handoff as ho
from bot.telegram import digest
from db import handoffs, outbox
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


def no_handoff(ctx: JobContext) -> str | None:
    if ctx.settings.staff_chat_id is None or ctx.settings.telegram_bot_token is None:
        return "STAFF_CHAT_ID (or TELEGRAM_BOT_TOKEN) is not set"
    if ctx.settings.handoff_remind_minutes == 0:
        return "HANDOFF_REMIND_MINUTES is 0"
    return None


async def handoff_reminder(ctx: JobContext) -> Counts:
    minutes = ctx.settings.handoff_remind_minutes
    reminded = 0
    async with ctx.pool.acquire() as conn, conn.transaction():  # marked and queued together
        for waiting in await handoffs.claim_reminders(conn, minutes):
            waited = int((time.time() - waiting.opened_at.timestamp()) // 60)
            opened = waiting.opened_at.astimezone(ctx.worker.tz).strftime("%H:%M %d/%m")
            text = ho.reminder(waiting.user_id, waited, opened)
            payload = {"type": "text", "text": text, "message_thread_id": waiting.topic_id, "kind": "handoff"}
            await outbox.enqueue(conn, waiting.staff_chat_id, payload)
            reminded += 1
    return {"reminded": reminded}


JOBS = [
    Job("digest", digest.run, "cron 0 7 * * *", "Daily digest of yesterday to the admins (outbox)"),
    Job(
        "outbox_drain",
        outbox_drain,
        "every 15s",
        "Send pending outbox rows through the Telegram sender",
        unavailable,
    ),
    Job(
        "handoff_reminder",
        handoff_reminder,
        "every 5m",
        "Remind a staff topic whose handoff nobody has answered yet",
        no_handoff,
    ),
]
