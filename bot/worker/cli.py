"""``medbot worker``: run the scheduler (leader-elected), ``--once JOB`` to run one job now, ``--list``.

Exit codes: 0 success (``--once``: ok or skipped), 1 the job failed, 2 bad usage (unknown job, bad
setting), 3 the job was already running elsewhere.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from bot.runtime import job_context, open_runtime
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from bot.worker.scheduler import Worker, effective_schedules
from db import embedding_models
from db import jobs as jobs_db
from db.job_context import Job, JobContext
from db.settings import Settings, SettingsError
from db.worker_settings import WorkerSettings, load_worker_settings

log = logging.getLogger("medbot.worker")


async def worker_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        wsettings = load_worker_settings()
    except SettingsError as exc:
        print(f"medbot: {exc}", file=sys.stderr)
        return 2
    jobs = default_jobs()
    names = [j.name for j in jobs]
    if args.once and args.once not in names:
        print(f"medbot: unknown job {args.once!r}; jobs: {', '.join(names)}", file=sys.stderr)
        return 2

    async with await open_runtime(settings, migrate_schema=wsettings.worker_migrate, pool_size=6) as runtime:
        ctx = job_context(runtime, wsettings, manual=bool(args.once))
        if args.list:
            print(await render_list(ctx, jobs))
            return 0
        if args.once:
            return await run_once(ctx, next(j for j in jobs if j.name == args.once))
        return await serve(ctx, runtime.url, jobs)


async def run_once(ctx: JobContext, job: Job) -> int:
    result = await run_job(ctx, job)
    if result.status == "busy":
        print(f"{job.name}: already running in another process; nothing done", file=sys.stderr)
        return 3
    print(f"{job.name}: {result.status} in {result.seconds:.2f}s (run {result.run_id})")
    if result.counts:
        print(json.dumps(result.counts, ensure_ascii=False, indent=2))
    if result.error:
        print(result.error, file=sys.stderr)
    return 1 if result.status == "failed" else 0


async def serve(ctx: JobContext, url: str, jobs: list[Job]) -> int:
    worker = Worker(ctx, url, jobs)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, worker.stop)
    await worker.run()
    return 0


def _fmt_time(value: datetime | None, tz: Any) -> str:
    return value.astimezone(tz).strftime("%Y-%m-%d %H:%M:%S") if value else "—"


def _short(counts: dict[str, Any], limit: int = 60) -> str:
    text = ", ".join(f"{k}={v}" for k, v in counts.items() if k not in ("chart", "cutoff"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def list_rows(ctx: JobContext, jobs: list[Job]) -> list[dict[str, Any]]:
    """One row per job: schedule, availability and its last run (what ``--list`` prints)."""
    schedules = effective_schedules(jobs, ctx.worker)
    last = await jobs_db.last_runs(ctx.pool)
    rows = []
    for job in jobs:
        info = last.get(job.name) or {}
        started, finished = info.get("started_at"), info.get("finished_at")
        rows.append(
            {
                "job": job.name,
                "schedule": schedules[job.name].describe(),
                "available": job.unavailable_reason(ctx) or "yes",
                "last_start": started,
                "last_status": info.get("status", "never"),
                "seconds": (finished - started).total_seconds() if started and finished else None,
                "last_ok": info.get("last_ok_at"),
                "counts": info.get("counts") or {},
                "error": ((info.get("error") or "").splitlines() or [""])[0],
                "worker": info.get("worker") or "",
                "description": job.description,
            }
        )
    return rows


async def render_list(ctx: JobContext, jobs: list[Job]) -> str:
    tz = ctx.worker.tz
    table = Table(title=f"medbot worker jobs (times in {ctx.worker.worker_timezone})", show_lines=False)
    for column in ("job", "schedule", "last run", "status", "took", "last ok", "counts / error", "available"):
        table.add_column(column, overflow="fold")
    for row in await list_rows(ctx, jobs):
        detail = row["error"] or _short(row["counts"])
        table.add_row(
            row["job"],
            row["schedule"],
            _fmt_time(row["last_start"], tz),
            row["last_status"],
            f"{row['seconds']:.1f}s" if row["seconds"] is not None else "—",
            _fmt_time(row["last_ok"], tz),
            detail,
            row["available"],
        )
    console = Console(width=160, record=True, file=_Null())
    console.print(table)
    return console.export_text() + "\n".join(await embedding_lines(ctx)) + "\n"


async def embedding_lines(ctx: JobContext) -> list[str]:
    """The embedding model this deployment runs and how far the stored vectors are from it: the roles still
    waiting for vectors of the model are answered by the sparse leg alone until the backfill job is done."""
    try:
        model = await ctx.embedder().open()
    except Exception as exc:
        return [f"embedding model: unavailable ({exc}); search uses the sparse leg alone"]
    lines = [f"embedding model: {model} (EMBEDDING_BACKEND={ctx.settings.embedding_backend})"]
    for count in await embedding_models.vector_models(ctx.pool):
        if count.model == model:
            what = "of this model"
        elif count.model is None:
            what = "without a vector"
        else:
            what = f"of another model ({count.model}): to be re-embedded"
        lines.append(f"  {count.table}: {count.rows} {what}")
    waiting = await embedding_models.roles_pending(ctx.pool, model)
    if waiting:
        lines.append(
            "  re-embedding in the background (embedding_backfill); these roles are answered by the sparse "
            "leg alone until done: "
            + ", ".join(f"{role} {have}/{total}" for role, (have, total) in waiting.items())
        )
    else:
        lines.append("  every active KB entry has a vector of this model: hybrid search")
    return lines


class _Null:
    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        pass


__all__ = ["WorkerSettings", "list_rows", "render_list", "run_once", "serve", "worker_command"]
