"""The ``kb_imports`` audit table: one row per import attempt (applied, unchanged, rejected, dry run, failed)
and per undo of an import (status ``undo``, ``counts.undo_of`` the import undone).

``counts`` holds the totals, the per-role counts, the files (name, sha256, rows), the KB version of each
role after the import and the import's fingerprint (files + options), used to recognise an identical
re-import. ``errors`` holds the reported problems as dicts (file, sheet, row, column, code, messages).
"""

from __future__ import annotations

from typing import Any

from db.types import Executor

MAX_STORED_PROBLEMS = 2000

# undo: an import undone (db.kb_undo)
STATUSES = ("applied", "unchanged", "rejected", "dry_run", "failed", "undo")


async def record(
    db: Executor,
    *,
    filename: str,
    sha256: str,
    roles: list[str],
    requested_by: str | None,
    status: str,
    dry_run: bool,
    counts: dict[str, Any],
    errors: list[dict[str, Any]],
) -> int:
    """Insert one finished import record; returns its id."""
    assert status in STATUSES, status
    value = await db.fetchval(
        """
        INSERT INTO kb_imports (filename, sha256, roles, requested_by, status, dry_run, counts, errors,
                                finished_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp())
        RETURNING id
        """,
        filename,
        sha256,
        roles,
        requested_by,
        status,
        dry_run,
        counts,
        errors[:MAX_STORED_PROBLEMS],
    )
    return int(value)


async def update_counts(db: Executor, import_id: int, counts: dict[str, Any]) -> None:
    await db.execute(
        "UPDATE kb_imports SET counts = $2, finished_at = clock_timestamp() WHERE id = $1", import_id, counts
    )


async def last_applied(db: Executor, roles: list[str]) -> Any:
    """The latest import that applied (or confirmed) the KB of any of ``roles``."""
    return await db.fetchrow(
        """
        SELECT id, filename, sha256, roles, status, counts, created_at FROM kb_imports
        WHERE status IN ('applied', 'unchanged') AND NOT dry_run AND roles && $1::text[]
        ORDER BY id DESC LIMIT 1
        """,
        roles,
    )


async def get(db: Executor, import_id: int) -> Any:
    return await db.fetchrow("SELECT * FROM kb_imports WHERE id = $1", import_id)


async def recent(db: Executor, limit: int = 20) -> list[Any]:
    return list(
        await db.fetch(
            "SELECT id, filename, sha256, roles, requested_by, status, dry_run, counts, created_at, finished_at "
            "FROM kb_imports ORDER BY id DESC LIMIT $1",
            limit,
        )
    )
