"""Outbox drain: hands pending ``outbox`` rows to the Telegram sender, which applies Telegram's limits
(≤ 25 msg/s overall, ≤ 1 msg/s per chat, 429 → wait, 403 → user inactive).

The sender is the Telegram issue's drain function (``WORKER_OUTBOX_DRAIN``, default
``bot.telegram.outbox:drain``), called with the arguments it declares among ``pool``, ``db``, ``settings``.
Without it, or without ``TELEGRAM_BOT_TOKEN``, the job is unavailable: not scheduled, skipped by ``--once``.
"""

from __future__ import annotations

from kb_import.worker import adapters
from kb_import.worker.context import Counts, JobContext, JobSkipped


def unavailable(ctx: JobContext) -> str | None:
    if ctx.settings.telegram_bot_token is None:
        return "TELEGRAM_BOT_TOKEN is not set"
    if adapters.outbox_drain(ctx) is None:
        return f"the Telegram outbox drain ({ctx.worker.worker_outbox_drain}) is not installed"
    return None


async def run(ctx: JobContext) -> Counts:
    reason = unavailable(ctx)
    if reason:
        raise JobSkipped(reason)
    drain = adapters.outbox_drain(ctx)
    assert drain is not None
    result = await adapters.call_with(drain, adapters.standard_arguments(ctx))
    if isinstance(result, dict):
        return result
    return {"sent": result} if result is not None else {}
