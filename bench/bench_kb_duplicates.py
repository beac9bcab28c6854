"""How long the near-duplicate query (``db.kb_duplicates.near_duplicates``) takes on faq-val's KB.

faq-val's 12.5k entries (their questions, as the ``questions`` shape of ``bench/retrieval_shapes.py``) are loaded
into role ``bench_duplicates`` of the benchmarks' database (``medbot_bench`` on the development server), with the product embedder's
passage vectors (the research disk cache, ``.medbot/eval-cache``: texts not cached yet are embedded once), and
the query runs on the whole role and on its first 500 and 2,000 entries (a clinic's KB is a few hundred), with
each plan: the exact neighbour search (what a role of up to ``EXACT_MAX`` entries gets) and the HNSW index. The
pairs found are compared with the exact count (every pair of vectors, numpy).

    PYTHONPATH=$PWD python bench/bench_kb_duplicates.py [--repeat 3]

Prints a table and writes bench/results/kb_duplicates.json.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_ask import bench_url
from bench.output import write_json
from bench.retrieval_shapes import DiskCachedEmbedder, build_shapes
from db import kb, migrate
from db.kb_duplicates import DUPLICATE_COSINE, near_duplicates
from db.pool import create_pool
from engine.embedding import passage_text

ROLE = "bench_duplicates"
SIZES = (500, 2000, 0)  # 0: the whole KB
RESULTS = Path(__file__).resolve().parent / "results" / "kb_duplicates.json"


def exact_pairs(vectors: np.ndarray, block: int = 2000) -> int:
    """Every pair of ``vectors`` with a cosine at least the cut (numpy, all against all, a block at a time)."""
    v = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    found = 0
    for start in range(0, len(v), block):
        sims = v[start : start + block] @ v.T
        rows, cols = np.nonzero(sims >= DUPLICATE_COSINE)
        found += int(np.count_nonzero(cols > rows + start))  # each pair once, never an entry with itself
    return found


async def run(repeat: int) -> list[dict[str, Any]]:
    entries = build_shapes()["questions"].entries
    embedder = DiskCachedEmbedder()
    vectors = embedder.passage_vectors([passage_text(e.question, e.answer) for e in entries])
    url = await bench_url()
    await migrate.upgrade(url)
    pool = await create_pool(url, max_size=2)
    rows: list[dict[str, Any]] = []
    print(f"near-duplicate pairs (cosine >= {DUPLICATE_COSINE}) of one role, seconds")
    print(f"{'entries':>7} {'plan':>6} {'pairs':>6} {'exact':>6} {'best_s':>8} {'worst_s':>8}")
    try:
        for size in SIZES:
            n = size or len(entries)
            await kb.replace_role(pool, ROLE, entries[:n], vectors[:n], embedder.name)
            await pool.execute("VACUUM ANALYZE kb_entries")
            for plan, role_size in (("exact", 0), ("hnsw", 10**9)):  # role_size forces the plan
                if plan == "exact" and n > 2000:
                    continue  # one exact scan of the role per entry: minutes at 12.5k
                times = []
                for _ in range(repeat):
                    t = time.perf_counter()
                    found = await near_duplicates(pool, ROLE, model=embedder.name, role_size=role_size)
                    times.append(time.perf_counter() - t)
                rows.append(
                    {
                        "entries": n,
                        "plan": plan,
                        "pairs": found.total,
                        "best_s": round(min(times), 3),
                        "worst_s": round(max(times), 3),
                    }
                )
                rows[-1]["exact_pairs"] = exact_pairs(vectors[:n])
                r = rows[-1]
                print(
                    f"{n:>7} {plan:>6} {r['pairs']:>6} {r['exact_pairs']:>6} {r['best_s']:>8} {r['worst_s']:>8}",
                    flush=True,
                )
        await kb.delete_role(pool, ROLE)
    finally:
        await pool.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_kb_duplicates")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv if argv is not None else sys.argv[1:])
    rows = asyncio.run(run(args.repeat))
    write_json(RESULTS, {"cut": DUPLICATE_COSINE, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
