"""Retrieval on a held-out set written blind (issue 21): 460 patient messages for faq-val's KB that nobody tuning
the search has read (``bench/data/retrieval_heldout``, "RQ"; ``notes.md`` says how they were written).

Each of 400 messages was written for one corpus entry picked by a seeded draw (the entry's short question
summarises it); 60 more were written the same way for entries that are then removed from the KB, so the right
behaviour is to decline. Run on the question-style shapes of ``bench/retrieval_shapes.py`` (the faq-val corpus
as questions, with keywords, with noisy keywords): P@1, MRR@10, hit@10, answered share and precision when answered
on the 400, false answers on the 60 (their 60 entries removed), and the no-diacritics loss (P@1 as typed minus P@1
with every mark removed; 128 of the 460 were typed without marks already).

This set is measured, never tuned on: a change to retrieval is chosen on faq-val's dev half and this table is read
after. Prints a table and writes bench/results/retrieval_heldout.json; skipped when faq-val is not there.

    python -m bench retrieval_heldout
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import sys
import time
from pathlib import Path

from bench.retrieval_shapes import (
    DATA,
    DiskCachedEmbedder,
    EvalQuery,
    add_query_adapter_option,
    build_shapes,
    false_answer_rate,
    format_table,
    ranking_metrics,
    run_queries,
    without,
)
from engine.retrieval.calibration import DEFAULT_THRESHOLD

HELD_OUT = Path(__file__).resolve().parent / "data" / "retrieval_heldout"
SHAPES = ("questions", "questions_kw", "noisy_kw")


def load_held_out(folder: Path = HELD_OUT) -> tuple[list[EvalQuery], list[EvalQuery]]:
    """The answerable queries (gold: the entry written for) and the unanswerable ones (gold: the entry removed)."""
    texts: dict[str, str] = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            texts[row["query_id"]] = row["query"]

    def read(name: str, column: str) -> list[EvalQuery]:
        with open(folder / name, encoding="utf-8", newline="") as fh:
            return [
                EvalQuery(r["query_id"], texts[r["query_id"]], r[column])
                for r in csv.DictReader(fh, delimiter="\t")
            ]

    return read("qrels.tsv", "code"), read("unanswerable.tsv", "removed_code")


async def evaluate(threshold: float, query_adapter: bool) -> dict[str, dict[str, float]]:
    answerable, unanswerable = load_held_out()
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    table: dict[str, dict[str, float]] = {}
    for name in SHAPES:
        started = time.perf_counter()
        entries = built[name].entries
        typed = await run_queries(entries, answerable, embedder, query_adapter=query_adapter)
        row = ranking_metrics(typed, threshold)
        removed = without(entries, {q.gold for q in unanswerable})
        declined = await run_queries(removed, unanswerable, embedder, query_adapter=query_adapter)
        row["false_answers"] = false_answer_rate(declined, threshold)
        if name == "questions":
            stripped = await run_queries(
                entries, answerable, embedder, strip=True, query_adapter=query_adapter
            )
            row["p@1_nodiac"] = ranking_metrics(stripped, threshold)["p@1"]
            row["nodiac_loss"] = round(row["p@1"] - row["p@1_nodiac"], 4)
        table[name] = row
        print(f"{name}: {json.dumps(row)} ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
    return table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    add_query_adapter_option(ap)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "retrieval_heldout.json"
    )
    args = ap.parse_args(sys.argv[1:])
    if not (DATA / "corpus.jsonl").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    table = asyncio.run(evaluate(args.threshold, args.query_adapter))
    print(f"held-out RQ (400 answerable, 60 unanswerable) threshold={args.threshold}")
    print(format_table(table))
    args.out.parent.mkdir(exist_ok=True)
    result = {"threshold": args.threshold, "query_adapter": args.query_adapter, "shapes": table}
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
