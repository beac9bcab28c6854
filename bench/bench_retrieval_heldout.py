"""Retrieval on held-out sets written blind (issue 21): patient messages for faq-val's KB that nobody tuning the
search has read, each set in its own folder under ``bench/data`` (``retrieval_heldout``, "RQ";
``retrieval_heldout_rq2``, "RQ2"; ``retrieval_heldout_rq3``, "RQ3"; ``retrieval_heldout_rq4``, "RQ4";
``retrieval_heldout_rq5``, "RQ5"; ``retrieval_heldout_rq6``, "RQ6"; ``retrieval_heldout_rq7``, "RQ7";
``retrieval_heldout_rq8``, "RQ8"; each folder's ``notes.md`` says how it was written).

In each set 400 messages were written for one corpus entry each, picked by a seeded draw (the entry's short
question summarises it); 60 more were written the same way for entries that are then removed from the KB, so the
right behaviour is to decline. Run on the question-style shapes of ``bench/retrieval_shapes.py`` (the faq-val corpus
as questions, with keywords, with noisy keywords): P@1, MRR@10, hit@10, answered share and precision when answered
on the answerable messages, false answers on the unanswerable ones (their entries removed), and the no-diacritics
loss (P@1 as typed minus P@1 with every mark removed). Every set present is measured, then all of them pooled
message by message ("all").

faq-val's KB is a forum FAQ with many entries that ask the same question in other words; removing one entry leaves
its twin, and answering with the twin is right, so "false answers" overstates the search's errors. A set may name,
in ``same_question.tsv``, each removed entry's twins as judged by a reader who saw only the corpus (never the
search's answers); the unanswerable messages are then run a second time with the twins removed too, and that run's
rate is the column "f.ans.twin" (``false_answers_twins``). "false.ans" is kept as it was measured, one entry removed.

These sets are measured, never tuned on: a change to retrieval is chosen on faq-val's dev half and this table is
read after. Prints a table per set and writes bench/results/retrieval_heldout.json; skipped when faq-val is not
there.

    python -m bench retrieval_heldout [--set RQ2]
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
    QueryOutcome,
    Shape,
    add_query_adapter_option,
    build_shapes,
    false_answer_rate,
    format_table,
    load_twin_map,
    ranking_metrics,
    run_queries,
    without,
)
from engine.retrieval.calibration import DEFAULT_THRESHOLD

HELD_OUT = Path(__file__).resolve().parent / "data" / "retrieval_heldout"
# Every blind set, by the name the docs give it; a set whose folder is absent is not measured.
HELD_OUT_SETS = {
    "RQ": HELD_OUT,
    "RQ2": HELD_OUT.with_name("retrieval_heldout_rq2"),
    "RQ3": HELD_OUT.with_name("retrieval_heldout_rq3"),
    "RQ4": HELD_OUT.with_name("retrieval_heldout_rq4"),
    "RQ5": HELD_OUT.with_name("retrieval_heldout_rq5"),
    "RQ6": HELD_OUT.with_name("retrieval_heldout_rq6"),
    "RQ7": HELD_OUT.with_name("retrieval_heldout_rq7"),
    "RQ8": HELD_OUT.with_name("retrieval_heldout_rq8"),
}
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


def load_twins(folder: Path) -> set[str]:
    """The codes of the entries that ask the same question as a removed one (``same_question.tsv``; none when the
    set has no such file)."""
    return set().union(*load_twin_map(folder / "same_question.tsv").values())


def metrics(outcomes: dict[str, list[QueryOutcome]], threshold: float) -> dict[str, float]:
    """One shape's row from its runs: "typed" (answerable, as written), "declined" (unanswerable, their entries
    removed), "declined_twins" (the same with their same-question twins removed too) when the set names twins and,
    for ``questions`` only, "stripped" (answerable, every mark removed)."""
    row = ranking_metrics(outcomes["typed"], threshold)
    row["false_answers"] = false_answer_rate(outcomes["declined"], threshold)
    if "declined_twins" in outcomes:
        row["false_answers_twins"] = false_answer_rate(outcomes["declined_twins"], threshold)
    if "stripped" in outcomes:
        row["p@1_nodiac"] = ranking_metrics(outcomes["stripped"], threshold)["p@1"]
        row["nodiac_loss"] = round(row["p@1"] - row["p@1_nodiac"], 4)
    return row


async def run_set(
    folder: Path, embedder: DiskCachedEmbedder, built: dict[str, Shape], query_adapter: bool
) -> dict[str, dict[str, list[QueryOutcome]]]:
    """Per shape, the per-message outcomes of one set's runs (see ``metrics``)."""
    answerable, unanswerable = load_held_out(folder)
    twins = load_twins(folder)
    runs: dict[str, dict[str, list[QueryOutcome]]] = {}
    for name in SHAPES:
        started = time.perf_counter()
        entries = built[name].entries
        gone = {q.gold for q in unanswerable}
        removed = without(entries, gone)
        runs[name] = {
            "typed": await run_queries(entries, answerable, embedder, query_adapter=query_adapter),
            "declined": await run_queries(removed, unanswerable, embedder, query_adapter=query_adapter),
        }
        if twins:
            runs[name]["declined_twins"] = await run_queries(
                without(entries, gone | twins), unanswerable, embedder, query_adapter=query_adapter
            )
        if name == "questions":
            runs[name]["stripped"] = await run_queries(
                entries, answerable, embedder, strip=True, query_adapter=query_adapter
            )
        print(f"{folder.name} {name} ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
    return runs


async def evaluate(
    sets: dict[str, Path], threshold: float, query_adapter: bool
) -> dict[str, dict[str, dict[str, float]]]:
    """Per set name (and "all", the sets pooled message by message when there are several), per shape, its row."""
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    runs = {name: await run_set(folder, embedder, built, query_adapter) for name, folder in sets.items()}
    tables = {
        name: {shape: metrics(outcomes, threshold) for shape, outcomes in per_shape.items()}
        for name, per_shape in runs.items()
    }
    if len(runs) > 1:
        # A run is pooled only when every set has it (twins are named by some sets only).
        pooled = {
            shape: {
                run: [o for per_shape in runs.values() for o in per_shape[shape][run]]
                for run in outcomes
                if all(run in per_shape[shape] for per_shape in runs.values())
            }
            for shape, outcomes in next(iter(runs.values())).items()
        }
        tables["all"] = {shape: metrics(outcomes, threshold) for shape, outcomes in pooled.items()}
    return tables


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    add_query_adapter_option(ap)
    ap.add_argument(
        "--set", choices=sorted(HELD_OUT_SETS), help="measure this set only (default: every set present)"
    )
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "retrieval_heldout.json"
    )
    args = ap.parse_args(sys.argv[1:])
    if not (DATA / "corpus.jsonl").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    sets = {name: folder for name, folder in HELD_OUT_SETS.items() if (folder / "queries.jsonl").is_file()}
    if args.set:
        sets = {args.set: HELD_OUT_SETS[args.set]}
    tables = asyncio.run(evaluate(sets, args.threshold, args.query_adapter))
    for name, table in tables.items():
        sizes = f"{table['questions']['n']} answerable"
        print(f"held-out {name} ({sizes}) threshold={args.threshold}")
        print(format_table(table))
    args.out.parent.mkdir(exist_ok=True)
    result = {"threshold": args.threshold, "query_adapter": args.query_adapter, "sets": tables}
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
