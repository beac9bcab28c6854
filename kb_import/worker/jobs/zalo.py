"""Zalo OA access-token refresh, ahead of expiry, when Zalo is configured (``ZALO_APP_ID`` and a token).

The refresh belongs to the Zalo channel (``bot.zalo.tokens.refresh_if_needed``): it refreshes under a row
lock so two processes never spend the single-use refresh token twice.
"""

from __future__ import annotations

from kb_import.worker.context import Counts, JobContext, JobSkipped


def unavailable(ctx: JobContext) -> str | None:
    s = ctx.settings
    if not s.zalo_app_id or (s.zalo_oa_refresh_token is None and s.zalo_oa_access_token is None):
        return "Zalo is not configured (ZALO_APP_ID, ZALO_OA_REFRESH_TOKEN)"
    return None


async def run(ctx: JobContext) -> Counts:
    reason = unavailable(ctx)
    if reason:
        raise JobSkipped(reason)
    from bot.zalo.tokens import refresh_if_needed

    return dict(await refresh_if_needed(ctx.pool, ctx.settings))
