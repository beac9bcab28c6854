"""Helpers shared by the worker tests: a job context on the test database, polling with a deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

from bot.runtime import Runtime, job_context
from db.job_context import JobContext
from db.settings import load_settings
from db.worker_settings import load_worker_settings

T = TypeVar("T")


def make_ctx(pool: asyncpg.Pool, tmp_path: Path, *, manual: bool = False, **overrides: Any) -> JobContext:
    worker_keys = {k: v for k, v in overrides.items() if k.startswith("worker_")}
    app_keys = {k: v for k, v in overrides.items() if not k.startswith("worker_")}
    app = {
        "medbot_data_dir": tmp_path / "data",
        "kb_import_dir": tmp_path / "import",
        "admin_ids": [111],
        **app_keys,
    }
    settings = load_settings(**app)
    worker = load_worker_settings(**{"worker_import_settle_seconds": 0, **worker_keys})
    # As ``medbot worker`` builds it: through the composition root, on a runtime around the test's pool.
    return job_context(Runtime(settings=settings, url="", pool=pool), worker, manual=manual)


async def eventually(
    probe: Callable[[], Awaitable[T]], accept: Callable[[T], bool], *, within: float = 30, every: float = 0.1
) -> T:
    """Poll ``probe`` until ``accept`` holds; fail with the last value after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = await probe()
        if accept(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s; last value: {value!r}")
        await asyncio.sleep(every)
