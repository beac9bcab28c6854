"""The Zalo Official Account channel: webhook (``webhook``), OpenAPI client (``client``), OAuth v4 tokens
(``tokens``) and the channel logic shared by them (``bot``). Patients on Zalo are users of channel ``zalo``
served by the same ChatService as every other channel. Setup: docs/zalo.md.
"""

from __future__ import annotations

from db.settings import Settings

CHANNEL = "zalo"


def zalo_configured(settings: Settings) -> bool:
    """True when the webhook can verify events and the bot can answer (app id, OA secret key, a token)."""
    return bool(
        settings.zalo_app_id
        and settings.zalo_oa_secret is not None
        and (settings.zalo_oa_access_token is not None or settings.zalo_oa_refresh_token is not None)
    )
