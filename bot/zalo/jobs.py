"""Zalo's background jobs, registered with the worker by :data:`JOBS`, when Zalo is configured (``ZALO_APP_ID``
and a token): the OA access-token refresh, ahead of expiry; and ``zalo_outbox``, which sends the Zalo outbox
rows a web process could not send at once (the staff handoff's messages, ``bot.zalo.outbox``).

The refresh itself is ``bot.zalo.tokens.refresh_if_needed``: it refreshes under a row lock so two processes
never spend the single-use refresh token twice.
"""

from __future__ import annotations

from bot.zalo import outbox
from bot.zalo.client import ZaloClient
from bot.zalo.tokens import ZaloTokens, refresh_if_needed
from db.job_context import Counts, Job, JobContext, worker_identity


def unavailable(ctx: JobContext) -> str | None:
    s = ctx.settings
    if not s.zalo_app_id or (s.zalo_oa_refresh_token is None and s.zalo_oa_access_token is None):
        return "Zalo is not configured (ZALO_APP_ID, ZALO_OA_REFRESH_TOKEN)"
    return None


async def token_refresh(ctx: JobContext) -> Counts:
    return dict(await refresh_if_needed(ctx.pool, ctx.settings))


async def outbox_drain(ctx: JobContext) -> Counts:
    tokens = ZaloTokens(ctx.pool, ctx.settings)
    client = ZaloClient(tokens, ctx.settings.zalo_api_base)
    try:
        return {"sent": await outbox.drain(client, ctx.pool, holder=worker_identity())}
    finally:
        await client.close()
        await tokens.close()


JOBS = [
    Job(
        "zalo_token_refresh",
        token_refresh,
        "every 30m",
        "Refresh the Zalo OA access token (when configured)",
        unavailable,
    ),
    Job(
        "zalo_outbox", outbox_drain, "every 30s", "Send pending Zalo outbox rows (staff handoff)", unavailable
    ),
]
