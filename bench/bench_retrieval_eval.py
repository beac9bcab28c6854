"""Retrieval quality on ``../shared/eval/faq-val`` through the production search path (``medbot eval
retrieval``'s code): hybrid, hybrid with every diacritic removed from the queries, sparse and dense, plus the
share answered and the precision of answers at SCORE_THRESHOLD. Skipped when the data is not there.

Writes bench/results/retrieval_eval.json. The first run embeds the 12,551 passages (minutes on 2 cores;
cached in the database afterwards); every run embeds the 1,326 long queries (twice: with and without marks).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot.evaluate import evaluate
from bot.runtime import open_runtime
from db.settings import load_settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "eval" / "faq-val"
RUNS = [("hybrid", False), ("hybrid", True), ("sparse", False), ("dense", False)]


async def _run() -> list[dict[str, object]]:
    runtime = await open_runtime(load_settings())
    try:
        return await evaluate(
            runtime, DATA / "corpus.jsonl", DATA / "queries.jsonl", DATA / "qrels.tsv", RUNS, k=10
        )
    finally:
        await runtime.close()


def main() -> int:
    if not (DATA / "corpus.jsonl").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    rows = asyncio.run(_run())
    print(
        f"{'mode':<24} {'P@1':>6} {'MRR@10':>7} {'hit@10':>7} {'answered':>9} {'precision':>10} {'ms p50':>8}"
    )
    for r in rows:
        print(
            f"{r['mode']!s:<24} {r['p@1']:>6} {r['mrr@10']:>7} {r['hit@10']:>7} {r['answered']:>9} "
            f"{r['precision_answered']:>10} {r['ms_per_query_p50']:>8}"
        )
    out = Path(__file__).resolve().parent / "results" / "retrieval_eval.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=2, ensure_ascii=False))
    print(f"results written to {out}")
    return 0
