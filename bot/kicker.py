"""Run an outbox drain now, in the background of the web process, instead of waiting for the worker's next run:
a kick during a drain runs one more drain after it (so a row queued meanwhile is not left for the worker), and a
failed drain is only logged (the worker's job sends what is left later)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger("medbot.outbox")


class DrainKicker:
    """Call the instance to kick; ``stop`` cancels a drain in progress (at shutdown)."""

    def __init__(self, drain: Callable[[], Awaitable[object]], name: str) -> None:
        self._drain = drain
        self._name = name  # for the log: which outbox failed to drain
        self._wanted = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __call__(self) -> None:
        self._wanted.set()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._wanted.is_set():
            self._wanted.clear()
            try:
                await self._drain()
            except Exception:  # the worker's job sends it later
                log.exception("%s.drain_failed", self._name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
