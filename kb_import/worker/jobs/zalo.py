"""Zalo OA access-token refresh, ahead of expiry, when Zalo is configured (``ZALO_APP_ID`` and a token).

The refresh itself belongs to the Zalo channel (``WORKER_ZALO_REFRESH``, default
``bot.zalo.tokens:refresh_if_needed``): it refreshes under a row lock so two processes never spend the
single-use refresh token twice. Until that function exists, the job is unavailable (logged, not failed).
"""

from __future__ import annotations

from kb_import.worker import adapters
from kb_import.worker.context import Counts, JobContext, JobSkipped


def unavailable(ctx: JobContext) -> str | None:
    s = ctx.settings
    if not s.zalo_app_id or (s.zalo_oa_refresh_token is None and s.zalo_oa_access_token is None):
        return "Zalo is not configured (ZALO_APP_ID, ZALO_OA_REFRESH_TOKEN)"
    if adapters.zalo_refresh(ctx) is None:
        return f"the Zalo token refresh ({ctx.worker.worker_zalo_refresh}) is not installed"
    return None


async def run(ctx: JobContext) -> Counts:
    reason = unavailable(ctx)
    if reason:
        raise JobSkipped(reason)
    refresh = adapters.zalo_refresh(ctx)
    assert refresh is not None
    result = await adapters.call_with(refresh, adapters.standard_arguments(ctx))
    if isinstance(result, dict):
        return result
    return {"refreshed": bool(result)} if result is not None else {}
