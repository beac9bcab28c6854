"""Retrieval on several KB shapes (issue 21): P@1, MRR@10, hit@10, answered share, precision when answered
and false answers on unanswerable queries per shape, on the TEST half of faq-val (see
``bench/retrieval_shapes.py`` for the shapes and the split), at the default answer threshold.

Prints a table and writes bench/results/retrieval_shapes.json. Skipped when faq-val is not there. The first
run embeds ~17k texts (minutes on a small machine; cached under .medbot/eval-cache afterwards).

    python -m bench retrieval_shapes            # what `make bench` runs
    python -m bench.bench_retrieval_shapes --split dev --threshold 0.6
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from bench.retrieval_shapes import DATA, SHAPES, evaluate_shapes, format_table
from engine.retrieval.calibration import DEFAULT_THRESHOLD


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test"), default="test")
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "retrieval_shapes.json")
    args = ap.parse_args(sys.argv[1:])
    if not (DATA / "corpus.jsonl").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    table, _ = asyncio.run(
        evaluate_shapes(args.split, args.threshold, shapes=args.shapes.split(","), log=lambda m: print(m, file=sys.stderr))
    )
    print(f"split={args.split} threshold={args.threshold}")
    print(format_table(table))
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(
        json.dumps({"split": args.split, "threshold": args.threshold, "shapes": table}, indent=2, ensure_ascii=False)
    )
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
