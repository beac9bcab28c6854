"""The embedding cache: vectors keyed by (model, sha256 of the text), so re-imports never re-embed."""

from __future__ import annotations

import numpy as np

from db.types import Executor, vector_array


async def get_many(db: Executor, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
    if not hashes:
        return {}
    rows = await db.fetch(
        "SELECT text_hash, embedding FROM embedding_cache WHERE model = $1 AND text_hash = ANY($2::text[])",
        model,
        hashes,
    )
    return {r["text_hash"]: vector_array(r["embedding"]) for r in rows}


async def put_many(db: Executor, model: str, items: dict[str, np.ndarray]) -> None:
    if not items:
        return
    await db.executemany(
        """
        INSERT INTO embedding_cache (model, text_hash, embedding) VALUES ($1, $2, $3)
        ON CONFLICT (model, text_hash) DO NOTHING
        """,
        [(model, h, np.asarray(v, dtype=np.float32)) for h, v in items.items()],
    )
