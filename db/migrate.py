"""Apply or revert the alembic migrations programmatically (``medbot db upgrade``, start-up, tests)."""

from __future__ import annotations

import asyncio

from alembic.config import Config

from alembic import command
from db.settings import ROOT


def _config(url: str) -> Config:
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "alembic"))
    cfg.attributes["url"] = url
    return cfg


def upgrade_sync(url: str, revision: str = "head") -> None:
    command.upgrade(_config(url), revision)


def downgrade_sync(url: str, revision: str = "base") -> None:
    command.downgrade(_config(url), revision)


async def upgrade(url: str, revision: str = "head") -> None:
    """Migrate to ``revision``; runs alembic in a thread because its env drives its own event loop."""
    await asyncio.to_thread(upgrade_sync, url, revision)


async def downgrade(url: str, revision: str = "base") -> None:
    await asyncio.to_thread(downgrade_sync, url, revision)
