"""Zalo OA OAuth v4 tokens: stored in ``channel_tokens`` (row ``zalo``), refreshed under a row lock.

* Seeding: on first start the row is created from ``ZALO_OA_ACCESS_TOKEN`` / ``ZALO_OA_REFRESH_TOKEN``
  (expiry unknown). Afterwards the database is the source of truth; the environment values are ignored, since
  Zalo's refresh token is single-use and the stored one is the only valid one.
* Refresh: ``POST {ZALO_OAUTH_BASE}/v4/oa/access_token`` with the form ``refresh_token``, ``app_id``,
  ``grant_type=refresh_token`` and the header ``secret_key: ZALO_APP_SECRET``; the answer carries a new
  access token, a new refresh token and ``expires_in`` (seconds, a string).
* No race: a refresh runs in one transaction holding ``SELECT ... FOR UPDATE`` on the row, around the call
  to Zalo. A second process (or task) waiting on the lock then sees the row already changed — the access token
  it found stale was replaced, or the expiry is far away again — and returns the stored token without
  calling Zalo, so the single-use refresh token is never spent twice.
* Database down: the last access token read is used (an emergency answer must still go out).
* Reactive refresh: the client calls :meth:`ZaloTokens.refresh` with the token Zalo rejected (-216).
  Proactive refresh: the worker job ``zalo_token_refresh`` calls :func:`refresh_if_needed` (every 30 minutes
  by default), which refreshes when the token expires within :data:`REFRESH_MARGIN` or its expiry is unknown.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from bot.zalo import CHANNEL
from db import channel_tokens
from db.channel_tokens import ChannelToken
from db.settings import Settings

log = logging.getLogger("medbot.zalo.tokens")

REFRESH_MARGIN = timedelta(hours=1)
TIMEOUT = httpx.Timeout(15.0, connect=5.0)


class ZaloAuthError(RuntimeError):
    """No usable Zalo token, or Zalo refused the refresh (the message says which and why)."""


@dataclass(slots=True)
class RefreshOutcome:
    access_token: str
    refreshed: bool  # True when this call spent the refresh token at Zalo
    expires_at: datetime | None


def _secret(value: Any) -> str | None:
    if value is None:
        return None
    text = value.get_secret_value() if hasattr(value, "get_secret_value") else str(value)
    return text or None


class ZaloTokens:
    """Reads and refreshes the OA access token; one instance per process (the state is in PostgreSQL)."""

    def __init__(self, pool: asyncpg.Pool, settings: Settings, http: httpx.AsyncClient | None = None) -> None:
        self.pool = pool
        self.settings = settings
        self._http = http
        self._own_http = http is None
        self._last_access: str | None = None  # the last token read, for when the database is unreachable

    async def close(self) -> None:
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=TIMEOUT)
        return self._http

    async def seed(self) -> bool:
        """Create the token row from the environment when there is none; True when this call created it."""
        access = _secret(self.settings.zalo_oa_access_token)
        refresh = _secret(self.settings.zalo_oa_refresh_token)
        if access is None and refresh is None:
            return False
        # With only a refresh token, store an empty access token: the first send gets -216 and refreshes.
        created = await channel_tokens.seed(self.pool, CHANNEL, access or "", refresh)
        if created:
            log.info("zalo.tokens.seeded from=environment refresh_token=%s", refresh is not None)
        return created

    async def current(self) -> ChannelToken:
        row = await channel_tokens.get(self.pool, CHANNEL)
        if row is None:
            await self.seed()
            row = await channel_tokens.get(self.pool, CHANNEL)
        if row is None:
            raise ZaloAuthError("no Zalo OA token: set ZALO_OA_ACCESS_TOKEN and ZALO_OA_REFRESH_TOKEN")
        return row

    async def access_token(self) -> str:
        """The stored access token; the last one read when the database cannot be reached (an emergency
        answer must still go out)."""
        try:
            token = (await self.current()).access_token
        except ZaloAuthError:
            raise
        except Exception as exc:
            if self._last_access is None:
                raise
            log.warning("zalo.tokens.database_unavailable using=last_read error=%r", exc)
            return self._last_access
        self._last_access = token
        return token

    async def refresh(self, stale: str | None = None, *, margin: timedelta | None = None) -> RefreshOutcome:
        """Refresh under the row lock, unless another process already did.

        ``stale``: the access token Zalo just rejected; nothing is refreshed when the stored one differs.
        ``margin``: refresh only when the stored token expires within it (or its expiry is unknown).
        With neither, the refresh is unconditional.
        """
        async with self.pool.acquire() as conn, conn.transaction():
            row = await channel_tokens.lock(conn, CHANNEL)
            if row is None:
                await self.seed()
                row = await channel_tokens.lock(conn, CHANNEL)
            if row is None:
                raise ZaloAuthError("no Zalo OA token: set ZALO_OA_ACCESS_TOKEN and ZALO_OA_REFRESH_TOKEN")
            if stale is not None and row.access_token != stale:
                log.info("zalo.tokens.refresh_skipped reason=already_refreshed")
                return RefreshOutcome(row.access_token, False, row.expires_at)
            if margin is not None and row.expires_at is not None:
                if row.expires_at - datetime.now(UTC) > margin:
                    return RefreshOutcome(row.access_token, False, row.expires_at)
            if not row.refresh_token:
                raise ZaloAuthError("the Zalo refresh token is missing: set ZALO_OA_REFRESH_TOKEN")
            access, refresh, expires_at = await self._call_zalo(row.refresh_token)
            await channel_tokens.store(conn, CHANNEL, access, refresh, expires_at)
        log.info("zalo.tokens.refreshed expires_at=%s", expires_at.isoformat() if expires_at else "?")
        return RefreshOutcome(access, True, expires_at)

    async def _call_zalo(self, refresh_token: str) -> tuple[str, str | None, datetime | None]:
        app_id = self.settings.zalo_app_id
        secret = _secret(self.settings.zalo_app_secret)
        if not app_id or secret is None:
            raise ZaloAuthError("cannot refresh the Zalo token: set ZALO_APP_ID and ZALO_APP_SECRET")
        url = self.settings.zalo_oauth_base.rstrip("/") + "/v4/oa/access_token"
        try:
            response = await self.http.post(
                url,
                data={"refresh_token": refresh_token, "app_id": app_id, "grant_type": "refresh_token"},
                headers={"secret_key": secret},
            )
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ZaloAuthError(f"Zalo token refresh failed: {type(exc).__name__}: {exc}") from exc
        if response.status_code != 200 or not isinstance(body, dict) or not body.get("access_token"):
            error = body.get("error") if isinstance(body, dict) else None
            reason = (
                (body.get("error_description") or body.get("error_name")) if isinstance(body, dict) else None
            )
            raise ZaloAuthError(
                f"Zalo refused the token refresh: http={response.status_code} error={error} {reason}"
            )
        expires_at = None
        try:
            expires_at = datetime.now(UTC) + timedelta(seconds=int(body.get("expires_in")))
        except (TypeError, ValueError):
            log.warning("zalo.tokens.no_expiry expires_in=%r", body.get("expires_in"))
        return str(body["access_token"]), body.get("refresh_token") or refresh_token, expires_at


async def refresh_if_needed(pool: asyncpg.Pool, settings: Settings) -> dict[str, Any]:
    """The worker's proactive refresh (job ``zalo_token_refresh``): refresh when expiring within an hour."""
    tokens = ZaloTokens(pool, settings)
    try:
        outcome = await tokens.refresh(margin=REFRESH_MARGIN)
    finally:
        await tokens.close()
    left = (outcome.expires_at - datetime.now(UTC)).total_seconds() / 60 if outcome.expires_at else None
    return {"refreshed": outcome.refreshed, "expires_in_min": round(left) if left is not None else None}
