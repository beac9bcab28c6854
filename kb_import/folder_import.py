"""Watched-folder import: spreadsheets dropped in ``KB_IMPORT_DIR`` are imported with the KB import job in
strict mode (any invalid row → nothing written), then moved out of the way with their report:

* imported (or identical to what was imported, which the import job reports as a no-op) → ``done/``;
* rejected → ``rejected/``; the KB is unchanged. This includes a file that would hide a large share of a
  role's entries (``kb_import.limits.large_hide``: a partial file dropped by mistake): the folder never
  confirms that, and the report says why and how to import it by hand (``medbot import --force`` or the
  bot's confirmation button).

The report is written beside the moved file as ``<file name>.report.txt`` (e.g. ``kb.xlsx.report.txt``) and
sent to the admins through the outbox. A file name already taken in ``done/``/``rejected/`` gets a time stamp.

Only ``.xlsx``/``.xlsm``/``.csv`` files at the top of the folder are read; hidden files and Excel lock files
(``~$…``) are ignored, and so is a file modified in the last ``WORKER_IMPORT_SETTLE_SECONDS`` (still being
copied). The role comes from the file itself (sheet names or a ``role`` column), as for any import.

An unexpected error while importing (not a validation failure) leaves the file in place and fails the run,
so it is retried with backoff; after three such errors on the same content the file goes to ``rejected/``
with the error as its report.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from db import outbox, users
from db.job_context import Counts, JobContext
from engine.untrusted import file_sha256
from kb_import.job import ImportOptions, run_import
from kb_import.report import render_report

log = logging.getLogger("medbot.worker.folder_import")

SUFFIXES = (".xlsx", ".xlsm", ".csv")
MAX_ERRORS = 3
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


def unavailable(ctx: JobContext) -> str | None:
    return None


def candidates(folder: Path, settle_seconds: float) -> tuple[list[Path], int]:
    """Spreadsheets ready to import (oldest first), and how many are still settling."""
    ready: list[Path] = []
    settling = 0
    now = time.time()
    for path in folder.iterdir():
        if not path.is_file() or path.name.startswith((".", "~$")) or path.suffix.lower() not in SUFFIXES:
            continue
        if now - path.stat().st_mtime < settle_seconds:
            settling += 1
            continue
        ready.append(path)
    ready.sort(key=lambda p: (p.stat().st_mtime, p.name))
    return ready, settling


def free_name(folder: Path, name: str) -> Path:
    target = folder / name
    if not target.exists():
        return target
    stem, suffix = Path(name).stem, Path(name).suffix
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    for i in range(1000):
        target = folder / f"{stem}.{stamp}{f'-{i}' if i else ''}{suffix}"
        if not target.exists():
            return target
    raise RuntimeError(f"no free name for {name} in {folder}")


def report_text(path: Path, sha: str, accepted: bool, body: str, destination: Path) -> str:
    verdict = "ĐÃ NHẬP" if accepted else "BỊ TỪ CHỐI — kho kiến thức không thay đổi"
    return (
        f"Báo cáo nhập kho kiến thức: {path.name}\n"
        f"Thời gian: {datetime.now().astimezone():%d/%m/%Y %H:%M:%S %z}\n"
        f"SHA-256: {sha}\n"
        f"Kết quả: {verdict}\n"
        f"Tệp đã chuyển tới: {destination}\n"
        f"{'-' * 60}\n{body.strip()}\n"
    )


def move_with_report(path: Path, folder: Path, report: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = free_name(folder, path.name)
    path.replace(target)
    target.with_name(target.name + ".report.txt").write_text(report, encoding="utf-8")
    return target


async def _notify(ctx: JobContext, text: str) -> int:
    admins = await users.admin_chat_ids(ctx.pool, ctx.settings)
    if not admins:
        log.warning("folder_import.no_admins (set ADMIN_IDS)")
        return 0
    payload = {"type": "text", "text": outbox.fit(text), "kind": "kb_import_report"}
    async with ctx.pool.acquire() as conn, conn.transaction():
        return await outbox.enqueue_to_all(conn, admins, [payload])


async def _finish(
    ctx: JobContext, path: Path, sha: str, accepted: bool, body: str, hidden: int = 0
) -> dict[str, Any]:
    folder = ctx.settings.kb_import_dir / ("done" if accepted else "rejected")
    destination = free_name(folder, path.name)
    report = report_text(path, sha, accepted, body, destination)
    target = await asyncio.to_thread(move_with_report, path, folder, report)
    icon = "✅" if accepted else "❌"
    verdict = "đã nhập" if accepted else "bị từ chối, kho kiến thức không thay đổi"
    if accepted and hidden:  # what was hidden, in the notice's first line (the body says which role)
        verdict += f", đã ẩn {hidden} mục không có trong tệp"
    notice = (
        f"{icon} Nhập tự động từ thư mục: {path.name} — {verdict}.\n"
        f"Báo cáo đầy đủ: {target.name}.report.txt (thư mục {folder.name}/)\n\n{body.strip()}"
    )
    queued = await _notify(ctx, notice)
    log.info("folder_import.%s file=%s moved_to=%s", "done" if accepted else "rejected", path.name, target)
    return {"file": path.name, "to": str(target), "outbox_rows": queued}


async def run(ctx: JobContext) -> Counts:
    root = ctx.settings.kb_import_dir
    root.mkdir(parents=True, exist_ok=True)
    files, settling = candidates(root, ctx.worker.worker_import_settle_seconds)
    counts: Counts = {"found": len(files), "settling": settling, "imported": 0, "rejected": 0, "errors": 0}
    if not files:
        return counts
    errors: dict[str, int] = ctx.extras.setdefault("folder_import_errors", {})
    failed: list[str] = []
    for path in files:
        sha = await asyncio.to_thread(file_sha256, path)
        try:
            outcome = await import_spreadsheet(ctx, path)
        except Exception as exc:
            errors[sha] = errors.get(sha, 0) + 1
            counts["errors"] += 1
            log.exception("folder_import.error file=%s attempt=%s", path.name, errors[sha])
            if errors[sha] >= MAX_ERRORS:
                body = f"Lỗi khi nhập (sau {errors[sha]} lần thử): {type(exc).__name__}: {exc}"
                await _finish(ctx, path, sha, False, body)
                errors.pop(sha, None)
                counts["rejected"] += 1
            else:
                failed.append(f"{path.name}: {type(exc).__name__}: {exc}")
            continue
        errors.pop(sha, None)
        await _finish(
            ctx, path, sha, outcome.accepted, outcome.report, int(outcome.counts.get("deactivated", 0))
        )
        counts["imported" if outcome.accepted else "rejected"] += 1
    if failed:
        raise RuntimeError(
            f"import error(s), file(s) left in place for a retry: {'; '.join(failed)} "
            f"(counts so far: {counts})"
        )
    return counts
