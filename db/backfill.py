"""Rows whose embedding is missing or was made by another embedder, and writing their new vectors.

Text embedded for a KB entry: its question, or its answer when the question is blank (DESIGN §6: such an
entry must still be findable). ``kb_import`` had not chosen otherwise when this was written; if the import
job embeds a different text, change :data:`KB_TEXT_SQL` to match so both paths store the same vectors.
For a guideline chunk: its text.

Only active KB entries are embedded (inactive ones are never searched; re-activation by import or ``/kb_add``
embeds them again). The write is conditional on the text being unchanged since it was read, so a backfill
racing with an import never stores a vector for old text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from db.types import Executor

KB_TEXT_SQL = "CASE WHEN btrim(t.question) <> '' THEN btrim(t.question) ELSE left(btrim(t.answer), 2000) END"
CHUNK_TEXT_SQL = "t.text"

TABLES = {
    "kb_entries": (KB_TEXT_SQL, "t.active"),
    "guideline_chunks": (CHUNK_TEXT_SQL, "true"),
}
_ROLE_SQL = {"kb_entries": "t.role", "guideline_chunks": "NULL::text"}


def kb_embedding_text(question: str, answer: str) -> str:
    """The text embedded for a KB entry (the Python twin of :data:`KB_TEXT_SQL`)."""
    return question if question.strip() else answer


@dataclass(slots=True)
class Pending:
    id: int
    text: str
    role: str | None = None  # the KB role of a kb_entries row


async def pending(db: Executor, table: str, model: str, after_id: int, limit: int) -> list[Pending]:
    """Up to ``limit`` rows of ``table`` (id > ``after_id``) without an embedding of ``model``."""
    text_sql, where = TABLES[table]
    rows = await db.fetch(
        f"""
        SELECT t.id, {text_sql} AS text, {_ROLE_SQL[table]} AS role FROM {table} t
        WHERE {where} AND (t.embedding IS NULL OR t.embedding_model IS DISTINCT FROM $1) AND t.id > $2
        ORDER BY t.id LIMIT $3
        """,
        model,
        after_id,
        limit,
    )
    return [Pending(int(r["id"]), r["text"], r["role"]) for r in rows]


async def count_pending(db: Executor, table: str, model: str) -> int:
    _, where = TABLES[table]
    return int(
        await db.fetchval(
            f"SELECT count(*) FROM {table} t WHERE {where} "
            "AND (t.embedding IS NULL OR t.embedding_model IS DISTINCT FROM $1)",
            model,
        )
    )


async def role_complete(db: Executor, role: str, model: str) -> bool:
    """Whether every active entry of ``role`` has a vector of ``model``."""
    _, where = TABLES["kb_entries"]
    return not await db.fetchval(
        f"SELECT EXISTS (SELECT 1 FROM kb_entries t WHERE {where} AND t.role = $1 "
        "AND (t.embedding IS NULL OR t.embedding_model IS DISTINCT FROM $2))",
        role,
        model,
    )


async def store(db: Executor, table: str, model: str, rows: list[Pending], vectors: np.ndarray) -> int:
    """Write the vectors of rows whose text has not changed meanwhile; returns how many were written."""
    if not rows:
        return 0
    text_sql, _ = TABLES[table]
    status = await db.execute(
        f"""
        UPDATE {table} t SET embedding = v.embedding::vector, embedding_model = $1
        FROM unnest($2::bigint[], $3::text[], $4::text[]) AS v(id, text, embedding)
        WHERE t.id = v.id AND {text_sql} = v.text
        """,
        model,
        [r.id for r in rows],
        [r.text for r in rows],
        [_vector_literal(v) for v in vectors],
    )
    return int(status.split()[-1])


def _vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in np.asarray(vector, dtype=np.float32)) + "]"
