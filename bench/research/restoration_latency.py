"""Search time of unmarked messages with and without the second reading (issue 21, fifteenth round; research),
or with and without the restoration from the sparse leg's candidates (``--knob near``: ``NEAR_SPELLING_K``,
sixteenth round).

faq-val dev messages of the ``questions`` shape with every mark removed, searched through ``KBSearch`` (adapter on)
with the product's ``CachedEmbedder`` over llama.cpp and no query cache, so every search embeds; the settings of
``engine.retrieval.search.UNSURE_BELOW`` are interleaved twice. Prints how many messages get a second text and the
p50 / p95 / mean of the search time and of its embedding part.

    PYTHONPATH=$PWD MEDBOT_EVAL_DIR=/tmp/... python -m bench.research.restoration_latency [--n 100] [--settings none,0.8]
    PYTHONPATH=$PWD MEDBOT_EVAL_DIR=/tmp/... python -m bench.research.restoration_latency --knob near --settings none,20
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


async def measure(n: int, settings: list[float | None], knob: str = "unsure") -> None:
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
        if knob == "near":  # sixteenth round: restoration from the sparse leg's first ``setting`` entries
            search_module.NEAR_SPELLING_K = None if setting is None else int(setting)
        else:
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
            f"{'NEAR_SPELLING_K' if knob == 'near' else 'UNSURE_BELOW'}={setting}: {len(rows)} searches, {two[setting] // 2} of {len(queries)} with two texts; "
            f"search ms p50 {np.percentile(total, 50):.0f} p95 {np.percentile(total, 95):.0f} "
            f"mean {total.mean():.0f}; embed ms p50 {np.percentile(embed, 50):.0f} p95 {np.percentile(embed, 95):.0f}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--settings", default="none,0.8")
    ap.add_argument("--knob", choices=("unsure", "near"), default="unsure", help="near: NEAR_SPELLING_K")
    args = ap.parse_args(sys.argv[1:])
    settings = [None if s == "none" else float(s) for s in args.settings.split(",")]
    asyncio.run(measure(args.n, settings, args.knob))
    return 0


if __name__ == "__main__":
    sys.exit(main())
