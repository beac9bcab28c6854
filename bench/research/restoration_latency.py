"""Search time of unmarked messages with and without the second reading (issue 21, fifteenth round; research).

faq-val dev messages of the ``questions`` shape with every mark removed, searched through ``KBSearch`` (adapter on)
with the product's ``CachedEmbedder`` over llama.cpp and no query cache, so every search embeds; the settings of
``engine.retrieval.search.UNSURE_BELOW`` are interleaved twice. Prints how many messages get a second text and the
p50 / p95 / mean of the search time and of its embedding part.

    PYTHONPATH=$PWD MEDBOT_EVAL_DIR=/tmp/... python -m bench.research.restoration_latency [--n 100] [--settings none,0.8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

import numpy as np

import engine.retrieval.search as search_module
from bench.memory_store import MemoryKBStore
from bench.retrieval_shapes import DOT_MEDBOT, ROLE, DiskCachedEmbedder, build_shapes
from engine.embedding import CachedEmbedder, LlamaCppEmbedder, passage_text
from engine.retrieval.search import KBSearch
from engine.text import strip_diacritics


async def measure(n: int, settings: list[float | None]) -> None:
    shape = build_shapes()["questions"]
    vectors = DiskCachedEmbedder(offline=True).passage_vectors(
        [passage_text(e.question, e.answer) for e in shape.entries]
    )
    queries = [strip_diacritics(q.text) for q in shape.queries["dev"]][:n]
    embedder = CachedEmbedder(LlamaCppEmbedder(DOT_MEDBOT), None, query_cache_size=0)  # type: ignore[arg-type]
    kb = KBSearch(MemoryKBStore(shape.entries, vectors), embedder, query_adapter=True)
    await kb.ready(ROLE)
    await kb.search(ROLE, "khoi dong")  # loads the model
    runs: dict[float | None, list[tuple[float, float]]] = {}
    two: dict[float | None, int] = {}
    for setting in settings * 2:
        search_module.UNSURE_BELOW = setting
        index = await kb.index(ROLE)
        for q in queries:
            t = time.perf_counter()
            res = await kb.search(ROLE, q)
            runs.setdefault(setting, []).append(((time.perf_counter() - t) * 1000, res.timings["embed"]))
            two[setting] = two.get(setting, 0) + (
                len(search_module._embedding_texts(index, res.query_used)) > 1
            )
    for setting, rows in runs.items():
        total, embed = np.array(rows).T
        print(
            f"UNSURE_BELOW={setting}: {len(rows)} searches, {two[setting] // 2} of {len(queries)} with two texts; "
            f"search ms p50 {np.percentile(total, 50):.0f} p95 {np.percentile(total, 95):.0f} "
            f"mean {total.mean():.0f}; embed ms p50 {np.percentile(embed, 50):.0f} p95 {np.percentile(embed, 95):.0f}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--settings", default="none,0.8")
    args = ap.parse_args(sys.argv[1:])
    settings = [None if s == "none" else float(s) for s in args.settings.split(",")]
    asyncio.run(measure(args.n, settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
