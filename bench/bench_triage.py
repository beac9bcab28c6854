"""Emergency triage: recall per category on the held-out test set, false alarms on ordinary messages (the test
and dev sets' non-emergencies, and the 1,326 real forum messages of ``../shared/eval/faq-val``, each flag
labelled by hand in ``tests/data/triage_faqval_flags.jsonl``), and the latency of the check, which runs on every
inbound message.

Writes bench/results/triage.json.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from engine.triage import default_rules, triage
from engine.triage.evaluation import evaluate, load_labelled

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
FAQ_VAL = ROOT.parent / "shared" / "eval" / "faq-val" / "queries.jsonl"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    rules = default_rules()
    results: dict[str, object] = {"categories": len(rules.categories)}
    sets = {"test (held out)": "triage_test.jsonl", "dev": "triage_dev.jsonl", "old (session 1)": "red_flags.jsonl"}
    print(f"{'set':<18} {'emergencies':>11} {'caught':>7} {'recall':>7} {'ordinary':>9} {'alarms':>7} {'rate':>6}")
    for name, file in sets.items():
        report = evaluate(load_labelled(DATA / file), rules)
        results[name] = report.as_dict() | {"missed": [r["text"] for r in report.missed],
                                            "false_alarms": [r["text"] for r in report.false_alarms]}  # fmt: skip
        print(f"{name:<18} {report.emergencies:>11} {report.caught:>7} {report.recall:>7.3f} {report.ordinary:>9} "
              f"{report.alarms:>7} {report.false_alarm_rate:>6.3f}")  # fmt: skip
    test = results["test (held out)"]
    assert isinstance(test, dict)
    print("\nheld-out recall per category:")
    for cat, row in test["per_category"].items():
        print(f"  {cat:<18} {row['caught']:>3}/{row['total']:<3}")

    texts = [r["text"] for r in load_labelled(DATA / "triage_test.jsonl")]
    if FAQ_VAL.is_file():
        queries = [json.loads(line) for line in FAQ_VAL.read_text(encoding="utf-8").splitlines() if line.strip()]
        labels = {r["query_id"]: r for r in load_labelled(DATA / "triage_faqval_flags.jsonl")}
        flagged = [q for q in queries if triage(q["query"], rules).is_emergency]
        unreviewed = [q["query_id"] for q in flagged if q["query_id"] not in labels]
        false = [q["query_id"] for q in flagged if q["query_id"] in labels and not labels[q["query_id"]]["emergency"]]
        true = [q["query_id"] for q in flagged if q["query_id"] in labels and labels[q["query_id"]]["emergency"]]
        results["faq-val"] = {
            "messages": len(queries), "flagged": len(flagged), "true_emergencies": true,
            "false_alarms": len(false), "false_alarm_rate": round(len(false) / len(queries), 4),
            "unreviewed": unreviewed,
        }  # fmt: skip
        print(f"\nfaq-val: {len(queries)} real messages, {len(flagged)} flagged: {len(true)} true emergencies, "
              f"{len(false)} false alarms ({len(false) / len(queries):.2%}), {len(unreviewed)} not reviewed")  # fmt: skip
        texts += [q["query"] for q in queries]

    triage("khởi động")  # rules compiled, caches warm
    timings = []
    for _ in range(3):
        for text in texts:
            t0 = time.perf_counter()
            triage(text, rules)
            timings.append((time.perf_counter() - t0) * 1000)
    lengths = [len(t) for t in texts]
    results["latency_ms"] = {
        "messages": len(timings), "mean_chars": round(statistics.mean(lengths)), "max_chars": max(lengths),
        "p50": round(_percentile(timings, 0.5), 3), "p95": round(_percentile(timings, 0.95), 3),
        "p99": round(_percentile(timings, 0.99), 3), "max": round(max(timings), 3),
    }  # fmt: skip
    lat = results["latency_ms"]
    assert isinstance(lat, dict)
    print(f"\ncheck latency over {lat['messages']} messages (mean {lat['mean_chars']} chars, max {lat['max_chars']}): "
          f"p50 {lat['p50']} ms, p95 {lat['p95']} ms, p99 {lat['p99']} ms, max {lat['max']} ms")  # fmt: skip
    out = Path(__file__).resolve().parent / "results" / "triage.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
