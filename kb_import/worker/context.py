"""What a job receives (``JobContext``) and how a job is declared (``Job``) or declines to run (``JobSkipped``)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from db.settings import Settings
from kb_import.embedders import make_cached_embedder
from kb_import.worker.config import WorkerSettings

log = logging.getLogger("medbot.worker")

Counts = dict[str, Any]


class JobSkipped(Exception):
    """Raised by a job that had nothing it could do (e.g. a channel not configured); recorded as ``skipped``."""

    def __init__(self, reason: str, counts: Counts | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.counts = dict(counts or {})


@dataclass
class JobContext:
    pool: asyncpg.Pool
    settings: Settings
    worker: WorkerSettings
    manual: bool = False  # run by an operator (``--once``), not by the schedule
    extras: dict[str, Any] = field(default_factory=dict)

    def embedder(self) -> Any:
        """The configured embedder behind the database embedding cache (built once per process)."""
        if "embedder" not in self.extras:
            self.extras["embedder"] = make_cached_embedder(self.settings, self.pool)
        return self.extras["embedder"]


JobFunc = Callable[[JobContext], Awaitable[Counts | None]]


@dataclass(frozen=True, slots=True)
class Job:
    """A named job: its coroutine, its default schedule spec and a one-line description for ``--list``.

    ``available`` (optional) returns why the job cannot run in this deployment (e.g. Zalo not configured, the
    Telegram sender not installed), or None. The leader does not schedule an unavailable job (one log line
    instead of a skipped run every tick); ``--once`` still runs it, recorded as ``skipped``.
    """

    name: str
    func: JobFunc
    default_schedule: str
    description: str
    available: Callable[[JobContext], str | None] | None = None

    def unavailable_reason(self, ctx: JobContext) -> str | None:
        return self.available(ctx) if self.available is not None else None
