"""``medbot import`` and ``medbot kb``: the KB from the command line.

* ``medbot import FILE... [--role R] [--dry-run] …``: the KB import job (``kb_import.job``) with a progress
  bar and the report of ``kb_import.report``. Exit codes: 0 when the import did what was asked (applied,
  nothing to change, or a dry run — which says in its first line when the real import would need
  ``--force``); 1 when the input was rejected, the import would hide a large share of a role without
  ``--force``, or the import failed (the KB is unchanged in each case); 2 for a usage error.
* ``medbot kb export OUT.xlsx [--role R]…``: the active entries (every role, or the roles given) as a
  workbook the import reads back unchanged (one sheet per role, the template's columns, KHẨN CẤP included).
* ``medbot kb reviewed ROLE``: the clinic's doctors have reviewed the role's entries; answers from them stop
  saying they are unreviewed sample material (``kb_import.review``).
* ``medbot kb undo ROLE``: undo the role's last import: its entries back exactly as they were before it, the
  entries it added removed (``kb_import.undo``); again, to step back one more import.
* ``medbot kb calibrate ROLE``: re-estimate the role's answer calibration on its own KB now
  (``kb_import.calibrate``; imports and the worker do it by themselves) and say what was measured.

Output is Vietnamese (clinic staff read it; the import report is ``kb_import.report``'s); role ids stay as
typed in commands. ``medbot kb`` exit codes: 0 done, 1 nothing could be done (an unknown role, a role without
entries, no import to undo), 2 usage.
"""

from __future__ import annotations

import argparse
import getpass
import logging
import sys
from pathlib import Path

import asyncpg
from rich.console import Console

from bot.runtime import Runtime, embedder_for, open_runtime
from db import kb
from db.settings import Settings
from engine.retrieval import adaptation
from engine.retrieval.adaptation import RoleCalibration
from engine.roles import load_roles
from kb_import.export import export_kb
from kb_import.job import ImportOptions, run_import
from kb_import.report import progress_bars, render_report
from kb_import.review import mark_role_reviewed
from kb_import.template import write_template
from kb_import.undo import undo_last_import, undoable

log = logging.getLogger("medbot.kb")


async def import_command(args: argparse.Namespace, settings: Settings) -> int:
    """``medbot import``: see the module docstring for its exit codes."""
    out = Console()
    err = Console(stderr=True)
    if args.template:
        path = write_template(Path(args.template))
        out.print(f"Đã tạo tệp mẫu: {path}")
        return 0
    if not args.files:
        err.print("medbot import: hãy chỉ ra một hoặc nhiều tệp .xlsx/.csv (hoặc --template TỆP_MẪU.xlsx)")
        return 2
    async with await open_runtime(settings, pool_size=4) as runtime:
        options = ImportOptions(
            role=args.role,
            dry_run=args.dry_run,
            skip_invalid=args.skip_invalid,
            allow_blank_question=getattr(args, "allow_blank_question", False),
            keep_missing=getattr(args, "keep_missing", False),
            force=getattr(args, "force", False),
            keep_console_edits=getattr(args, "keep_console_edits", False),
            embed=not getattr(args, "no_embed", False),
            requested_by=f"cli:{getpass.getuser()}",
        )
        embedder = None if (args.dry_run or not options.embed) else embedder_for(runtime)
        progress, on_progress = progress_bars(err, spinner=True, transient=True)
        with progress:
            report = await run_import(
                runtime.pool, [Path(f) for f in args.files], options, embedder=embedder, progress=on_progress
            )
        render_report(report, out)
        return 0 if report.ok else 1


async def kb_command(args: argparse.Namespace, settings: Settings) -> int:
    runtime = await open_runtime(settings, pool_size=2)
    try:
        if args.kb_command == "export":
            return await _export(runtime.pool, Path(args.out), args.role or [])
        if args.kb_command == "undo":
            return await _undo(runtime.pool, args.role)
        if args.kb_command == "calibrate":
            return await _calibrate(runtime, args.role)
        return await _reviewed(runtime.pool, args.role)
    finally:
        await runtime.close()


async def _export(pool: asyncpg.Pool, out: Path, wanted: list[str]) -> int:
    present = await kb.roles(pool)
    roles = list(dict.fromkeys(wanted)) or present
    empty = [role for role in roles if role not in present]
    if empty or not roles:
        which = ", ".join(empty) or "mọi vai trò"
        print(f"medbot kb export: không có mục nào đang dùng cho vai trò: {which}", file=sys.stderr)
        return 1
    counts = await export_kb(pool, out, roles)
    listed = ", ".join(f"{role} {n}" for role, n in counts.items())
    print(f"Đã xuất {sum(counts.values())} mục ({listed}) ra tệp {out}")
    return 0


