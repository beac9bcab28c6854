"""The clinic console's changes to KB entries since an import last wrote each entry (``kb_entry_history``,
migration 0017), read for an import's dry run and its apply (``kb_import.console_changes``).

An entry's last import write is the ``kb_imports`` record its ``import_id`` names (an import sets it on every
entry it writes or hides; an undo puts back the id the entry had before that import). The console's changes
that count are the history rows recorded after that import's write transaction began; for an entry no
import ever wrote (created in the console), all of them. For each such entry: the entry as the first of those
changes found it (``baseline``: what the import left, or the entry as created), the latest change's kind,
who and when, and the entry as it is now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from db.types import Executor


@dataclass(frozen=True, slots=True)
class ChangedEntry:
    """An entry the console changed since an import last wrote it."""

    role: str
    code: str
    current: dict[str, Any]  # the entry's stored fields now (``db.kb_edit.SNAPSHOT_FIELDS``)
    content_hash: str
    baseline: dict[str, Any]  # the entry before the first of those changes (for ``create``: as created)
    created: bool  # the first of those changes created the entry
    kind: str  # the latest change: edit | create | hide | restore | revert
    changed_by: str | None  # the latest change's staff email (None once the account is gone)
    changed_at: datetime


async def changed_since_import(db: Executor, roles: Sequence[str]) -> list[ChangedEntry]:
    """Every entry of ``roles`` with a console change after its last import write, by role and code."""
    rows = await db.fetch(
        """
        WITH since AS (
            SELECT h.*, e.import_id FROM kb_entry_history h
            JOIN kb_entries e ON e.id = h.entry_id
            LEFT JOIN kb_imports i ON i.id = e.import_id
            WHERE h.role = ANY($1::text[]) AND (i.created_at IS NULL OR h.changed_at > i.created_at)
        ), firsts AS (
            SELECT DISTINCT ON (entry_id) entry_id, snapshot, kind FROM since ORDER BY entry_id, id
        ), lasts AS (
            SELECT DISTINCT ON (entry_id) entry_id, kind, changed_at, changed_by FROM since
            ORDER BY entry_id, id DESC
        )
        SELECT e.role, e.code, e.topic, e.subtopic, e.question, e.answer, e.keywords, e.explanation, e.urgent,
               e.sample, e.active, e.content_hash, f.snapshot AS baseline, f.kind AS first_kind,
               l.kind, l.changed_at, a.email AS changed_by
        FROM firsts f
        JOIN lasts l USING (entry_id)
        JOIN kb_entries e ON e.id = f.entry_id
        LEFT JOIN staff_accounts a ON a.id = l.changed_by
        ORDER BY e.role, e.code
        """,
        list(roles),
    )
    fields = ("role", "code", "topic", "subtopic", "question", "answer", "keywords", "explanation", "urgent",
              "sample", "active")  # fmt: skip
    return [
        ChangedEntry(
            role=r["role"],
            code=r["code"],
            current={name: list(r[name]) if name == "keywords" else r[name] for name in fields},
            content_hash=r["content_hash"],
            baseline=dict(r["baseline"]),
            created=r["first_kind"] == "create",
            kind=r["kind"],
            changed_by=r["changed_by"],
            changed_at=r["changed_at"],
        )
        for r in rows
    ]


async def lock_written(
    conn: Executor, role: str, codes: Sequence[str], keep_codes: Sequence[str] | None
) -> None:
    """Lock (FOR UPDATE, until the caller's transaction ends) the entries of ``role`` an import is about to
    write (``codes``) or hide (active ones not in ``keep_codes``; None: it hides nothing), so that a console
    change of one of them either committed before (and is seen) or waits for the import."""
    await conn.execute(
        """
        SELECT 1 FROM kb_entries
        WHERE role = $1 AND (code = ANY($2::text[]) OR ($3::text[] IS NOT NULL AND active
                                                        AND NOT code = ANY($3::text[])))
        FOR UPDATE
        """,
        role,
        list(codes),
        None if keep_codes is None else list(keep_codes),
    )
