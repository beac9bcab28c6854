"""The background-job contract: how a job is declared (``Job``), what it receives (``JobContext``) and how it
declines to run (``JobSkipped``).

It lives in ``db`` (beside the settings and the ``job_runs`` repository, ``db.jobs``) so that every feature can
declare its own jobs without importing the worker application: storage (``db.housekeeping``), the KB
(``kb_import.jobs``), Telegram (``bot.telegram.jobs``) and Zalo (``bot.zalo.jobs``). The worker (``bot.worker``)
collects them, schedules them and records their runs; the composition root (``bot.wiring.job_context``) builds
the context, so a job gets the process's one embedder rather than building its own.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from db.settings import Settings
from db.worker_settings import WorkerSettings

log = logging.getLogger("medbot.worker")

Counts = dict[str, Any]


def worker_identity() -> str:
    """``host:pid`` of this process: stored with every job run, and the outbox drain's lease holder."""
    return f"{socket.gethostname()}:{os.getpid()}"


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
    # The process's embedder, from the composition root; called only by the jobs that embed, so a worker whose
    # embedding backend is misconfigured still runs every other job.
    embedder_factory: Callable[[], Any] | None = None

    def embedder(self) -> Any:
        """The configured embedder behind the database embedding cache (the process's one instance)."""
        if self.embedder_factory is None:
            raise RuntimeError("this job context was built without an embedder (bot.wiring.job_context)")
        return self.embedder_factory()


JobFunc = Callable[[JobContext], Awaitable[Counts | None]]


@dataclass(frozen=True, slots=True)
class Job:
    """A named job: its coroutine, its default schedule spec and a one-line description for ``--list``.

    ``available`` (optional) returns why the job cannot run in this deployment (e.g. Zalo not configured, the
    Telegram sender not installed), or None. The leader does not schedule an unavailable job (one log line
    instead of a skipped run every tick); ``--once`` of it is recorded as ``skipped`` with that reason, and
    the job itself is not called (``bot.worker.runner.run_job`` checks).
    """

    name: str
    func: JobFunc
    default_schedule: str
    description: str
    available: Callable[[JobContext], str | None] | None = None

    def unavailable_reason(self, ctx: JobContext) -> str | None:
        return self.available(ctx) if self.available is not None else None
