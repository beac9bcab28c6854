"""Embedding model identities (``embedding_models``) and what the stored vectors were made by.

``fingerprint`` settles a server model's fingerprint from its probe (``engine.embedding``); the other
functions report, per table and per model, how many vectors there are and how many rows still lack one of
the running model (``medbot worker --list``, the backfill job's log).
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import numpy as np

from db.types import Executor, vector_array


async def fingerprint(pool: asyncpg.Pool, base: str, probe: np.ndarray, new: str, same: float) -> str:
    """The fingerprint of the latest probe of ``base`` whose cosine to ``probe`` is at least ``same``, or
    ``new`` (recorded with ``probe``). One process at a time per base (advisory lock), so two processes that
    meet a new model together agree on one fingerprint."""
    unit = np.asarray(probe, dtype=np.float32)
    unit = unit / max(float(np.linalg.norm(unit)), 1e-12)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 9009))", base)
        rows = await conn.fetch(
            "SELECT fingerprint, probe FROM embedding_models WHERE base = $1 ORDER BY last_seen DESC", base
        )
        for row in rows:
            seen = vector_array(row["probe"])
            if float(seen @ unit) / max(float(np.linalg.norm(seen)), 1e-12) >= same:
                await conn.execute(
                    "UPDATE embedding_models SET last_seen = now() WHERE base = $1 AND fingerprint = $2",
                    base,
                    row["fingerprint"],
                )
                return str(row["fingerprint"])
        await conn.execute(
            "INSERT INTO embedding_models (base, fingerprint, probe) VALUES ($1, $2, $3) "
            "ON CONFLICT (base, fingerprint) DO UPDATE SET last_seen = now()",
            base,
            new,
            unit,
        )
    return new


@dataclass(slots=True)
class ModelCount:
    table: str
    model: str | None  # None: rows without a vector
    rows: int


async def vector_models(db: Executor) -> list[ModelCount]:
    """Rows per embedding model of the searchable rows (active KB entries, guideline chunks)."""
    rows = await db.fetch(
        """
        SELECT 'kb_entries' AS tbl, CASE WHEN embedding IS NULL THEN NULL ELSE embedding_model END AS model,
               count(*) AS n
        FROM kb_entries WHERE active GROUP BY 1, 2
        UNION ALL
        SELECT 'guideline_chunks', CASE WHEN embedding IS NULL THEN NULL ELSE embedding_model END, count(*)
        FROM guideline_chunks GROUP BY 1, 2
        ORDER BY 1, 3 DESC
        """
    )
    return [ModelCount(r["tbl"], r["model"], int(r["n"])) for r in rows]


async def roles_pending(db: Executor, model: str) -> dict[str, tuple[int, int]]:
    """Roles with active entries lacking a vector of ``model``: role → (entries with one, active entries)."""
    rows = await db.fetch(
        """
        SELECT role, count(*) FILTER (WHERE embedding IS NOT NULL AND embedding_model = $1) AS have,
               count(*) AS total
        FROM kb_entries WHERE active GROUP BY role
        HAVING count(*) FILTER (WHERE embedding IS NOT NULL AND embedding_model = $1) < count(*)
        ORDER BY role
        """,
        model,
    )
    return {r["role"]: (int(r["have"]), int(r["total"])) for r in rows}
