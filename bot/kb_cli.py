"""``medbot kb``: KB maintenance besides the import.

* ``medbot kb export OUT.xlsx [--role R]…``: the active entries (every role, or the roles given) as a
  workbook the import reads back unchanged (one sheet per role, the template's columns, KHẨN CẤP included).
* ``medbot kb reviewed ROLE``: the clinic's doctors have reviewed the role's entries; answers from them stop
  saying they are unreviewed sample material (``kb_import.review``).
* ``medbot kb undo ROLE``: undo the role's last import: its entries back exactly as they were before it, the
  entries it added removed (``kb_import.undo``); again, to step back one more import.

Output is Vietnamese like ``medbot import`` (clinic staff read it); role ids stay as typed in commands. Exit codes: 0 done, 1 nothing could be done (an unknown role, a role without entries, no
import to undo), 2 usage.
"""

from __future__ import annotations

import argparse
import getpass
import logging
import sys
from pathlib import Path

import asyncpg

from bot.runtime import open_runtime
from db import kb
from db.settings import Settings
from engine.roles import load_roles
from kb_import.export import export_kb
from kb_import.review import mark_role_reviewed
from kb_import.undo import undo_last_import, undoable

log = logging.getLogger("medbot.kb")


async def kb_command(args: argparse.Namespace, settings: Settings) -> int:
    runtime = await open_runtime(settings, pool_size=2)
    try:
        if args.kb_command == "export":
            return await _export(runtime.pool, Path(args.out), args.role or [])
        if args.kb_command == "undo":
            return await _undo(runtime.pool, args.role)
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
            f"medbot kb reviewed: không có vai trò “{name}”; các vai trò còn mục mẫu: {pending}", file=sys.stderr
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
