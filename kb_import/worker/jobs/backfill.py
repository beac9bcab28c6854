"""Embedding backfill: KB entries and guideline chunks without an embedding of the current embedder get one.

Rows are read in batches of ``WORKER_BACKFILL_BATCH`` and embedded through ``CachedEmbedder`` on the
``embedding_cache`` table, so text already embedded by an import (or an earlier backfill) costs a lookup, not a
model call. One run writes at most ``WORKER_BACKFILL_MAX_PER_RUN`` rows; the rest waits for the next tick.
Which text is embedded is decided in ``db.backfill``.
"""

from __future__ import annotations

import logging

from db import backfill as backfill_db
from kb_import.worker.context import Counts, JobContext

log = logging.getLogger("medbot.worker.backfill")


async def run(ctx: JobContext) -> Counts:
    embedder = ctx.embedder()
    model = embedder.name
    batch = ctx.worker.worker_backfill_batch
    budget = ctx.worker.worker_backfill_max_per_run
    before = embedder.embedded_count
    counts: Counts = {"model": model}
    for table in backfill_db.TABLES:
        written = changed = 0
        after = 0
        while budget > 0:
            rows = await backfill_db.pending(ctx.pool, table, model, after, min(batch, budget))
            if not rows:
                break
            vectors = await embedder.embed_passages([r.text for r in rows])
            stored = await backfill_db.store(ctx.pool, table, model, rows, vectors)
            written += stored
            changed += len(rows) - stored
            budget -= len(rows)
            after = rows[-1].id
            log.info("backfill.batch table=%s rows=%s stored=%s", table, len(rows), stored)
        counts[table] = written
        if changed:
            counts[f"{table}_changed_meanwhile"] = changed
    counts["model_calls"] = embedder.embedded_count - before
    counts["remaining"] = sum([await backfill_db.count_pending(ctx.pool, t, model) for t in backfill_db.TABLES])
    return counts
