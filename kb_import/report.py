"""The KB import report for people: ``medbot import``, ``medbot setup`` and the watched-folder job (which writes
it beside the file and sends it to the admins) all print an :class:`~kb_import.job.ImportReport` through here.

The report is in Vietnamese (clinic staff read it, on the terminal and in the watched folder's report files);
every problem names file, sheet, row and column, and a problem of a data row the entry's code (MÃ SỐ), or
says the row has none. After an applied import, entries that may say the same thing are listed as a hint
(``kb_import.duplicates``). The English message is in the log.
"""

from __future__ import annotations

from collections.abc import Callable

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

from kb_import import duplicates
from kb_import.job import ImportReport
from kb_import.roles import role_label
from kb_import.validate import Problem

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


def progress_bars(
    console: Console, *, spinner: bool = False, transient: bool = False
) -> tuple[Progress, Callable[[str, int, int | None], None]]:
    """A progress display with one bar per import stage, and the callback ``run_import`` reports it through
    (``progress=``). Use the display as a context manager around the import."""
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    progress = Progress(
        *([SpinnerColumn()] if spinner else []), *columns, console=console, transient=transient
    )
    tasks: dict[str, int] = {}

    def on_progress(stage: str, done: int, total: int | None) -> None:
        if stage not in tasks:
            tasks[stage] = progress.add_task(STAGE_LABELS.get(stage, stage), total=total)
        progress.update(tasks[stage], completed=done, total=total)

    return progress, on_progress


def entry_cell(problem: Problem) -> str:
    """The "mã số" cell of a problem: the entry's code, "(không có)" for a data row without a readable code,
    blank for a problem not about one entry."""
    if problem.entry_code is None:
        return ""
    return problem.entry_code or "(không có)"


def _render_console_changes(report: ImportReport, console: Console) -> None:
    """The clinic console's changes the import would undo (or undid, or left alone), role by role."""
    if not report.console_changes:
        return
    n = len(report.console_changes)
    if report.kept_console_edits:
        title, colour = f"Giữ nguyên {n} mục đã thay đổi trên trang quản trị", "green"
    elif report.dry_run:
        title, colour = f"⚠️ Tệp này sẽ làm mất {n} thay đổi đã làm trên trang quản trị", "red"
    else:
        title, colour = f"Đã ghi đè hoặc ẩn {n} mục đã thay đổi trên trang quản trị", "yellow"
    console.print(f"[bold {colour}]{escape(title)}[/]", highlight=False)
    for role in sorted(report.roles):
        changes = report.console_changes_of(role)
        if changes:
            console.print(f"{escape(role_label(role))}:", highlight=False)
            for change in changes:
                console.print(f"  – {escape(change.line_vi())}", highlight=False, soft_wrap=True)


def _render_duplicates(report: ImportReport, console: Console) -> None:
    """After an applied import, the entries of each role it changed that may say the same thing: a hint."""
    for head, pairs, more in duplicates.role_blocks(report.duplicates):
        console.print(escape(head), style="bold yellow", highlight=False, soft_wrap=True)
        for line in pairs:
            console.print(f"  – {escape(line)}", highlight=False, soft_wrap=True)
        if more:
            console.print(f"  {more}", highlight=False)
    if report.duplicates:
        console.print(duplicates.CONSOLE_HINT_VI, style="dim", highlight=False)


def render_report(report: ImportReport, console: Console) -> None:
    """The summary for clinic staff, in Vietnamese: status line, per-role counts, then problems and warnings
    with their locations (file, sheet, row, the entry's code, column). The English message goes to the log (``kb_import.job``)."""
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
    _render_console_changes(report, console)
    _render_duplicates(report, console)
    errors, warnings = report.errors, report.warnings
    for title, items, colour in (("Lỗi", errors, "red"), ("Cảnh báo", warnings, "yellow")):
        if not items:
            continue
        table = Table(title=f"{title} ({len(items)})", title_justify="left", title_style=colour)
        for col in ("tệp", "trang", "dòng", "mã số", "cột", "mã lỗi", "nội dung"):
            table.add_column(col, overflow="fold")
        for p in items[:MAX_PROBLEMS_SHOWN]:
            column = (p.column or "") + (f" ({p.header})" if p.header else "")
            table.add_row(
                p.file,
                p.sheet or "",
                "" if p.row is None else str(p.row),
                entry_cell(p),
                column,
                p.code,
                p.message_vi,
            )
        console.print(table)
        if len(items) > MAX_PROBLEMS_SHOWN:
            console.print(
                f"… và {len(items) - MAX_PROBLEMS_SHOWN} mục nữa (tất cả được lưu trong bảng kb_imports)",
                style=colour,
            )
    if report.console_changes and report.dry_run and not report.kept_console_edits and report.ok:
        console.print(
            "Muốn nhập tệp nhưng giữ nguyên các mục đã thay đổi trên trang quản trị: chạy lại với "
            "--keep-console-edits.",
            style="yellow",
            highlight=False,
        )
    if report.timings:
        console.print(
            "Thời gian (giây): " + ", ".join(f"{k} {v}" for k, v in report.timings.items()), style="dim"
        )
