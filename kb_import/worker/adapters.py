"""The worker's calls into parts of the bot built in other issues, each isolated in one small function.

* :func:`import_spreadsheet` — the KB import job (``kb_import.job.run_import``), strict mode.
* :func:`outbox_drain` — ``WORKER_OUTBOX_DRAIN`` (default ``bot.telegram.outbox:drain``), the Telegram sender.
* :func:`zalo_refresh` — ``WORKER_ZALO_REFRESH`` (default ``bot.zalo.tokens:refresh_if_needed``).

A function that is not there (module not merged yet) is reported as ``None`` by :func:`resolve`, and the job
skips with a log line instead of failing. Keyword arguments are matched by name against what a function
declares (``pool``, ``db``, ``settings``, …), so small signature differences need no code change here.
"""

from __future__ import annotations

import importlib
import inspect
import io
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kb_import.worker.context import JobContext

log = logging.getLogger("medbot.worker")

def resolve(target: str) -> Callable[..., Any] | None:
    """``"package.module:function"`` → the function, or None when the module or the name does not exist."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            return None
        raise  # the module exists but one of its own imports is missing: a real error
    fn = getattr(module, attr or "main", None)
    return fn if callable(fn) else None


async def call_with(fn: Callable[..., Any], available: dict[str, Any]) -> Any:
    """Call ``fn`` with the entries of ``available`` its signature names; await the result if needed."""
    params = inspect.signature(fn).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in available.items() if takes_any or k in params}
    missing = [
        name
        for name, p in params.items()
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        and name not in kwargs
    ]
    if missing:
        raise TypeError(f"{fn.__module__}.{fn.__qualname__} needs {missing}, which the worker cannot provide")
    result = fn(**kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


@dataclass(slots=True)
class ImportOutcome:
    """What the folder job needs from one import: accepted (imported, or an identical no-op) or rejected."""

    accepted: bool
    report: str
    counts: dict[str, Any] = field(default_factory=dict)


def import_available() -> str | None:
    """None: the import job is part of this build (kept for the job's availability check)."""
    return None


async def import_spreadsheet(ctx: JobContext, path: Path) -> ImportOutcome:
    """Import one spreadsheet in strict mode with the KB import job; the report as plain text."""
    from rich.console import Console

    from kb_import.cli import render_report
    from kb_import.job import ImportOptions, run_import

    report = await run_import(
        ctx.pool,
        [path],
        ImportOptions(requested_by="worker:folder_import"),
        embedder=ctx.embedder(),
    )
    console = Console(record=True, width=110, file=io.StringIO())
    render_report(report, console)
    counts = {"status": report.status, **asdict(report.totals)}
    return ImportOutcome(report.ok, console.export_text(), counts)


def outbox_drain(ctx: JobContext) -> Callable[..., Any] | None:
    return resolve(ctx.worker.worker_outbox_drain)


def zalo_refresh(ctx: JobContext) -> Callable[..., Any] | None:
    return resolve(ctx.worker.worker_zalo_refresh)


def standard_arguments(ctx: JobContext) -> dict[str, Any]:
    """What the worker can hand to another module's function."""
    return {"pool": ctx.pool, "db": ctx.pool, "settings": ctx.settings}
