"""The number rerank's window and margin on faq-val dev and RQ-RQ4 (issue 21, thirteenth round; research).

For each variant (``off``, or window x margin of ``engine.retrieval.numbers.rerank``): faq-val dev's shapes and
the blind sets RQ-RQ4 (never RQ5) through the production search with the shipped calibration, one JSON line per
(variant, set, shape): P@1, MRR@10, hit@10, answered / precision when answered / false answers at p >= 0.5, and how
many searches the rerank changed (``moved``: answerable typed searches whose top entry changed; ``fixed`` /
``broke``: of those, how many now / no longer have the gold first).

    python -m bench.research.number_rerank --variants off 3:0.15 5:0.3 > /tmp/ret13/variants.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys

from bench.bench_retrieval_heldout import HELD_OUT_SETS, load_held_out
from bench.retrieval_shapes import (
    QUESTION_STYLE,
    SHAPES,
    DiskCachedEmbedder,
    QueryOutcome,
    build_shapes,
    false_answer_rate,
    ranking_metrics,
    run_queries,
    without,
)
from engine.retrieval import search as search_mod
from engine.retrieval.calibration import DEFAULT_THRESHOLD

FIT_SETS = ("RQ", "RQ2", "RQ3", "RQ4")  # RQ5 is the judge: never read here


def _set_variant(name: str) -> None:
    if name == "off":
        search_mod.NUMBER_RERANK = False
        return
    window, margin = name.split(":")
    search_mod.NUMBER_RERANK = True
    search_mod.NUMBER_WINDOW = int(window)
    search_mod.NUMBER_MARGIN = math.inf if margin == "inf" else float(margin)


def _row(typed: list[QueryOutcome], declined: list[QueryOutcome], base: list[QueryOutcome] | None) -> dict:
    row = ranking_metrics(typed, DEFAULT_THRESHOLD)
    row["false_answers"] = false_answer_rate(declined, DEFAULT_THRESHOLD)
    if base is not None:
        changed = [(o, b) for o, b in zip(typed, base, strict=True) if o.top != b.top]
        row["moved"] = len(changed)
        row["fixed"] = sum(o.rank == 1 for o, _ in changed)
        row["broke"] = sum(b.rank == 1 for _, b in changed)
    return row


async def main(variants: list[str], shapes: list[str], sets: list[str]) -> None:
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    base: dict[tuple[str, str], list[QueryOutcome]] = {}
    for variant in ["off", *[v for v in variants if v != "off"]]:
        _set_variant(variant)
        jobs = []
        for name in shapes:
            qs = built[name].queries["dev"]
            jobs.append(("dev", name, built[name].entries, qs, qs))
        for set_name in sets:
            answerable, unanswerable = load_held_out(HELD_OUT_SETS[set_name])
            for name in QUESTION_STYLE:
                jobs.append((set_name, name, built[name].entries, answerable, unanswerable))
        for set_name, name, entries, answerable, unanswerable in jobs:
            typed = await run_queries(entries, answerable, embedder, query_adapter=True)
            removed = without(entries, {q.gold for q in unanswerable})
            declined = await run_queries(removed, unanswerable, embedder, query_adapter=True)
            key = (set_name, name)
            if variant == "off":
                base[key] = typed
            row = _row(typed, declined, None if variant == "off" else base[key])
            if name == "questions":
                stripped = await run_queries(entries, answerable, embedder, strip=True, query_adapter=True)
                row["p@1_nodiac"] = ranking_metrics(stripped, DEFAULT_THRESHOLD)["p@1"]
            print(json.dumps({"variant": variant, "set": set_name, "shape": name, **row}), flush=True)
            print(f"{variant} {set_name} {name}", file=sys.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", nargs="+", default=["off", "3:0.15"])
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=SHAPES)
    ap.add_argument("--sets", nargs="+", default=list(FIT_SETS), choices=FIT_SETS)
    args = ap.parse_args()
    asyncio.run(main(args.variants, args.shapes, args.sets))
