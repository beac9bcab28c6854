"""What the console's pages work with, built once by the composition root (``bot.wiring.console_services``)
and handed to :func:`bot.web.console.console_app`: the pool and settings, the patients' ChatService ("try it"
answers through the very service patients use), the embedder (a KB edit is embedded as an import embeds it)
and the article-check service."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from bot.service import ChatService
from bot.verify_service import VerificationService
from db.settings import Settings
from engine.types import Embedder


@dataclass(frozen=True, slots=True)
class ConsoleServices:
    pool: asyncpg.Pool
    settings: Settings
    chat: ChatService
    embedder: Embedder
    verification: VerificationService