async def _reviewed(pool: asyncpg.Pool, name: str) -> int:
    result = await mark_role_reviewed(
        pool, name, requested_by=f"cli:{getpass.getuser()}", extra_roles=list(load_roles())
    )
    pending = ", ".join(f"{role} ({n})" for role, n in result.pending.items()) or "không còn"
    if result.role is None:
        print(
            f"medbot kb reviewed: không có vai trò “{name}”; các vai trò còn mục mẫu: {pending}",
            file=sys.stderr,
        )
        return 1
    if result.marked == 0:
        print(f"{result.role}: không có mục mẫu nào cần đánh dấu (các mục đã là của phòng khám)")
    else:
        print(
            f"{result.role}: đã đánh dấu {result.marked} mục là đã được bác sĩ phòng khám duyệt; câu trả lời "
            "từ các mục này không còn ghi là tài liệu mẫu chưa duyệt"
        )
    print(f"Các vai trò còn mục mẫu chưa duyệt: {pending}")
    return 0


async def _undo(pool: asyncpg.Pool, name: str) -> int:
    result = await undo_last_import(
        pool, name, requested_by=f"cli:{getpass.getuser()}", extra_roles=list(load_roles())
    )
    if not result.ok:
        log.info("kb_undo.refused role=%s %s", name, result.message)
        print(f"medbot kb undo: {result.message_vi}", file=sys.stderr)
        left = ", ".join(f"{u.role} (#{u.import_id})" for u in await undoable(pool)) or "không có"
        print(f"Các vai trò có lần nhập có thể hoàn tác: {left}", file=sys.stderr)
        return 1
    log.info("kb_undo.done role=%s %s", name, result.message)
    print(result.message_vi)
    print("Muốn làm lại: nhập lại đúng tệp đó.")
    return 0


MODE_VI = {"hybrid": "tìm kết hợp", "sparse": "chỉ tìm theo từ"}


def _pct(x: float) -> str:
    return f"{round(100 * x)}%"


def calibration_summary_vi(cal: RoleCalibration) -> list[str]:
    """What a re-estimation found, in Vietnamese for clinic staff."""
    entries, queries = cal.figures.get("entries", 0), cal.n_queries
    if cal.status == "global":
        if entries < adaptation.MIN_ENTRIES:
            why = f"kho chỉ có {entries} mục (cần ít nhất {adaptation.MIN_ENTRIES}), quá ít để tự kiểm tra tin cậy"
        elif queries < adaptation.MIN_QUERIES:
            why = f"chỉ tạo được {queries} câu tự kiểm tra (cần ít nhất {adaptation.MIN_QUERIES})"
        else:
            why = "chưa có dữ liệu tham chiếu để so sánh"
        return [f"{cal.role}: giữ mô hình chung để quyết định trả lời hay hỏi lại, vì {why}."]
    lines = [
        f"{cal.role}: đã ước lượng lại độ tin cậy trả lời trên chính kho kiến thức "
        f"({entries} mục, {queries} câu tự kiểm tra, {cal.figures.get('seconds', 0)} giây)."
    ]
    for mode, adj in cal.params.items():
        fig = cal.figures.get(mode, {})
        before, after = fig.get("global", {}), fig.get("adjusted", {})
        lines.append(
            f"  {MODE_VI.get(mode, mode)}: hệ số a={adj.a:.2f}, b={adj.b:+.2f}; trên câu tự kiểm tra: trả lời "
            f"{_pct(before.get('answered', 0))} → {_pct(after.get('answered', 0))}, trả lời nhầm khi kho không có "
            f"đáp án {_pct(before.get('false_answers', 0))} → {_pct(after.get('false_answers', 0))}."
        )
    return lines


async def _calibrate(runtime: Runtime, name: str) -> int:
    present = await kb.roles(runtime.pool)
    if name not in present:
        listed = ", ".join(present) or "không có"
        print(
            f"medbot kb calibrate: vai trò “{name}” không có mục nào đang dùng; các vai trò: {listed}",
            file=sys.stderr,
        )
        return 1
    from kb_import.calibrate import calibrate_role  # lazy: the search (scikit-learn) only for this command

    try:
        cal = await calibrate_role(runtime.pool, name, embedder_for(runtime))
    except Exception:
        log.exception("kb.calibration_failed role=%s", name)
        print(
            f"medbot kb calibrate: không ước lượng lại được cho {name}; bot vẫn dùng cách tính trước đó.",
            file=sys.stderr,
        )
        return 1
    for line in calibration_summary_vi(cal):
        print(line)
    return 0
