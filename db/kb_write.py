"""Bulk KB writes for the import job: per-role locks, the current state of a role, the staged upsert.

The job holds the role locks on one connection for the whole import (state → embeddings → write), so two
imports of the same role never interleave; the write itself is one transaction: rows are COPYed into a
temporary table and upserted by (role, code) with ``INSERT … ON CONFLICT``; entries of a fully re-imported
role that are no longer in the file are deactivated (``active = false``; re-adding the code restores them).
Each staged row carries its ``urgent`` mark and the import's ``sample`` flag.

Before anything is written, every entry the import will change or hide is copied, as it is, into
``kb_import_snapshots`` (the whole row as jsonb; NULL for an entry the import creates) under the import's id,
in the same transaction: ``db.kb_undo`` puts them back when the import is undone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg

from db.locks import lock, lock_key, unlock

LOCK_NAMESPACE = "kb_import"

STAGE_COLUMNS = (
    "role",
    "code",
    "topic",
    "subtopic",
    "question",
    "answer",
    "explanation",
    "keywords",
    "search_text",
    "content_hash",
    "embedding",
    "embedding_model",
    "urgent",
    "sample",
)


@dataclass(slots=True, frozen=True)
class ExistingEntry:
    content_hash: str
    active: bool
    embedded_with: str | None  # embedding model when an embedding is stored, else None
    sample: bool = False  # written by an import of the shipped sample KB, not reviewed since


@asynccontextmanager
async def role_locks(pool: asyncpg.Pool, roles: Sequence[str]) -> AsyncIterator[asyncpg.Connection]:
    """Session advisory locks on every role (taken in sorted order, so imports never deadlock)."""
    keys = [lock_key(LOCK_NAMESPACE, role) for role in sorted(set(roles))]
    async with pool.acquire() as conn:
        await lock(conn, *keys)
        try:
            yield conn
        finally:
            await unlock(conn, *reversed(keys))


async def existing_entries(
    conn: asyncpg.Connection, roles: Sequence[str]
) -> dict[tuple[str, str], ExistingEntry]:
    """Every entry (active or not) of ``roles`` keyed by (role, code)."""
    rows = await conn.fetch(
        """
        SELECT role, code, content_hash, active,
               CASE WHEN embedding IS NULL THEN NULL ELSE embedding_model END AS embedded_with, sample
        FROM kb_entries WHERE role = ANY($1::text[])
        """,
        list(roles),
    )
    return {
        (r["role"], r["code"]): ExistingEntry(r["content_hash"], r["active"], r["embedded_with"], r["sample"])
        for r in rows
    }


async def write_entries(
    conn: asyncpg.Connection,
    *,
    import_id: int,
    records: list[tuple[Any, ...]],
    keep_codes: dict[str, list[str]],
) -> dict[str, int]:
    """Upsert ``records`` (tuples in ``STAGE_COLUMNS`` order) and deactivate entries of the roles in
    ``keep_codes`` whose code is not listed. Call inside a transaction. Returns deactivated counts per role."""
    if records:
        await conn.execute(
            """
            CREATE TEMP TABLE kb_import_stage (
                role text, code text, topic text, subtopic text, question text, answer text,
                explanation text, keywords text[], search_text text, content_hash text,
                embedding vector(384), embedding_model text, urgent boolean, sample boolean
            ) ON COMMIT DROP
            """
        )
        await conn.copy_records_to_table("kb_import_stage", records=records, columns=STAGE_COLUMNS)
        await conn.execute(
            """
            INSERT INTO kb_import_snapshots (import_id, role, code, entry)
            SELECT $1, s.role, s.code, to_jsonb(e) FROM kb_import_stage s
            LEFT JOIN kb_entries e ON e.role = s.role AND e.code = s.code
            """,
            import_id,
        )
        await conn.execute(
            """
            INSERT INTO kb_entries (role, code, topic, subtopic, question, answer, explanation, keywords,
                                    search_text, content_hash, embedding, embedding_model, urgent, sample,
                                    active, import_id)
            SELECT role, code, topic, subtopic, question, answer, explanation, keywords,
                   search_text, content_hash, embedding, embedding_model, urgent, sample, true, $1
            FROM kb_import_stage
            ON CONFLICT (role, code) DO UPDATE SET
                topic = EXCLUDED.topic, subtopic = EXCLUDED.subtopic, question = EXCLUDED.question,
                answer = EXCLUDED.answer, explanation = EXCLUDED.explanation, keywords = EXCLUDED.keywords,
                search_text = EXCLUDED.search_text, content_hash = EXCLUDED.content_hash,
                embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
                urgent = EXCLUDED.urgent, sample = EXCLUDED.sample,
                active = true, import_id = EXCLUDED.import_id, updated_at = now()
            """,
            import_id,
        )
    deactivated: dict[str, int] = {}
    for role, codes in keep_codes.items():
        await conn.execute(
            """
            INSERT INTO kb_import_snapshots (import_id, role, code, entry)
            SELECT $3, role, code, to_jsonb(kb_entries) FROM kb_entries
            WHERE role = $1 AND active AND NOT (code = ANY($2::text[]))
            """,
            role,
            codes,
            import_id,
        )
        status = await conn.execute(
            """
            UPDATE kb_entries SET active = false, import_id = $3, updated_at = now()
            WHERE role = $1 AND active AND NOT (code = ANY($2::text[]))
            """,
            role,
            codes,
            import_id,
        )
        deactivated[role] = int(status.split()[-1])
    return deactivated


async def existing_roles(db: asyncpg.Pool | asyncpg.Connection) -> list[str]:
    """Roles with any KB entry or version (active or not): the roles an import may target by name."""
    rows = await db.fetch("SELECT role FROM kb_entries GROUP BY role UNION SELECT role FROM kb_versions")
    return sorted(r["role"] for r in rows)
