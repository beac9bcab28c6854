"""``medbot import``: the KB import from the command line, with a progress bar and a summary table.

Exit codes: 0 when the import did what was asked (applied, nothing to change, or a dry run — which says
in its first line when the real import would need ``--force``); 1 when the input was rejected, the import
would hide a large share of a role without ``--force``, or the import failed (the KB is unchanged in each
case); 2 for a usage error. The report is in English (an admin tool) with its first line repeated in
Vietnamese for clinic staff; every problem names file, sheet, row and column.
"""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from db.settings import Settings
from kb_import.embedders import make_cached_embedder
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.template import write_template

MAX_PROBLEMS_SHOWN = 50
STAGE_LABELS = {
    "validate": "Reading and validating",
    "lock": "Waiting for other imports",
    "embed": "Embedding",
    "write": "Writing",
}


def render_report(report: ImportReport, console: Console) -> None:
    """The summary: status line, per-role counts, then problems and warnings with their locations."""
    style = "green" if report.ok else "red"
    console.print(f"[bold {style}]{report.status.upper()}[/] {escape(report.message)}", highlight=False, soft_wrap=True)
    console.print(report.message_vi, markup=False, highlight=False, soft_wrap=True)
    if report.needs_confirmation:
        console.print(
            "To import it anyway and hide those entries: run again with --force. To add and update without "
            "hiding anything: --keep-missing.\nNếu đúng là muốn ẩn các mục đó: chạy lại với --force. Nếu chỉ "
            "muốn thêm và cập nhật, không ẩn mục nào: dùng --keep-missing.",
            style="yellow",
            highlight=False,
        )
    if report.status == "applied" and not report.dry_run:
        undo = "; ".join(f"medbot kb undo {role}" for role in sorted(report.roles))
        console.print(f"undo / hoàn tác: {undo} (or /hoantac ROLE in Telegram)", style="dim", highlight=False)
    if report.import_id is not None:
        console.print(f"import #{report.import_id}", style="dim")
    if report.roles:
        table = Table(title="KB import" + (" (dry run)" if report.dry_run else ""), title_justify="left")
        table.add_column("role")
        for name in ("added", "updated", "unchanged", "restored", "deactivated", "skipped", "version"):
            table.add_column(name, justify="right")
        rows = (
            [*report.roles.items(), ("total", report.totals)]
            if len(report.roles) > 1
            else report.roles.items()
        )
        for role, c in rows:
            table.add_row(
                role,
                str(c.added),
                str(c.updated),
                str(c.unchanged),
                str(c.reactivated),
                str(c.deactivated),
                str(c.skipped),
                "" if c.version is None else str(c.version),
            )
        console.print(table)
    files = ", ".join(f"{f.name} ({f.rows} rows)" for f in report.files)
    console.print(
        f"files: {files}; rows read {report.rows_seen}, valid {report.rows_valid}, invalid {report.rows_invalid}",
        highlight=False,
    )
    if report.embedding_model:
        console.print(
            f"embeddings ({report.embedding_model}): {report.embedded} computed, {report.embedding_cached} from cache",
            highlight=False,
        )
    errors, warnings = report.errors, report.warnings
    for title, items, colour in (("Problems", errors, "red"), ("Warnings", warnings, "yellow")):
        if not items:
            continue
        table = Table(title=f"{title} ({len(items)})", title_justify="left", title_style=colour)
        for col in ("file", "sheet", "row", "column", "code", "message"):
            table.add_column(col, overflow="fold")
        for p in items[:MAX_PROBLEMS_SHOWN]:
            column = (p.column or "") + (f" ({p.header})" if p.header else "")
            table.add_row(
                p.file, p.sheet or "", "" if p.row is None else str(p.row), column, p.code, p.message
            )
        console.print(table)
        if len(items) > MAX_PROBLEMS_SHOWN:
            console.print(
                f"… and {len(items) - MAX_PROBLEMS_SHOWN} more (all stored in kb_imports)", style=colour
            )
    if report.timings:
        console.print("timings: " + ", ".join(f"{k} {v}" for k, v in report.timings.items()), style="dim")


async def run_cli(args: argparse.Namespace, settings: Settings) -> int:
    out = Console()
    err = Console(stderr=True)
    if args.template:
        path = write_template(Path(args.template))
        out.print(f"template written to {path}")
        return 0
    if not args.files:
        err.print("medbot import: give one or more .xlsx/.csv files (or --template OUT.xlsx)")
        return 2
    from bot.runtime import open_runtime

    runtime = await open_runtime(settings, pool_size=4)
    try:
        options = ImportOptions(
            role=args.role,
            dry_run=args.dry_run,
            skip_invalid=args.skip_invalid,
            allow_blank_question=getattr(args, "allow_blank_question", False),
            keep_missing=getattr(args, "keep_missing", False),
            force=getattr(args, "force", False),
            embed=not getattr(args, "no_embed", False),
            requested_by=f"cli:{getpass.getuser()}",
        )
        embedder = (
            None if (args.dry_run or not options.embed) else make_cached_embedder(settings, runtime.pool)
        )
        progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        )
        tasks: dict[str, Any] = {}

        def on_progress(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(STAGE_LABELS.get(stage, stage), total=total)
            progress.update(tasks[stage], completed=done, total=total)

        with progress:
            report = await run_import(
                runtime.pool, [Path(f) for f in args.files], options, embedder=embedder, progress=on_progress
            )
        render_report(report, out)
        return 0 if report.ok else 1
    finally:
        await runtime.close()
