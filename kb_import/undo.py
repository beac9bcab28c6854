"""Undoing the last import of a role (``medbot kb undo ROLE``, ``/hoantac ROLE`` in Telegram).

Every import keeps, in the same transaction as its write, a snapshot of each entry it changed or hid as it
was before (``db.kb_write``). Undoing puts the role's entries back exactly as they were before its latest
import that changed it and has not been undone yet — content, keywords, KHẨN CẤP and sample flags, hidden or
shown, the embedding and its model, even the timestamps — and deletes the entries that import created
(``db.kb_undo``). Entries of other roles, and entries of the role the import did not touch, stay as they are.
Undoing again steps back one more import. The undo takes the role's import lock (never interleaved with an
import), is recorded in ``kb_imports`` (status ``undo``) and bumps the role's KB version, so running bots
reload it. To redo, import the file again.

Used by the CLI and the Telegram admin command, which only render the result.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from db import imports as import_log
from db import kb, kb_undo, kb_write
from db.kb_undo import Undoable
from kb_import.roles import known_roles, resolve_role, role_label

log = logging.getLogger("medbot.kb_import")


@dataclass(slots=True)
class UndoResult:
    """``role`` is None when the name matches no known role; ``undone`` is None when there was nothing to
    undo. ``message``/``message_vi`` say what happened either way."""

    role: str | None
    undone: Undoable | None = None
    restored: int = 0  # entries put back as they were before the import
    removed: int = 0  # entries the import had created, deleted
    undo_id: int | None = None  # the kb_imports record of this undo
    version: int | None = None
    message: str = ""
    message_vi: str = ""

    @property
    def ok(self) -> bool:
        return self.undone is not None


def describe(item: Undoable) -> tuple[str, str]:
    """An import as the undo names it: number, file, time, who."""
    when = item.created_at.astimezone().strftime("%d/%m/%Y %H:%M")
    who = f", {item.requested_by}" if item.requested_by else ""
    return (f"import #{item.import_id} ({item.filename}, {when}{who})",
            f"lần nhập #{item.import_id} (tệp {item.filename}, lúc {when}{who})")  # fmt: skip


async def undo_last_import(
    pool: asyncpg.Pool, name: str, *, requested_by: str, extra_roles: Sequence[str] = ()
) -> UndoResult:
    """Undo the latest not-yet-undone import of the role named ``name`` (id or Vietnamese label)."""
    known = known_roles([*await kb_write.existing_roles(pool), *extra_roles])
    role = resolve_role(name.strip(), known)
    if role is None:
        return UndoResult(
            None,
            message=f"unknown role {name!r}",
            message_vi=f"Không tìm thấy vai trò “{name}”; kho kiến thức không thay đổi.",
        )
    async with kb_write.role_locks(pool, [role]) as conn:
        target = await kb_undo.last_undoable(conn, role)
        if target is None:
            return UndoResult(
                role,
                message=f"{role}: no import to undo (imports made before undo existed cannot be undone)",
                message_vi=f"Vai trò {role_label(role)} không có lần nhập nào để hoàn tác; kho kiến thức không "
                "thay đổi.",
            )
        async with conn.transaction():
            undo_id = await import_log.record(
                conn,
                filename=target.filename,
                sha256=target.sha256,
                roles=[role],
                requested_by=requested_by,
                status="undo",
                dry_run=False,
                counts={"undo_of": target.import_id},
                errors=[],
            )
            restored, removed = await kb_undo.restore(
                conn, import_id=target.import_id, role=role, undo_id=undo_id
            )
            version = await kb.bump_version(conn, role)
            counts = {"undo_of": target.import_id, "restored": restored, "removed": removed,
                      "versions": {role: version}}  # fmt: skip
            await import_log.update_counts(conn, undo_id, counts)
    what, what_vi = describe(target)
    result = UndoResult(role, target, restored, removed, undo_id, version)
    result.message = (
        f"undid {what} for {role}: {restored} entries restored exactly as they were before it, "
        f"{removed} entries it had added removed"
    )
    result.message_vi = (
        f"Đã hoàn tác {what_vi} cho vai trò {role_label(role)}: {restored} mục trở lại đúng như trước lần nhập "
        f"đó, {removed} mục do lần nhập đó thêm vào đã được gỡ bỏ."
    )
    log.info("kb_import.undone import=%s role=%s restored=%d removed=%d by=%s undo=%s",
             target.import_id, role, restored, removed, requested_by, undo_id)  # fmt: skip
    return result


async def undoable(pool: asyncpg.Pool) -> list[Undoable]:
    """Per role, the import an undo would revert now."""
    return await kb_undo.undoable_roles(pool)
