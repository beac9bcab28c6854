"""Embedding backfill: KB entries and guideline chunks without an embedding of the current embedder get one.

Rows are read in batches of ``WORKER_BACKFILL_BATCH`` and embedded through ``CachedEmbedder`` on the
``embedding_cache`` table, so text already embedded by an import (or an earlier backfill) costs a lookup, not a
model call. One run writes at most ``WORKER_BACKFILL_MAX_PER_RUN`` rows; the rest waits for the next tick.
Which text is embedded is decided in ``db.backfill``.

This is also how a change of embedding model (``EMBEDDING_BACKEND``/``EMBEDDING_MODEL``, or a server whose
model changed under the same name) reaches the stored KB: every vector of another model is outdated and
re-embedded here, in the background. Meanwhile search reads only the running model's vectors and answers a
role with the sparse leg alone until the role is complete (``engine.retrieval.search``); when a run completes
a role it bumps the role's KB version, so every process turns the dense leg back on at its next question.
"""

from __future__ import annotations

import logging

from db import backfill as backfill_db
from db import embedding_models, kb
from db.job_context import Counts, JobContext

log = logging.getLogger("medbot.worker.backfill")


async def run(ctx: JobContext) -> Counts:
    embedder = ctx.embedder()
    model = await embedder.open()
    batch = ctx.worker.worker_backfill_batch
    budget = ctx.worker.worker_backfill_max_per_run
    before = embedder.embedded_count
    counts: Counts = {"model": model}
    waiting = await embedding_models.roles_pending(ctx.pool, model)
    if waiting:
        log.info(
            "backfill.start model=%s roles waiting for vectors of this model: %s",
            model,
            ", ".join(f"{role} {have}/{total}" for role, (have, total) in waiting.items()),
        )
    touched: set[str] = set()
    for table in backfill_db.TABLES:
        written = changed = 0
        after = 0
        while budget > 0:
            rows = await backfill_db.pending(ctx.pool, table, model, after, min(batch, budget))
            if not rows:
                break
            vectors = await embedder.embed_passages([r.text for r in rows])
            stored = await backfill_db.store(ctx.pool, table, model, rows, vectors)
            touched.update(r.role for r in rows if r.role)
            written += stored
            changed += len(rows) - stored
            budget -= len(rows)
            after = rows[-1].id
            log.info("backfill.batch table=%s rows=%s stored=%s", table, len(rows), stored)
        counts[table] = written
        if changed:
            counts[f"{table}_changed_meanwhile"] = changed
    ready = [role for role in sorted(touched) if await backfill_db.role_complete(ctx.pool, role, model)]
    for role in ready:
        await kb.bump_version(ctx.pool, role)  # every process reloads the role: dense search back on
        log.info(
            "backfill.role_ready role=%s model=%s: every active entry has a vector of this model", role, model
        )
    if ready:
        counts["roles_ready"] = ready
    counts["model_calls"] = embedder.embedded_count - before
    counts["remaining"] = sum(
        [await backfill_db.count_pending(ctx.pool, t, model) for t in backfill_db.TABLES]
    )
    return counts
