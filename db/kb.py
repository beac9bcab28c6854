"""KB entries and per-role KB versions: reads for retrieval and export, dense (pgvector) search, simple
writes, and the review mark (``mark_reviewed``: a role's sample entries become the clinic's own).

The bulk import path (``kb_import``) adds its own transactional upsert here; retrieval reads through
``db.stores.PgKBStore``, which wraps these functions in the engine's ``KBStore`` protocol.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import numpy as np

from db.kb_write import STAGE_COLUMNS
from db.types import Executor, connection, vector_array
from engine.types import KBEntry

KB_CHANNEL = "kb_changed"  # NOTIFY channel; the payload is the role whose KB changed


async def version(db: Executor, role: str) -> int:
    value = await db.fetchval("SELECT version FROM kb_versions WHERE role = $1", role)
    return int(value or 0)


async def bump_version(db: Executor, role: str) -> int:
    """Mark the role's KB as changed (call in the writing transaction) and tell listening processes."""
    value = await db.fetchval(
        """
        INSERT INTO kb_versions (role, version) VALUES ($1, nextval('kb_version_seq'))
        ON CONFLICT (role) DO UPDATE SET version = EXCLUDED.version, updated_at = now()
        RETURNING version
        """,
        role,
    )
    await db.execute("SELECT pg_notify($1, $2)", KB_CHANNEL, role)
    return int(value)


def _entry(row: Any) -> KBEntry:
    return KBEntry(
        id=row["id"],
        role=row["role"],
        code=row["code"],
        question=row["question"],
        answer=row["answer"],
        topic=row["topic"],
        subtopic=row["subtopic"],
        keywords=list(row["keywords"]),
        explanation=row["explanation"],
        urgent=row["urgent"],
        sample=row["sample"],
    )


_ENTRY_COLUMNS = "id, role, code, question, answer, topic, subtopic, keywords, explanation, urgent, sample"


async def active_entries(db: Executor, role: str) -> list[KBEntry]:
    rows = await db.fetch(
        f"SELECT {_ENTRY_COLUMNS} FROM kb_entries WHERE role = $1 AND active ORDER BY id", role
    )
    return [_entry(r) for r in rows]


async def active_vectors(db: Executor, role: str, model: str) -> tuple[np.ndarray, np.ndarray]:
    """Ids and embeddings (one row each, float32) of the role's active entries that have one made by ``model``
    (vectors of another model are never mixed in: engine.retrieval.search)."""
    rows = await db.fetch(
        "SELECT id, embedding FROM kb_entries WHERE role = $1 AND active AND embedding IS NOT NULL "
        "AND embedding_model = $2 ORDER BY id",
        role,
        model,
    )
    ids = np.fromiter((r["id"] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.vstack([vector_array(r["embedding"]) for r in rows]) if rows else np.zeros((0, 0), np.float32)
    return ids, matrix


async def count_vectors(db: Executor, role: str, model: str) -> int:
    """How many active entries of ``role`` have a vector made by ``model``."""
    return int(
        await db.fetchval(
            "SELECT count(*) FROM kb_entries WHERE role = $1 AND active AND embedding IS NOT NULL "
            "AND embedding_model = $2",
            role,
            model,
        )
    )


async def export_entries(db: Executor, role: str) -> list[KBEntry]:
    """The role's active entries in the order a clinic reads them (topic, then code), for the KB export."""
    rows = await db.fetch(
        f"SELECT {_ENTRY_COLUMNS} FROM kb_entries WHERE role = $1 AND active ORDER BY topic, code", role
    )
    return [_entry(r) for r in rows]


async def entries_by_code(db: Executor, role: str, codes: list[str]) -> list[KBEntry]:
    rows = await db.fetch(
        f"SELECT {_ENTRY_COLUMNS} FROM kb_entries WHERE role = $1 AND code = ANY($2::text[])", role, codes
    )
    return [_entry(r) for r in rows]


# Up to this many entries a role is searched exactly (a scan of its rows: ~8 ms at 10,000 with vectors
# stored inline, migration 0007); above it through the HNSW index with a wide candidate list. Exact costs
# about what HNSW costs at 10,000 and never misses: on the benchmark's 10,000-entry role HNSW (ef_search 400)
# missed 6 of the 20 sample entries that an exact scan ranks first.
EXACT_SEARCH_MAX = 15_000
EF_SEARCH = 400


# The role's nearest active entries with a vector of one model; ``order`` picks the plan (see dense_search).
_NEAREST = """
    SELECT id, 1 - (embedding <=> $2) AS similarity FROM kb_entries
    WHERE role = $1 AND active AND embedding IS NOT NULL AND embedding_model = $4
    ORDER BY {order} LIMIT $3
"""


async def dense_search(
    db: Executor, role: str, vector: np.ndarray, k: int, *, model: str, role_size: int | None = None
) -> list[tuple[int, float]]:
    """Nearest active entries of ``role`` by cosine similarity among vectors made by ``model``, best first.

    ``role_size`` (when the caller knows it) picks the plan. Up to ``EXACT_SEARCH_MAX`` entries (or unknown):
    an exact scan, one statement; ordering by the similarity expression rather than by the ``<=>`` operator
    keeps the planner off the HNSW index. Larger roles: the HNSW index, forced, with a wide candidate list; a
    role filter on an HNSW scan can starve the result, so pgvector's iterative scan keeps reading the graph
    until ``k`` rows of the role are found.
    """
    if role_size is None or role_size <= EXACT_SEARCH_MAX:
        rows = await db.fetch(_NEAREST.format(order="similarity DESC"), role, vector, k, model)
    else:
        settings = (
            "SET LOCAL hnsw.iterative_scan = relaxed_order; "
            f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, 2 * int(k))}; "
            "SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off"
        )
        async with connection(db) as conn, conn.transaction():
            # One round trip for all settings (no arguments: the simple protocol allows several statements).
            await conn.execute(settings)
            rows = await conn.fetch(_NEAREST.format(order="embedding <=> $2"), role, vector, k, model)
    rows = sorted(rows, key=lambda r: -r["similarity"])  # relaxed order: re-sort the few rows
    return [(int(r["id"]), float(r["similarity"])) for r in rows]


