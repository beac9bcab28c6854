"""Zalo's background job, registered with the worker by :data:`JOBS`: the OA access-token refresh, ahead of
expiry, when Zalo is configured (``ZALO_APP_ID`` and a token).

The refresh itself is ``bot.zalo.tokens.refresh_if_needed``: it refreshes under a row lock so two processes
never spend the single-use refresh token twice.
"""

from __future__ import annotations

from bot.zalo.tokens import refresh_if_needed
from db.job_context import Counts, Job, JobContext


def unavailable(ctx: JobContext) -> str | None:
    s = ctx.settings
    if not s.zalo_app_id or (s.zalo_oa_refresh_token is None and s.zalo_oa_access_token is None):
        return "Zalo is not configured (ZALO_APP_ID, ZALO_OA_REFRESH_TOKEN)"
    return None


async def token_refresh(ctx: JobContext) -> Counts:
    return dict(await refresh_if_needed(ctx.pool, ctx.settings))


JOBS = [
    Job(
        "zalo_token_refresh",
        token_refresh,
        "every 30m",
        "Refresh the Zalo OA access token (when configured)",
        unavailable,
    ),
]
