"""Does an emergency stay an emergency when a neutral sentence is added around it? A metamorphic probe of triage.

Every blind pair since round 19 was caught by its own round's rules and then missed in a new way by the next writers,
and many of those misses were not new signs but new *surroundings*: a quarrel before "tức ngực", a cemetery before
a snake bite, "lướt tiktok" before an electric shock. This probe measures that fragility directly, with no new
labels: it takes emergencies the product catches in the labelled sets (a seeded sample), adds one neutral sentence —
a greeting, an apology, the distance to a hospital, the occasion or place ("nhà có đám giỗ", "vừa đi chùa về"), a
quarrel just before, a worried ending ("giờ em phải làm sao?") — and counts how many are no longer caught. None of
these sentences changes what a triage nurse would do; each one that loses an emergency is a context the rules let
hide a present sign.

    python -m bench.research.triage_context_probe [--sample 1500] [--seed 7] [--show 5]
    python -m bench.research.triage_context_probe --sentences bench/data/triage_context_heldout.txt --sample 400

Prints, per added sentence, the emergencies lost (rules alone and rules + model) with a few examples, and writes
``bench/results/triage_context_probe.json``. The built-in sentences were written with the mechanism in view (and the
rules were then made to pass them); ``--sentences`` takes a file of sentences written blind by someone who never saw
the rules, one per line, each added both before and after every sampled emergency of its language, and writes
``bench/results/triage_context_probe_<file stem>.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from engine.triage import _triage, default_model, default_rules
from engine.triage.augment import CONTEXTS, applies, file_contexts, with_context
from engine.triage.evaluation import load_labelled

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "engine" / "triage" / "data"
RESULTS = ROOT / "bench" / "results" / "triage_context_probe.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=1500, help="emergencies drawn from the labelled sets")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=5, help="examples printed per sentence")
    parser.add_argument("--sentences", type=Path, help="a file of neutral sentences, one per line")
    args = parser.parse_args()
    contexts = file_contexts(args.sentences) if args.sentences else CONTEXTS
    rules, model = default_rules(), default_model()
    model.warm_up(wait=True)
    emergencies = sorted(
        {
            row["text"]
            for path in sorted(DATA.glob("dev*.jsonl"))
            for row in load_labelled(path)
            if row["emergency"]
        }
    )
    sample = random.Random(args.seed).sample(emergencies, min(args.sample, len(emergencies)))
    started = time.perf_counter()
    caught_alone = [t for t in sample if _triage(t, rules, None).is_emergency]
    caught_product = [t for t in sample if _triage(t, rules, model).is_emergency]
    print(
        f"{len(sample)} emergencies drawn from {len(emergencies)} in the dev sets; caught as written: rules alone "
        f"{len(caught_alone)}, rules + model {len(caught_product)}"
    )
    rows = []
    tried = 0
    for name, vi, en, where in contexts:
        alone = [t for t in caught_alone if applies(t, vi, en)]
        product = [t for t in caught_product if applies(t, vi, en)]
        tried += len(product)
        lost_alone = [
            t for t in alone if not _triage(with_context(t, vi, en, where), rules, None).is_emergency
        ]
        lost = [t for t in product if not _triage(with_context(t, vi, en, where), rules, model).is_emergency]
        rows.append(
            dict(
                context=name,
                sentence=vi,
                where=where,
                tried=len(product),
                lost_rules_alone=len(lost_alone),
                lost=len(lost),
                examples=lost,
            )
        )
        if args.sentences and not lost:
            continue
        print(f"{name:22} {where:6} lost: rules alone {len(lost_alone):4}, rules + model {len(lost):4}")
        for text in lost[: args.show]:
            print(f"    {with_context(text, vi, en, where)[:160]}")
    total = sum(r["lost"] for r in rows)
    print(
        f"rules + model: {total} losses over {tried} messages with a sentence added ({len(contexts)} sentence "
        f"placements; {total / max(tried, 1):.2%}); rules alone {sum(r['lost_rules_alone'] for r in rows)}; "
        f"{time.perf_counter() - started:.0f} s"
    )
    results = RESULTS.with_name(f"{RESULTS.stem}_{args.sentences.stem}.json") if args.sentences else RESULTS
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(
        json.dumps(
            {
                "sample": len(sample),
                "seed": args.seed,
                "caught": len(caught_product),
                "sentences": str(args.sentences or "built-in"),
                "lost": total,
                "tried": tried,
                "contexts": rows,
            },
            ensure_ascii=False,
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
