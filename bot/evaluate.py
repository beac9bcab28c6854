"""``medbot eval retrieval``: retrieval quality measured on the exact production search path.

The corpus is loaded into an isolated role (``eval:<hash of the corpus>``) of the real store, embedded
through the embedding cache (a second run embeds nothing), searched with the same ``KBSearch`` as
RetrieveFromKB, and removed again. The last line printed is the metrics JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

from rich.progress import Progress

from bot.runtime import Runtime, embedder_for, open_runtime
from db import kb
from db.settings import Settings
from db.stores import PgKBStore
from engine.embedding import passage_text
from engine.evaluation import metrics, read_corpus, read_qrels, read_queries
from engine.retrieval.search import KBSearch
from engine.text import strip_diacritics


async def evaluate(
    runtime: Runtime,
    corpus_path: Path,
    queries_path: Path,
    qrels_path: Path,
    runs: list[tuple[str, bool]],
    *,
    k: int = 10,
    threshold: float | None = None,
) -> list[dict[str, object]]:
    """Load the corpus into an isolated role, then one metrics dict per (mode, strip_diacritics) run.

    Besides the ranking metrics, each run reports the share of queries the bot would answer at
    ``threshold`` (the calibrated top score reaching it) and how often the top entry is right then."""
    threshold = runtime.settings.score_threshold if threshold is None else threshold
    role = "eval:" + hashlib.sha256(corpus_path.read_bytes()).hexdigest()[:12]
    entries = read_corpus(corpus_path, role)
    queries = read_queries(queries_path)
    qrels = read_qrels(qrels_path)
    embedder = embedder_for(runtime)
    texts = [passage_text(e.question, e.answer) for e in entries]
    with Progress(transient=True) as progress:
        task = progress.add_task("embedding corpus", total=len(texts))
        vectors = await embedder.embed_passages(texts, progress=lambda n: progress.advance(task, n))
    await kb.replace_role(runtime.pool, role, entries, vectors, embedder.name)
    results = []
    try:
        search = KBSearch(PgKBStore(runtime.pool), embedder, query_adapter=runtime.settings.query_adapter)
        await search.ready(role)  # index and diacritic restorer built before anything is timed
        for mode, strip in runs:
            ranked: dict[str, list[str]] = {}
            latencies: list[float] = []
            answered = answered_right = 0
            with Progress(transient=True) as progress:
                task = progress.add_task(f"searching ({mode})", total=len(queries))
                for q in queries:
                    text = strip_diacritics(q.query) if strip else q.query
                    t = time.perf_counter()
                    result = await search.search(role, text, k=k, mode=mode)
                    latencies.append((time.perf_counter() - t) * 1000)
                    ranked[q.query_id] = [h.entry.code for h in result.hits]
                    if result.hits and result.score >= threshold:
                        answered += 1
                        answered_right += result.hits[0].entry.code in qrels.get(q.query_id, set())
                    progress.advance(task)
            row = metrics(ranked, qrels, k, latencies)
            row["threshold"] = threshold
            row["answered"] = round(answered / max(1, len(queries)), 4)
            row["precision_answered"] = round(answered_right / max(1, answered), 4)
            row["mode"] = mode + ("+no-diacritics" if strip else "")
            results.append(row)
    finally:
        await kb.delete_role(runtime.pool, role)
    return results


async def eval_retrieval(args: argparse.Namespace, settings: Settings) -> int:
    paths = [Path(args.corpus), Path(args.queries), Path(args.qrels)]
    for p in paths:
        if not p.is_file():
            print(f"medbot eval: no such file: {p}", file=sys.stderr)
            return 2
    runtime = await open_runtime(settings)
    try:
        (result,) = await evaluate(runtime, *paths, [(args.mode, args.strip_diacritics)], k=args.k)
        result["embedded_now"] = embedder_for(runtime).embedded_count
    finally:
        await runtime.close()
    print(json.dumps(result, ensure_ascii=False))
    return 0