async def roles(db: Executor) -> list[str]:
    rows = await db.fetch("SELECT DISTINCT role FROM kb_entries WHERE active ORDER BY role")
    return [r["role"] for r in rows]


async def count_active(db: Executor, role: str | None = None) -> int:
    if role is None:
        return int(await db.fetchval("SELECT count(*) FROM kb_entries WHERE active"))
    return int(await db.fetchval("SELECT count(*) FROM kb_entries WHERE active AND role = $1", role))


async def add_entry(
    db: Executor,
    entry: KBEntry,
    *,
    embedding: np.ndarray | None = None,
    embedding_model: str | None = None,
    search_text: str = "",
    content_hash: str = "",
) -> int:
    """Insert or replace one entry by (role, code) — used by `/kb_add`, tests and the eval loader."""
    value = await db.fetchval(
        """
        INSERT INTO kb_entries (role, code, topic, subtopic, question, answer, explanation, keywords,
                                search_text, content_hash, embedding, embedding_model, urgent, sample)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
        ON CONFLICT (role, code) DO UPDATE SET
            topic = EXCLUDED.topic, subtopic = EXCLUDED.subtopic, question = EXCLUDED.question,
            answer = EXCLUDED.answer, explanation = EXCLUDED.explanation, keywords = EXCLUDED.keywords,
            search_text = EXCLUDED.search_text, content_hash = EXCLUDED.content_hash,
            embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
            urgent = EXCLUDED.urgent, sample = EXCLUDED.sample, active = true, updated_at = now()
        RETURNING id
        """,
        entry.role,
        entry.code,
        entry.topic,
        entry.subtopic,
        entry.question,
        entry.answer,
        entry.explanation,
        entry.keywords,
        search_text,
        content_hash,
        embedding,
        embedding_model,
        entry.urgent,
        entry.sample,
    )
    return int(value)


async def sample_counts(db: Executor) -> dict[str, int]:
    """Active entries still marked as unreviewed sample material, per role (roles with none are absent)."""
    rows = await db.fetch(
        "SELECT role, count(*) AS n FROM kb_entries WHERE active AND sample GROUP BY role ORDER BY role"
    )
    return {r["role"]: int(r["n"]) for r in rows}


async def mark_reviewed(pool: asyncpg.Pool, role: str) -> int:
    """Clear the sample flag of every entry of ``role`` (the clinic's doctors have reviewed them) and bump
    the role's KB version so running bots pick it up. Returns how many active entries were marked."""
    async with pool.acquire() as conn, conn.transaction():
        rows = await conn.fetch(
            "UPDATE kb_entries SET sample = false, updated_at = now() WHERE role = $1 AND sample RETURNING active",
            role,
        )
        if rows:
            await bump_version(conn, role)
    return sum(1 for r in rows if r["active"])


# What replace_role writes: the import's staging columns but the two the import computes (search text, hash).
_REPLACE_COLUMNS = tuple(c for c in STAGE_COLUMNS if c not in ("search_text", "content_hash"))


async def replace_role(
    pool: asyncpg.Pool, role: str, entries: list[KBEntry], vectors: np.ndarray, model: str
) -> None:
    """Make ``entries`` (with their vectors) the whole KB of ``role``, in one transaction (COPY)."""
    records = [
        (
            role,
            e.code,
            e.topic,
            e.subtopic,
            e.question,
            e.answer,
            e.explanation,
            e.keywords,
            v,
            model,
            e.urgent,
            e.sample,
        )
        for e, v in zip(entries, vectors, strict=True)
    ]
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("DELETE FROM kb_entries WHERE role = $1", role)
        await conn.copy_records_to_table("kb_entries", records=records, columns=_REPLACE_COLUMNS)
        await bump_version(conn, role)


async def delete_role(pool: asyncpg.Pool, role: str) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("DELETE FROM kb_entries WHERE role = $1", role)
        await conn.execute("DELETE FROM kb_versions WHERE role = $1", role)
