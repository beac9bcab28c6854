"""The clinic console's read-only view of the KB: a summary per role, a search over the folded search text,
one entry with every field.

The search matches every word of the (already folded) query anywhere in ``kb_entries.search_text`` — the
folded question, keywords, topic, subtopic and answer (``kb_import.texts``) — so a query typed without
diacritics finds entries written with them. Entries whose text holds the whole phrase come first, then the
most recently changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from db.types import Executor


@dataclass(frozen=True, slots=True)
class RoleSummary:
    role: str
    active: int
    hidden: int
    version: int
    last_import: str | None  # file name of the last import applied to the role
    last_import_at: datetime | None


@dataclass(frozen=True, slots=True)
class EntryRow:
    id: int
    role: str
    code: str
    topic: str
    subtopic: str
    question: str
    updated_at: datetime
    active: bool


@dataclass(frozen=True, slots=True)
class EntryDetail:
    id: int
    role: str
    code: str
    topic: str
    subtopic: str
    question: str
    answer: str
    explanation: str
    keywords: list[str]
    urgent: bool
    sample: bool
    active: bool
    created_at: datetime
    updated_at: datetime


async def role_summaries(db: Executor, roles: list[str]) -> list[RoleSummary]:
    """One summary per role of ``roles`` (in that order), zeros for a role with no entry yet."""
    rows = await db.fetch(
        """
        SELECT r.role,
               (SELECT count(*) FROM kb_entries e WHERE e.role = r.role AND e.active) AS active,
               (SELECT count(*) FROM kb_entries e WHERE e.role = r.role AND NOT e.active) AS hidden,
               COALESCE((SELECT v.version FROM kb_versions v WHERE v.role = r.role), 0) AS version,
               i.filename AS last_import, i.created_at AS last_import_at
        FROM unnest($1::text[]) WITH ORDINALITY AS r(role, n)
        LEFT JOIN LATERAL (
            SELECT filename, created_at FROM kb_imports
            WHERE status = 'applied' AND NOT dry_run AND r.role = ANY(roles)
            ORDER BY id DESC LIMIT 1
        ) i ON true
        ORDER BY r.n
        """,
        roles,
    )
    return [RoleSummary(**{k: r[k] for k in RoleSummary.__slots__}) for r in rows]


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# Which entries a search lists: those the bot uses, the hidden ones, or both.
STATUSES = ("active", "hidden", "all")
_STATUS_SQL = "(CASE $6 WHEN 'active' THEN active WHEN 'hidden' THEN NOT active ELSE true END)"


async def search(
    db: Executor,
    role: str,
    folded_words: list[str],
    *,
    limit: int = 20,
    offset: int = 0,
    status: str = "active",
) -> tuple[list[EntryRow], int]:
    """The role's entries of ``status`` (``STATUSES``; the bot's active ones by default) holding every word
    (folded), one page of them, and how many match."""
    assert status in STATUSES, status
    patterns = [_like(w) for w in folded_words]
    phrase = " ".join(folded_words)
    rows = await db.fetch(
        f"""
        SELECT id, role, code, topic, subtopic, question, updated_at, active, count(*) OVER () AS total
        FROM kb_entries
        WHERE role = $1 AND {_STATUS_SQL} AND search_text LIKE ALL ($2::text[])
        ORDER BY ($3 <> '' AND strpos(search_text, $3) > 0) DESC, updated_at DESC, id DESC
        LIMIT $4 OFFSET $5
        """,
        role,
        patterns,
        phrase,
        limit,
        offset,
        status,
    )
    total = int(rows[0]["total"]) if rows else 0
    if not rows and offset:
        total = int(
            await db.fetchval(
                "SELECT count(*) FROM kb_entries WHERE role = $1 AND "
                + _STATUS_SQL.replace("$6", "$3")
                + " AND search_text LIKE ALL ($2::text[])",
                role,
                patterns,
                status,
            )
        )
    return [EntryRow(**{k: r[k] for k in EntryRow.__slots__}) for r in rows], total


async def entry(db: Executor, entry_id: int) -> EntryDetail | None:
    row = await db.fetchrow(
        """
        SELECT id, role, code, topic, subtopic, question, answer, explanation, keywords, urgent, sample, active,
               created_at, updated_at
        FROM kb_entries WHERE id = $1
        """,
        entry_id,
    )
    if row is None:
        return None
    return EntryDetail(**{**dict(row), "keywords": list(row["keywords"])})
