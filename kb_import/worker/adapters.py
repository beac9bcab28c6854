"""The worker's call into the KB import job (``kb_import.job.run_import``, strict mode), reported as text."""

from __future__ import annotations

import io
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from kb_import.cli import render_report
from kb_import.job import ImportOptions, run_import
from kb_import.worker.context import JobContext

log = logging.getLogger("medbot.worker")
MAX_REASONS_VI = 15
MASS_HIDE_HOWTO_VI = (
    "Tệp trong thư mục nhập tự động không bao giờ được ẩn nhiều mục như vậy (có thể là tệp thiếu, gửi nhầm). "
    "Nếu đúng là muốn thay cả kho của vai trò bằng tệp này và ẩn các mục kia: chạy "
    "“medbot import {name} --force”, hoặc gửi tệp cho bot Telegram rồi bấm nút xác nhận ẩn. Nếu chỉ muốn "
    "thêm và cập nhật mà không ẩn mục nào: “medbot import {name} --keep-missing”, hoặc nút “Chỉ thêm và cập "
    "nhật” trong Telegram."
)


@dataclass(slots=True)
class ImportOutcome:
    """What the folder job needs from one import: accepted (imported, or an identical no-op) or rejected."""

    accepted: bool
    report: str
    counts: dict[str, Any] = field(default_factory=dict)


async def import_spreadsheet(ctx: JobContext, path: Path) -> ImportOutcome:
    """Import one spreadsheet in strict mode with the KB import job; the report as plain text. An import that
    would hide a large share of a role is refused (never ``force``), with the way to do it by hand."""
    report = await run_import(
        ctx.pool,
        [path],
        ImportOptions(requested_by="worker:folder_import"),
        embedder=ctx.embedder(),
    )
    console = Console(record=True, width=110, file=io.StringIO())
    render_report(report, console)
    counts = {"status": report.status, **asdict(report.totals)}
    body = console.export_text()
    if report.needs_confirmation:  # the folder never hides a large share: say why and how to do it by hand
        reasons = [report.message_vi, MASS_HIDE_HOWTO_VI.format(name=path.name)]
        body = "\n".join(reasons) + "\n\n" + body
    elif not report.ok:  # the admins who read the notice first get the reasons in Vietnamese
        reasons = [f"– {p.location_vi()}: {p.message_vi}" for p in report.errors[:MAX_REASONS_VI]]
        body = "\n".join([report.message_vi, *reasons]) + "\n\n" + body
    elif report.hides:  # what was hidden, first
        body = report.message_vi + "\n\n" + body
    return ImportOutcome(report.ok, body, counts)
