"""Measure blind triage sets once: rules alone and the product (rules + model), per set, with every miss and false
alarm written out for the lead to read (docs/triage.md, the held-out sections).

    python -m bench.research.triage_measure_blind OUT.txt SET.jsonl [SET.jsonl ...] [--data-folder .medbot]

Run it once per set, at a named commit, before any round has seen the set; a sealed set
(``tests/data/triage_sealed/*.jsonl.gz``) is read as it is, gzipped.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

from engine.triage import default_model, default_rules
from engine.triage.evaluation import Report, evaluate, load_labelled


def read_set(path: Path) -> list[dict[str, Any]]:
    if path.suffix != ".gz":
        return load_labelled(path)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("sets", type=Path, nargs="+")
    parser.add_argument("--data-folder", type=Path, default=Path(".medbot"))
    args = parser.parse_args()
    model = default_model()  # the one the product's triage() asks once it is ready
    model.warm_up(wait=True, data_folder=args.data_folder)
    lines: list[str] = []
    totals = {"product": Report(), "rules alone": Report()}
    for path in args.sets:
        name = path.name.split(".")[0]
        rows = read_set(path)
        product, alone = evaluate(rows), evaluate(rows, default_rules())
        lines += [f"MISS {name} {r['category']}: {r['text']}" for r in product.missed]
        lines += [f"FALSE {name} {r['found']}: {r['text']}" for r in product.false_alarms]
        print(
            f"{name}: product {product.caught}/{product.emergencies}, {product.alarms}/{product.ordinary}; "
            f"rules alone {alone.caught}, {alone.alarms}"
        )
        for key, report in (("product", product), ("rules alone", alone)):
            total = totals[key]
            total.emergencies += report.emergencies
            total.caught += report.caught
            total.ordinary += report.ordinary
            total.alarms += report.alarms
    product, alone = totals["product"], totals["rules alone"]
    print(
        f"all: product {product.caught}/{product.emergencies} ({product.recall:.2%}), "
        f"{product.alarms}/{product.ordinary} ({product.false_alarm_rate:.2%}); "
        f"rules alone {alone.caught}, {alone.alarms}; model {model.source}"
    )
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"misses and false alarms: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
