"""Emergency triage: recall per category on the held-out test set, false alarms on ordinary messages (every
labelled set's non-emergencies, and the 1,326 real forum messages of ``../shared/eval/faq-val``, each flag
labelled by hand in ``tests/data/triage_faqval_flags.jsonl``), and the latency of the check, which runs on every
inbound message, and how long a process takes to build the rules afresh and to load them as kept by an earlier
process (``engine/triage/compiled.py``).

Sets (docs/triage.md says who wrote each and how it was used):
- ``tests/data/triage_heldout.jsonl`` — the held-out test set: written by an author who never saw the rules,
  never tuned on, not learnt from;
- ``engine/triage/data/*.jsonl`` — the sets the rules were tuned on and the model learns from.

Each set is measured with the rules alone and with the rules OR the trained model (the product).

Writes bench/results/triage.json.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from engine.triage import alternation, default_model, default_rules, triage
from engine.triage.compiled import PatternStore
from engine.triage.evaluation import evaluate, load_labelled
from engine.triage.model import DATA_DIR
from engine.triage.rules import RULES_FILE, parse_rules

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
FAQ_VAL = ROOT.parent / "shared" / "eval" / "faq-val" / "queries.jsonl"
FLAGS = DATA / "triage_faqval_flags.jsonl"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rules_start_up() -> dict[str, float]:
    """Seconds to build the product's rules in a process with nothing kept, then in one that finds them kept."""
    text, code = RULES_FILE.read_text(encoding="utf-8"), Path(alternation.__file__)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        store = PatternStore(Path(folder), factoring_code=code)
        parse_rules(text, store=store)
        store.save()
        built = time.perf_counter() - started
        started = time.perf_counter()
        parse_rules(text, store=PatternStore(Path(folder), factoring_code=code))
        loaded = time.perf_counter() - started
    return {"rules_built_s": round(built, 2), "rules_loaded_s": round(loaded, 2)}


def main() -> int:
    rules = default_rules()
    model = default_model()
    started = time.perf_counter()
    model.warm_up(wait=True)
    fit_s = time.perf_counter() - started
    results: dict[str, object] = {"categories": len(rules.categories), "model_fit_s": round(fit_s, 2)}
    held_out = DATA / "triage_heldout.jsonl"  # absent between a freeze and the next blind set's measurement
    sets = {"held-out test": held_out} if held_out.is_file() else {}
    sets |= {f"tuning: {p.stem}": p for p in sorted(DATA_DIR.glob("*.jsonl"))}
    header = f"{'set':<22} {'emergencies':>11} {'rules':>7} {'+model':>7} {'recall':>7} {'ordinary':>9} {'alarms':>7} {'rate':>6}"
    print(header)
    for name, path in sets.items():
        rows = load_labelled(path)
        alone = evaluate(rows, rules)
        report = evaluate(rows)  # the product: rules OR model
        results[name] = report.as_dict() | {
            "rules_alone": alone.as_dict(),
            "missed": [r["text"] for r in report.missed],
            "false_alarms": [r["text"] for r in report.false_alarms],
        }
        print(f"{name:<22} {report.emergencies:>11} {alone.caught:>7} {report.caught:>7} {report.recall:>7.3f} "
              f"{report.ordinary:>9} {report.alarms:>7} {report.false_alarm_rate:>6.3f}")  # fmt: skip
    test = results.get("held-out test")
    if isinstance(test, dict):
        print("\nheld-out recall per category (rules OR model):")
        for cat, row in test["per_category"].items():
            print(f"  {cat:<18} {row['caught']:>3}/{row['total']:<3}")
        chat = [r["text"] for r in load_labelled(held_out)]
    else:  # no held-out file: the last two blind sets' chat messages, already tuned on, time the check
        chat = [r["text"] for name in ("dev57.jsonl", "dev58.jsonl") for r in load_labelled(DATA_DIR / name)]
    groups = {
        "chat messages (held-out set)" if isinstance(test, dict) else "chat messages (dev57 + dev58)": chat
    }
    if FAQ_VAL.is_file():
        queries = [
            json.loads(line) for line in FAQ_VAL.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
        labels = {r["query_id"]: r for r in load_labelled(FLAGS)}
        flagged = [q for q in queries if triage(q["query"]).is_emergency]
        unreviewed = [q["query_id"] for q in flagged if q["query_id"] not in labels]
        false = [
            q["query_id"]
            for q in flagged
            if q["query_id"] in labels and not labels[q["query_id"]]["emergency"]
        ]
        true = [
            q["query_id"] for q in flagged if q["query_id"] in labels and labels[q["query_id"]]["emergency"]
        ]
        results["faq-val"] = {
            "messages": len(queries), "flagged": len(flagged), "true_emergencies": true,
            "false_alarms": len(false), "false_alarm_rate": round(len(false) / len(queries), 4),
            "unreviewed": unreviewed,
        }  # fmt: skip
        print(f"\nfaq-val: {len(queries)} real messages, {len(flagged)} flagged: {len(true)} true emergencies, "
              f"{len(false)} false alarms ({len(false) / len(queries):.2%}), {len(unreviewed)} not reviewed")  # fmt: skip
        groups["forum messages (faq-val)"] = [q["query"] for q in queries]

    latency: dict[str, object] = {}
    results["latency_ms"] = latency
    print("\ncheck latency per message, uncached:")
    for group, texts in groups.items():
        lengths = [len(t) for t in texts]
        print(
            f"  {group}: {len(texts)} messages, mean {round(statistics.mean(lengths))} chars, max {max(lengths)}"
        )
        for label, use_model in (("rules alone", None), ("rules + model", model)):
            timings = []
            for _ in range(2):
                for text in texts:
                    t0 = time.perf_counter()
                    triage(text, rules, model=use_model)
                    timings.append((time.perf_counter() - t0) * 1000)
            row = {
                q: round(_percentile(timings, p), 3) for q, p in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
            }
            row["max"] = round(max(timings), 3)
            latency[f"{group}: {label}"] = row
            print(
                f"    {label:<14} p50 {row['p50']} ms, p95 {row['p95']} ms, p99 {row['p99']} ms, max {row['max']} ms"
            )
    print(f"model fitted in {fit_s:.2f} s (once per process, in the background at start-up)")
    start_up = rules_start_up()
    results |= start_up
    print(f"rules built in {start_up['rules_built_s']:.2f} s with nothing kept; loaded in "
          f"{start_up['rules_loaded_s']:.2f} s where an earlier process kept them")  # fmt: skip
    out = Path(__file__).resolve().parent / "results" / "triage.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
