"""Guideline documents and chunks: atomic replace-on-reimport, chunk loading, dense (pgvector) search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg
import numpy as np

from db.types import Executor
from engine.embedding import model_name
from engine.verify.types import GuidelineChunk


@dataclass(slots=True)
class ChunkRow:
    """A chunk ready to store: text, heading path, folded search text and its embedding."""

    ord: int
    heading_path: list[str]
    text: str
    search_text: str
    content_hash: str
    embedding: np.ndarray | None
    embedding_model: str | None


async def replace_document(
    conn: asyncpg.Connection,
    *,
    title: str,
    filename: str,
    sha256: str,
    imported_by: str | None,
    chunks: list[ChunkRow],
) -> tuple[int, int]:
    """Insert the document or replace its chunks, in one transaction. Returns (document id, old chunk count).

    Readers see either all the old chunks or all the new ones. Concurrent imports of the same file name are
    serialised by the row lock the upsert takes.
    """
    async with conn.transaction():
        doc_id = await conn.fetchval(
            """
            INSERT INTO guideline_documents (title, filename, sha256, imported_by) VALUES ($1, $2, $3, $4)
            ON CONFLICT (filename) DO UPDATE SET title = EXCLUDED.title, sha256 = EXCLUDED.sha256,
                imported_by = EXCLUDED.imported_by, created_at = now()
            RETURNING id
            """,
            title,
            filename,
            sha256,
            imported_by,
        )
        old = await conn.fetchval("SELECT count(*) FROM guideline_chunks WHERE document_id = $1", doc_id)
        await conn.execute("DELETE FROM guideline_chunks WHERE document_id = $1", doc_id)
        await conn.executemany(
            """
            INSERT INTO guideline_chunks (document_id, ord, heading_path, text, search_text, content_hash,
                                          embedding, embedding_model)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            [
                (
                    doc_id,
                    c.ord,
                    c.heading_path,
                    c.text,
                    c.search_text,
                    c.content_hash,
                    c.embedding,
                    c.embedding_model,
                )
                for c in chunks
            ],
        )
    return int(doc_id), int(old or 0)


async def document_by_filename(db: Executor, filename: str) -> asyncpg.Record | None:
    return await db.fetchrow(
        """
        SELECT d.id, d.title, d.filename, d.sha256, d.imported_by, d.created_at,
               (SELECT count(*) FROM guideline_chunks c WHERE c.document_id = d.id) AS chunks
        FROM guideline_documents d WHERE d.filename = $1
        """,
        filename,
    )


async def list_documents(db: Executor) -> list[asyncpg.Record]:
    return await db.fetch(
        """
        SELECT d.id, d.title, d.filename, d.created_at, count(c.id) AS chunks
        FROM guideline_documents d LEFT JOIN guideline_chunks c ON c.document_id = d.id
        GROUP BY d.id ORDER BY d.title
        """
    )


async def corpus_version(db: Executor) -> str:
    """Changes on every import: chunk ids only grow, so (count, max id) moves with any replace."""
    row = await db.fetchrow("SELECT count(*) AS n, coalesce(max(id), 0) AS m FROM guideline_chunks")
    return f"{row['n']}:{row['m']}"


async def load_chunks(db: Executor) -> list[GuidelineChunk]:
    rows = await db.fetch(
        """
        SELECT c.id, d.title, c.heading_path, c.text, c.search_text
        FROM guideline_chunks c JOIN guideline_documents d ON d.id = c.document_id
        ORDER BY c.document_id, c.ord
        """
    )
    return [
        GuidelineChunk(
            id=r["id"],
            document=r["title"],
            heading_path=list(r["heading_path"]),
            text=r["text"],
            search_text=r["search_text"],
        )
        for r in rows
    ]


async def dense_search(db: Executor, vector: np.ndarray, k: int, model: str) -> list[tuple[int, float]]:
    """Nearest chunks with a vector made by ``model``, by cosine similarity (HNSW), best first."""
    rows = await db.fetch(
        """
        SELECT id, 1 - (embedding <=> $1) AS similarity FROM guideline_chunks
        WHERE embedding IS NOT NULL AND embedding_model = $3 ORDER BY embedding <=> $1 LIMIT $2
        """,
        np.asarray(vector, dtype=np.float32),
        k,
        model,
    )
    return [(int(r["id"]), float(r["similarity"])) for r in rows]


class PgGuidelineStore:
    """``engine.verify.types.GuidelineStore`` on ``guideline_chunks``; dense search reads only vectors made by
    ``embedder``'s model (chunks embedded by another model wait for the backfill job)."""

    def __init__(self, pool: asyncpg.Pool, embedder: Any) -> None:
        self.pool = pool
        self.embedder = embedder

    async def corpus_version(self) -> str:
        return await corpus_version(self.pool)

    async def load_chunks(self) -> list[GuidelineChunk]:
        return await load_chunks(self.pool)

    async def dense_search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        return await dense_search(self.pool, vector, k, await model_name(self.embedder))
