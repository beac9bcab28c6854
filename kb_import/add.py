"""Adding entries one by one outside a spreadsheet import (an admin's `/kb_add`, a question answered from the
unanswered list): each entry is stored exactly as an import stores it — embedded, with its folded search text
and content hash — and each touched role gets a new KB version, all in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from db import kb
from engine import Embedder, KBEntry, passage_text
from kb_import.texts import content_hash, search_text


async def add_entries(pool: asyncpg.Pool, embedder: Embedder, entries: Sequence[KBEntry]) -> None:
    """Insert or replace ``entries`` by (role, code). The embedding comes first, outside the transaction, so a
    failed embedder leaves the KB as it was."""
    vectors = await embedder.embed_passages([passage_text(e.question, e.answer) for e in entries])
    async with pool.acquire() as conn, conn.transaction():
        for entry, vector in zip(entries, vectors, strict=True):
            await kb.add_entry(
                conn,
                entry,
                embedding=vector,
                embedding_model=embedder.name,
                search_text=search_text(entry),
                content_hash=content_hash(entry),
            )
        for role in dict.fromkeys(e.role for e in entries):
            await kb.bump_version(conn, role)
