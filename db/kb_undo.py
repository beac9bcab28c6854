"""Undoing a KB import for one role: the snapshots ``db.kb_write.write_entries`` took, put back.

``kb_import_snapshots`` (migration 0012) holds, per import, role and code, the entry as it was just before the
import (the whole row as jsonb) or NULL when the import created it. Undoing import N for role R, in one
transaction: the entries N created are deleted, the ones it changed or hid are given back their snapshot's
columns (``jsonb_populate_record``: every column, the embedding and its model, the flags, ``active`` and the
timestamps, exactly as they were), and N's snapshots of R are marked ``undone_by`` the undo's own
``kb_imports`` record. Restored entries are updated in place, never deleted and inserted again: rows that
refer to an entry (its console history, ``kb_entry_history``, deleted with the entry) stay. The import that can be undone for a role is its latest one with snapshots not yet
undone, so undoing again steps back one import further.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from db.types import Executor


@dataclass(slots=True, frozen=True)
class Undoable:
    """An import whose changes to ``role`` can be undone."""

    import_id: int
    role: str
    filename: str
    sha256: str
    requested_by: str | None
    created_at: datetime
    changed: int  # entries of the role it wrote or hid (snapshots)
    created: int  # of which it created (undo deletes them)


def _undoable(row: Any) -> Undoable:
    return Undoable(
        import_id=int(row["import_id"]),
        role=row["role"],
        filename=row["filename"],
        sha256=row["sha256"],
        requested_by=row["requested_by"],
        created_at=row["created_at"],
        changed=int(row["changed"]),
        created=int(row["created"]),
    )


_LATEST = """
    SELECT DISTINCT ON (s.role) s.role, s.import_id, i.filename, i.sha256, i.requested_by, i.created_at,
           count(*) OVER w AS changed, count(*) FILTER (WHERE s.entry IS NULL) OVER w AS created
    FROM kb_import_snapshots s JOIN kb_imports i ON i.id = s.import_id
    WHERE s.undone_by IS NULL {where}
    WINDOW w AS (PARTITION BY s.role, s.import_id)
    ORDER BY s.role, s.import_id DESC
"""


async def last_undoable(db: Executor, role: str) -> Undoable | None:
    """The latest import of ``role`` that changed it and has not been undone."""
    row = await db.fetchrow(_LATEST.format(where="AND s.role = $1"), role)
    return None if row is None else _undoable(row)


async def undoable_roles(db: Executor) -> list[Undoable]:
    """Per role, the import an undo would revert (roles with none are absent), by role."""
    return [_undoable(r) for r in await db.fetch(_LATEST.format(where=""))]


async def restore(conn: asyncpg.Connection, *, import_id: int, role: str, undo_id: int) -> tuple[int, int]:
    """Put ``role``'s entries back as they were before import ``import_id``. Call inside a transaction,
    holding the role's import lock. Returns (entries restored, entries deleted because the import created
    them)."""
    await conn.execute("CREATE TEMP TABLE kb_undo_rows (LIKE kb_entries) ON COMMIT DROP")
    columns = [
        r["attname"]
        for r in await conn.fetch(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'kb_entries'::regclass AND attnum > 0 "
            "AND NOT attisdropped AND attname <> 'id' ORDER BY attnum"
        )
    ]
    names = ", ".join(f'"{c}"' for c in columns)
    # The current row is the base, so a column added after the snapshot was taken keeps its value.
    restored = await conn.execute(
        """
        INSERT INTO kb_undo_rows
        SELECT r.* FROM kb_import_snapshots s
        LEFT JOIN kb_entries e ON e.role = s.role AND e.code = s.code
        CROSS JOIN LATERAL jsonb_populate_record(e, s.entry) r
        WHERE s.import_id = $1 AND s.role = $2 AND s.entry IS NOT NULL AND s.undone_by IS NULL
        """,
        import_id,
        role,
    )
    deleted = await conn.fetchval(
        """
        WITH gone AS (
            DELETE FROM kb_entries e USING kb_import_snapshots s
            WHERE s.import_id = $1 AND s.role = $2 AND s.undone_by IS NULL AND e.role = s.role AND e.code = s.code
                  AND s.entry IS NULL
            RETURNING e.id
        )
        SELECT count(*) FROM gone
        """,
        import_id,
        role,
    )
    # In place (the entry keeps its id and what refers to it); an entry gone since is inserted back.
    await conn.execute(
        f"""
        UPDATE kb_entries e SET ({names}) = (SELECT {", ".join(f'u."{c}"' for c in columns)})
        FROM kb_undo_rows u WHERE e.role = u.role AND e.code = u.code
        """
    )
    await conn.execute(
        """
        INSERT INTO kb_entries SELECT u.* FROM kb_undo_rows u
        WHERE NOT EXISTS (SELECT 1 FROM kb_entries e WHERE e.role = u.role AND e.code = u.code)
        """
    )
    await conn.execute(
        "UPDATE kb_import_snapshots SET undone_by = $3 WHERE import_id = $1 AND role = $2 AND undone_by IS NULL",
        import_id,
        role,
        undo_id,
    )
    return int(restored.split()[-1]), int(deleted or 0)
