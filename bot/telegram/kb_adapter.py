"""The seam between the Telegram admin flow and the KB import job (``kb_import.job.run_import``).

An uploaded spreadsheet is written to a private temporary file (keeping its original name for the report)
and passed to the same job as ``medbot import``: validation with file/sheet/row/column in every problem
(and the entry's code, ``dòng 3 (mã NK-002)``, for a row's problem),
one transaction, embeddings through the cache, ``kb_imports`` history. The job's report is rendered here as
plain Vietnamese for the chat; its first line says what the import hid (or would hide), role by role. After
an applied import it lists the entries that may say the same thing (``kb_import.duplicates``), as a hint.

A dry run whose import would hide a large share of a role (``kb_import.limits.large_hide``) reports
``needs_confirmation``: the admin router then offers a separate confirmation (``force``) and "add and update
only" (``keep_missing``) instead of the plain "Nhập".
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from bot.telegram import texts
from engine import Embedder
from kb_import import duplicates
from kb_import.job import ImportOptions
from kb_import.job import ImportReport as JobReport
from kb_import.job import run_import as job_run_import
from kb_import.roles import role_label

Progress = Callable[[int, int], Awaitable[None]]
MAX_PROBLEMS_SHOWN = 15
CONSOLE_CHANGES_SHOWN = 5  # console changes listed per role; the rest as "… và N mục khác"
QUESTION_CHARS = 80
DUPLICATES_SHOWN = 3  # near-duplicate pairs named per role (the message stays under Telegram's 4096 chars)


@dataclass(slots=True)
class ImportReport:
    """What the admin is shown: ``ok`` says whether "Nhập" may be offered; ``text`` is plain Vietnamese."""

    ok: bool
    text: str
    counts: dict[str, int] = field(default_factory=dict)
    needs_confirmation: bool = False  # the import would hide a large share of a role: confirm separately
    hidden: int = 0  # entries the import hides (or would hide), all roles
    console_changes: int = 0  # console changes the import would undo (a dry run), all roles


def render(report: JobReport, *, dry: bool) -> ImportReport:
    t = report.totals
    lines = [report.message_vi]
    if report.rows_seen:
        lines.append(
            f"Tệp có {report.rows_seen} dòng: {report.rows_valid} dòng hợp lệ, {report.rows_invalid} dòng lỗi."
        )
    for role, c in sorted(report.roles.items()):
        lines.append(
            f"• {role}: thêm {c.added}, cập nhật {c.updated}, khôi phục {c.reactivated}, ẩn {c.deactivated}, "
            f"không đổi {c.unchanged}"
        )
    if not dry and report.ok and report.status == "applied":
        lines.append(f"✅ Đã nhập {t.added + t.updated + t.reactivated} mục vào kho kiến thức.")
    errors = report.errors
    if errors:
        lines.append(f"❌ {len(errors)} lỗi:")
        lines += [f"– {p.location_vi()}: {p.message_vi}" for p in errors[:MAX_PROBLEMS_SHOWN]]
        if len(errors) > MAX_PROBLEMS_SHOWN:
            lines.append(f"… và {len(errors) - MAX_PROBLEMS_SHOWN} lỗi khác (xem bằng lệnh medbot import).")
    for p in report.warnings[:5]:
        lines.append(f"⚠️ {p.location_vi()}: {p.message_vi}")
    lines += _console_lines(report, dry=dry)
    if report.duplicates:  # after an applied import: entries that may say the same thing, a hint
        lines += ["", *duplicates.lines_vi(report.duplicates, shown=DUPLICATES_SHOWN, chars=50)]
    hidden = sum(h.hidden for h in report.hides)
    if dry and report.ok and report.needs_confirmation:
        lines.append(texts.IMPORT_HIDE_EXPLAIN.format(n=hidden))
    elif not dry and report.needs_confirmation:  # the KB changed since the dry run
        lines.append(texts.IMPORT_HIDE_RESEND)
    if not dry and report.status == "applied":
        commands = ", ".join(f"/hoantac {role}" for role in sorted(report.roles))
        lines.append(texts.IMPORT_UNDO_HINT.format(commands=commands))
    counts = {"added": t.added, "updated": t.updated, "deactivated": t.deactivated, "errors": len(errors)}
    return ImportReport(ok=report.ok, text="\n".join(lines), counts=counts,
                        needs_confirmation=report.needs_confirmation, hidden=hidden,
                        console_changes=len(report.console_changes))  # fmt: skip


def _console_lines(report: JobReport, *, dry: bool) -> list[str]:
    """The console changes the import would undo (or undid, or left alone), role by role, the first few of
    each; last, on a dry run that offers it, how to keep them."""
    n = len(report.console_changes)
    if not n:
        return []
    if report.kept_console_edits:
        head = texts.IMPORT_CONSOLE_KEPT_HEAD
    else:
        head = texts.IMPORT_CONSOLE_HEAD if dry else texts.IMPORT_CONSOLE_DONE_HEAD
    lines = ["", head.format(n=n)]
    for role in sorted(report.roles):
        changes = report.console_changes_of(role)
        if not changes:
            continue
        lines.append(f"{role_label(role)}:")
        lines += [f"– {c.line_vi(question_chars=QUESTION_CHARS)}" for c in changes[:CONSOLE_CHANGES_SHOWN]]
        if len(changes) > CONSOLE_CHANGES_SHOWN:
            lines.append(texts.IMPORT_CONSOLE_MORE.format(n=len(changes) - CONSOLE_CHANGES_SHOWN))
    if dry and report.ok and not report.needs_confirmation and not report.kept_console_edits:
        lines.append(texts.IMPORT_CONSOLE_EXPLAIN)
    return lines


async def _run(
    pool: asyncpg.Pool,
    data: bytes,
    filename: str,
    options: ImportOptions,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> JobReport:
    safe_name = Path(filename).name or "upload.xlsx"
    latest: list[tuple[int, int]] = []
    wake = asyncio.Event()

    def on_progress(stage: str, done: int, total: int | None) -> None:
        # The job calls back synchronously; a single pump task forwards only the latest figure, in order.
        if stage in ("embed", "write") and total:
            latest[:] = [(done, total)]
            wake.set()

    async def pump() -> None:
        assert progress is not None
        while True:
            await wake.wait()
            wake.clear()
            if latest:
                await progress(*latest.pop())

    pump_task = asyncio.create_task(pump()) if progress is not None else None
    try:
        with tempfile.TemporaryDirectory(prefix="medbot-upload-") as tmp:
            path = Path(tmp) / safe_name
            path.write_bytes(data)
            return await job_run_import(
                pool, [(path, safe_name)], options, embedder=embedder, progress=on_progress
            )
    finally:
        if pump_task is not None:
            pump_task.cancel()
            await asyncio.gather(pump_task, return_exceptions=True)


async def dry_run(
    pool: asyncpg.Pool, data: bytes, filename: str, *, requested_by: str, default_role: str, roles: list[str]
) -> ImportReport:
    """Validate the file and report what an import would do; changes nothing in the KB."""
    options = ImportOptions(role=default_role, dry_run=True, requested_by=requested_by, known_roles=roles)
    return render(await _run(pool, data, filename, options), dry=True)


async def run_import(
    pool: asyncpg.Pool,
    data: bytes,
    filename: str,
    *,
    requested_by: str,
    default_role: str,
    roles: list[str],
    progress: Progress,
    embedder: Embedder,
    force: bool = False,
    keep_missing: bool = False,
    keep_console_edits: bool = False,
) -> ImportReport:
    """Import the file (all or nothing, strict), reporting progress as ``progress(done, total)``. ``force``:
    the admin confirmed hiding a large share of a role; ``keep_missing``: add and update only;
    ``keep_console_edits``: leave the entries changed in the clinic console as they are."""
    options = ImportOptions(role=default_role, requested_by=requested_by, known_roles=roles, force=force,
                            keep_missing=keep_missing, keep_console_edits=keep_console_edits)  # fmt: skip
    return render(await _run(pool, data, filename, options, progress, embedder), dry=False)
