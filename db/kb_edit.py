"""KB curation in the clinic console: reading an entry for a change (locked), writing the change, and the
entry's history (``kb_entry_history``, migration 0017).

Every function takes an ``Executor``; the caller (``kb_import.curate``) runs a change in one transaction:
lock the entry, record the version it replaces, write the new one, bump the role's KB version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from db.types import Executor

# Every stored field of an entry that a history snapshot keeps (not the derived search text, hash, vector).
SNAPSHOT_FIELDS = (
    "role",
    "code",
    "topic",
    "subtopic",
    "question",
    "answer",
    "keywords",
    "explanation",
    "urgent",
    "sample",
    "active",
)
_COLUMNS = "id, " + ", ".join(SNAPSHOT_FIELDS) + ", embedding_model, updated_at"


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """An entry's stored fields as a change reads them (``updated_at`` tells whether it changed since)."""

    id: int
    role: str
    code: str
    topic: str
    subtopic: str
    question: str
    answer: str
    keywords: list[str]
    explanation: str
    urgent: bool
    sample: bool
    active: bool
    embedding_model: str | None
    updated_at: datetime

    def snapshot(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SNAPSHOT_FIELDS}


@dataclass(frozen=True, slots=True)
class HistoryRow:
    id: int
    entry_id: int
    kind: str
    snapshot: dict[str, Any]  # the entry before the change (for ``create``: as created)
    result: dict[str, Any]  # the entry as the change left it
    changed_by: str | None  # the staff member's email (None once the account is gone)
    changed_at: datetime


def _stored(row: Any) -> StoredEntry:
    return StoredEntry(**{**dict(row), "keywords": list(row["keywords"])})


async def lock_entry(db: Executor, entry_id: int) -> StoredEntry | None:
    """The entry, locked until the end of the caller's transaction (FOR UPDATE)."""
    row = await db.fetchrow(f"SELECT {_COLUMNS} FROM kb_entries WHERE id = $1 FOR UPDATE", entry_id)
    return None if row is None else _stored(row)


async def read_entry(db: Executor, entry_id: int) -> StoredEntry | None:
    row = await db.fetchrow(f"SELECT {_COLUMNS} FROM kb_entries WHERE id = $1", entry_id)
    return None if row is None else _stored(row)


async def record(
    db: Executor, before: StoredEntry, after: StoredEntry, kind: str, staff_id: int | None
) -> int:
    """Keep a change in the history: the version it replaced (``before``; for ``create`` the new one) and
    the one it left (``after``)."""
    value = await db.fetchval(
        """
        INSERT INTO kb_entry_history (entry_id, role, code, snapshot, result, changed_by, kind)
        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
        """,
        before.id,
        before.role,
        before.code,
        before.snapshot(),
        after.snapshot(),
        staff_id,
        kind,
    )
    return int(value)


def _content(fields: dict[str, Any]) -> tuple[Any, ...]:
    """An entry's text columns in the order both writes below bind them ($ topic … urgent)."""
    return (
        fields["topic"],
        fields["subtopic"],
        fields["question"],
        fields["answer"],
        list(fields["keywords"]),
        fields["explanation"],
        bool(fields["urgent"]),
    )


async def update_content(
    db: Executor,
    entry_id: int,
    fields: dict[str, Any],
    *,
    search_text: str,
    content_hash: str,
    embedding: np.ndarray | None = None,
    embedding_model: str | None = None,
) -> None:
    """Store the entry's new text (topic, subtopic, question, answer, keywords, explanation, urgent) with
    its derived search text and hash; a new vector only when ``embedding`` is given (question or answer
    changed), else the entry keeps its own."""
    await db.execute(
        """
        UPDATE kb_entries SET topic = $2, subtopic = $3, question = $4, answer = $5, keywords = $6,
               explanation = $7, urgent = $8, search_text = $9, content_hash = $10,
               embedding = CASE WHEN $11::boolean THEN $12 ELSE embedding END,
               embedding_model = CASE WHEN $11::boolean THEN $13 ELSE embedding_model END,
               updated_at = clock_timestamp()
        WHERE id = $1
        """,
        entry_id,
        *_content(fields),
        search_text,
        content_hash,
        embedding is not None,
        embedding,
        embedding_model,
    )


async def set_active(db: Executor, entry_id: int, active: bool) -> None:
    await db.execute(
        "UPDATE kb_entries SET active = $2, updated_at = clock_timestamp() WHERE id = $1", entry_id, active
    )


async def insert_entry(
    db: Executor,
    role: str,
    code: str,
    fields: dict[str, Any],
    *,
    search_text: str,
    content_hash: str,
    embedding: np.ndarray,
    embedding_model: str,
) -> int | None:
    """A new entry; None when the role already has an entry with ``code`` (hidden ones too)."""
    value = await db.fetchval(
        """
        INSERT INTO kb_entries (role, code, topic, subtopic, question, answer, keywords, explanation, urgent,
                                search_text, content_hash, embedding, embedding_model, sample)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, false)
        ON CONFLICT (role, code) DO NOTHING
        RETURNING id
        """,
        role,
        code,
        *_content(fields),
        search_text,
        content_hash,
        embedding,
        embedding_model,
    )
    return None if value is None else int(value)


async def code_taken(db: Executor, role: str, code: str) -> bool:
    return bool(
        await db.fetchval(
            "SELECT EXISTS (SELECT 1 FROM kb_entries WHERE role = $1 AND code = $2)", role, code
        )
    )


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


async def suggest_code(db: Executor, role: str) -> str:
    """The next free code of ``role`` in the style its codes already follow (``NK-013`` → ``NK-014``: the
    prefix most codes share, the highest number after it plus one, as wide); ``KB-001`` for a new KB."""
    codes = [r["code"] for r in await db.fetch("SELECT code FROM kb_entries WHERE role = $1", role)]
    numbered: dict[str, list[str]] = {}
    for code in codes:
        found = _NUMBERED.match(code)
        if found:
            numbered.setdefault(found.group(1), []).append(found.group(2))
    if not numbered:
        prefix, width, number = "KB-", 3, 1
    else:
        prefix = max(numbered, key=lambda p: len(numbered[p]))
        digits = numbered[prefix]
        width = max(len(d) for d in digits)
        number = max(int(d) for d in digits) + 1
    taken = set(codes)
    while (code := f"{prefix}{number:0{width}d}") in taken:
        number += 1
    return code


async def history(db: Executor, entry_id: int) -> list[HistoryRow]:
    """The entry's recorded changes, newest first."""
    rows = await db.fetch(
        """
        SELECT h.id, h.entry_id, h.kind, h.snapshot, h.result, a.email AS changed_by, h.changed_at
        FROM kb_entry_history h LEFT JOIN staff_accounts a ON a.id = h.changed_by
        WHERE h.entry_id = $1 ORDER BY h.id DESC
        """,
        entry_id,
    )
    return [HistoryRow(**dict(r)) for r in rows]


async def history_row(db: Executor, entry_id: int, history_id: int) -> HistoryRow | None:
    row = await db.fetchrow(
        """
        SELECT h.id, h.entry_id, h.kind, h.snapshot, h.result, a.email AS changed_by, h.changed_at
        FROM kb_entry_history h LEFT JOIN staff_accounts a ON a.id = h.changed_by
        WHERE h.entry_id = $1 AND h.id = $2
        """,
        entry_id,
        history_id,
    )
    return None if row is None else HistoryRow(**dict(row))
