"""``medbot import``: the KB import from the command line, with a progress bar and a summary table.

Exit codes: 0 when the import did what was asked (applied, nothing to change, or a dry run — which says
in its first line when the real import would need ``--force``); 1 when the input was rejected, the import
would hide a large share of a role without ``--force``, or the import failed (the KB is unchanged in each
case); 2 for a usage error. The report is in Vietnamese (clinic staff read it, on the terminal and in the
watched folder's report files); every problem names file, sheet, row and column. The English message is in
the log.
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
    "validate": "Đọc và kiểm tra tệp",
    "lock": "Chờ lần nhập khác xong",
    "embed": "Tính vector tìm kiếm",
    "write": "Ghi vào kho kiến thức",
}
STATUS_LABELS = {
    "applied": "ĐÃ NHẬP",
    "unchanged": "KHÔNG CÓ THAY ĐỔI",
    "rejected": "BỊ TỪ CHỐI",
    "dry_run": "KIỂM TRA THỬ",
    "failed": "THẤT BẠI",
}
COUNT_COLUMNS = (  # RoleCounts field → column header
    ("added", "thêm"),
    ("updated", "cập nhật"),
    ("unchanged", "giữ nguyên"),
    ("reactivated", "khôi phục"),
    ("deactivated", "ẩn"),
    ("skipped", "bỏ qua"),
)


def render_report(report: ImportReport, console: Console) -> None:
    """The summary for clinic staff, in Vietnamese: status line, per-role counts, then problems and warnings
    with their locations (file, sheet, row, column). The English message goes to the log (``kb_import.job``)."""
    style = "green" if report.ok else "red"
    label = STATUS_LABELS.get(report.status, report.status.upper())
    console.print(f"[bold {style}]{label}[/] {escape(report.message_vi)}", highlight=False, soft_wrap=True)
    if report.needs_confirmation:
        console.print(
            "Nếu đúng là muốn ẩn các mục đó: chạy lại với --force. Nếu chỉ muốn thêm và cập nhật, không ẩn mục "
            "nào: dùng --keep-missing.",
            style="yellow",
            highlight=False,
        )
    if report.status == "applied" and not report.dry_run:
        undo = "; ".join(f"medbot kb undo {role}" for role in sorted(report.roles))
        console.print(
            f"Muốn hoàn tác: {undo} (hoặc /hoantac VAI_TRÒ trong Telegram)", style="dim", highlight=False
        )
    if report.import_id is not None:
        console.print(f"Lần nhập #{report.import_id}", style="dim")
    if report.roles:
        title = "Nhập kho kiến thức" + (" (kiểm tra thử, chưa ghi gì)" if report.dry_run else "")
        table = Table(title=title, title_justify="left")
        table.add_column("vai trò")
        for _, header in COUNT_COLUMNS:
            table.add_column(header, justify="right")
        table.add_column("phiên bản", justify="right")
        rows = (
            [*report.roles.items(), ("tổng", report.totals)]
            if len(report.roles) > 1
            else report.roles.items()
        )
        for role, c in rows:
            table.add_row(
                role,
                *(str(getattr(c, name)) for name, _ in COUNT_COLUMNS),
                "" if c.version is None else str(c.version),
            )
        console.print(table)
    files = ", ".join(f"{f.name} ({f.rows} dòng)" for f in report.files)
    console.print(
        f"Tệp: {files}; đã đọc {report.rows_seen} dòng: {report.rows_valid} hợp lệ, {report.rows_invalid} lỗi",
        highlight=False,
    )
    if report.embedding_model:
        console.print(
            f"Vector tìm kiếm ({report.embedding_model}): tính mới {report.embedded}, "
            f"lấy lại từ bộ nhớ đệm {report.embedding_cached}",
            highlight=False,
        )
    errors, warnings = report.errors, report.warnings
    for title, items, colour in (("Lỗi", errors, "red"), ("Cảnh báo", warnings, "yellow")):
        if not items:
            continue
        table = Table(title=f"{title} ({len(items)})", title_justify="left", title_style=colour)
        for col in ("tệp", "trang", "dòng", "cột", "mã lỗi", "nội dung"):
            table.add_column(col, overflow="fold")
        for p in items[:MAX_PROBLEMS_SHOWN]:
            column = (p.column or "") + (f" ({p.header})" if p.header else "")
            table.add_row(
                p.file, p.sheet or "", "" if p.row is None else str(p.row), column, p.code, p.message_vi
            )
        console.print(table)
        if len(items) > MAX_PROBLEMS_SHOWN:
            console.print(
                f"… và {len(items) - MAX_PROBLEMS_SHOWN} mục nữa (tất cả được lưu trong bảng kb_imports)",
                style=colour,
            )
    if report.timings:
        console.print("Thời gian (giây): " + ", ".join(f"{k} {v}" for k, v in report.timings.items()), style="dim")


async def run_cli(args: argparse.Namespace, settings: Settings) -> int:
    out = Console()
    err = Console(stderr=True)
    if args.template:
        path = write_template(Path(args.template))
        out.print(f"Đã tạo tệp mẫu: {path}")
        return 0
    if not args.files:
        err.print("medbot import: hãy chỉ ra một hoặc nhiều tệp .xlsx/.csv (hoặc --template TỆP_MẪU.xlsx)")
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
