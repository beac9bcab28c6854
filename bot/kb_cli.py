"""``medbot kb``: KB maintenance besides the import.

* ``medbot kb export OUT.xlsx [--role R]…``: the active entries (every role, or the roles given) as a
  workbook the import reads back unchanged (one sheet per role, the template's columns, KHẨN CẤP included).
* ``medbot kb reviewed ROLE``: the clinic's doctors have reviewed the role's entries; answers from them stop
  saying they are unreviewed sample material (``kb_import.review``).
* ``medbot kb undo ROLE``: undo the role's last import: its entries back exactly as they were before it, the
  entries it added removed (``kb_import.undo``); again, to step back one more import.

Output is English like ``medbot import`` (an admin tool), with the Vietnamese line for clinic staff where an
import is involved. Exit codes: 0 done, 1 nothing could be done (an unknown role, a role without entries, no
import to undo), 2 usage.
"""

from __future__ import annotations

import argparse
import getpass
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
        print(f"medbot kb export: no active entries for role(s): {', '.join(empty) or 'any'}", file=sys.stderr)
        return 1
    counts = await export_kb(pool, out, roles)
    listed = ", ".join(f"{role} {n}" for role, n in counts.items())
    print(f"exported {sum(counts.values())} entries ({listed}) to {out}")
    return 0


async def _reviewed(pool: asyncpg.Pool, name: str) -> int:
    result = await mark_role_reviewed(
        pool, name, requested_by=f"cli:{getpass.getuser()}", extra_roles=list(load_roles())
    )
    pending = ", ".join(f"{role} ({n})" for role, n in result.pending.items()) or "none"
    if result.role is None:
        print(f"medbot kb reviewed: unknown role {name!r}; roles with sample entries: {pending}", file=sys.stderr)
        return 1
    if result.marked == 0:
        print(f"{result.role}: no sample entries to mark (its entries are already the clinic's own)")
    else:
        print(
            f"{result.role}: {result.marked} entries marked as reviewed by the clinic; "
            "answers from them no longer say they are unreviewed sample material"
        )
    print(f"roles still holding sample entries: {pending}")
    return 0


async def _undo(pool: asyncpg.Pool, name: str) -> int:
    result = await undo_last_import(
        pool, name, requested_by=f"cli:{getpass.getuser()}", extra_roles=list(load_roles())
    )
    if not result.ok:
        print(f"medbot kb undo: {result.message}", file=sys.stderr)
        print(result.message_vi, file=sys.stderr)
        left = ", ".join(f"{u.role} (#{u.import_id})" for u in await undoable(pool)) or "none"
        print(f"roles with an import to undo: {left}", file=sys.stderr)
        return 1
    print(result.message)
    print(result.message_vi)
    print("to redo it, import the same file again")
    return 0
