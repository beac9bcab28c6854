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

from engine.triage import default_model, default_rules, triage


def read_set(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("sets", type=Path, nargs="+")
    parser.add_argument("--data-folder", type=Path, default=Path(".medbot"))
    args = parser.parse_args()
    model = default_model()
    model.warm_up(wait=True, data_folder=args.data_folder)
    rules = default_rules()
    lines: list[str] = []
    total = {"e": 0, "caught": 0, "rules_caught": 0, "o": 0, "alarms": 0, "rules_alarms": 0}
    for path in args.sets:
        name = path.name.split(".")[0]
        counts = dict.fromkeys(total, 0)
        for row in read_set(path):
            product = triage(row["text"], rules, model=model).is_emergency
            alone = triage(row["text"], rules, model=None).is_emergency
            if row["emergency"]:
                counts["e"] += 1
                counts["caught"] += product
                counts["rules_caught"] += alone
                if not product:
                    lines.append(f"MISS {name} {row['category']}: {row['text']}")
            else:
                counts["o"] += 1
                counts["alarms"] += product
                counts["rules_alarms"] += alone
                if product:
                    lines.append(f"FALSE {name}: {row['text']}")
        print(
            f"{name}: product {counts['caught']}/{counts['e']}, {counts['alarms']}/{counts['o']}; "
            f"rules alone {counts['rules_caught']}, {counts['rules_alarms']}"
        )
        for key, value in counts.items():
            total[key] += value
    print(
        f"all: product {total['caught']}/{total['e']} ({total['caught'] / total['e']:.2%}), "
        f"{total['alarms']}/{total['o']} ({total['alarms'] / total['o']:.2%}); "
        f"rules alone {total['rules_caught']}, {total['rules_alarms']}; model {model.source}"
    )
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"misses and false alarms: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
