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

from bot.runtime import open_runtime
from bot.wiring import embedder_for
from db import kb
from db.settings import Settings
from db.stores import PgKBStore
from engine.embedding import passage_text
from engine.evaluation import metrics, read_corpus, read_qrels, read_queries
from engine.retrieval.search import KBSearch
from engine.text import strip_diacritics


async def eval_retrieval(args: argparse.Namespace, settings: Settings) -> int:
    corpus_path, queries_path, qrels_path = Path(args.corpus), Path(args.queries), Path(args.qrels)
    for p in (corpus_path, queries_path, qrels_path):
        if not p.is_file():
            print(f"medbot eval: no such file: {p}", file=sys.stderr)
            return 2
    role = "eval:" + hashlib.sha256(corpus_path.read_bytes()).hexdigest()[:12]
    entries = read_corpus(corpus_path, role)
    queries = read_queries(queries_path)
    qrels = read_qrels(qrels_path)

    runtime = await open_runtime(settings)
    try:
        embedder = embedder_for(runtime)
        texts = [passage_text(e.question, e.answer) for e in entries]
        with Progress(transient=True, console=None) as progress:
            task = progress.add_task("embedding corpus", total=len(texts))
            vectors = await embedder.embed_passages(texts, progress=lambda n: progress.advance(task, n))
        await kb.replace_role(runtime.pool, role, entries, vectors, embedder.name)
        search = KBSearch(PgKBStore(runtime.pool), embedder)
        await search.ready(role)  # index and diacritic restorer built before anything is timed
        ranked: dict[str, list[str]] = {}
        latencies: list[float] = []
        with Progress(transient=True) as progress:
            task = progress.add_task(f"searching ({args.mode})", total=len(queries))
            for q in queries:
                text = strip_diacritics(q.query) if args.strip_diacritics else q.query
                t = time.perf_counter()
                result = await search.search(role, text, k=args.k, mode=args.mode)
                latencies.append((time.perf_counter() - t) * 1000)
                ranked[q.query_id] = [h.entry.code for h in result.hits]
                progress.advance(task)
        await kb.delete_role(runtime.pool, role)
    finally:
        await runtime.close()
    result = metrics(ranked, qrels, args.k, latencies)
    result["mode"] = args.mode + ("+no-diacritics" if args.strip_diacritics else "")
    result["embedded_now"] = embedder.embedded_count
    print(json.dumps(result, ensure_ascii=False))
    return 0
