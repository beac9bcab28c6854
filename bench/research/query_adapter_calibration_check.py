"""Is ``hybrid_adapted`` as conservative on unanswerable messages as ``hybrid``? (issue 21, fifth round;
research, not the product.)

Reads the calibration rows written by ``query_adapter_crossfit`` (``--rows``): dev, every shape, answerable,
unanswerable and unmarked runs, each row the top hit's features, whether it is right and the message's length.
``--baseline`` are the rows of ``query_adapter_crossfit --none`` (no adapter: what ``hybrid`` decides today).
For each candidate decision rule it prints, per shape at the default threshold, answered share / precision
when answered / false answers on the unanswerable run, for every message and for the messages of 20+ words
alone (the only ones ``hybrid_adapted`` decides):

- ``baseline``: the baseline rows decided by ``hybrid`` (the product without the adapter);
- ``product``: the adapter's rows, ``hybrid_adapted`` for 20+ words and ``hybrid`` for the others;
- ``refit ...``: ``hybrid_adapted`` refitted on the adapter's rows (logistic regression, ``C`` 3, every
  (shape, run) group weighted equally, unanswerable runs by ``w``), optionally on the long rows only.

    PYTHONPATH=$PWD python -m bench.research.query_adapter_calibration_check --rows R.json --baseline B.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from bench.research import retrieval_calibration_fit as calfit
from engine.retrieval.calibration import ADAPTED_MODE, COEFFICIENTS, DEFAULT_THRESHOLD

LONG = 20
Rule = tuple[tuple[float, ...], tuple[float, ...]]  # (coefficients for short messages, for long ones)


def probabilities(rows: list[dict], rule: Rule) -> np.ndarray:
    short, long = calfit.predict(rule[0], rows), calfit.predict(rule[1], rows)
    words = np.array([float(r["features"].get("_words", 0.0)) for r in rows])
    return np.where(words >= LONG, long, short)


def table(rows: list[dict], rule: Rule, long_only: bool = False) -> dict[str, str]:
    p = probabilities(rows, rule)
    out = {}
    for name in dict.fromkeys(str(r["shape"]) for r in rows):

        def pick(run: str, name: str = name) -> list[int]:
            return [
                i
                for i, r in enumerate(rows)
                if r["shape"] == name
                and r["run"] == run
                and (not long_only or r["features"].get("_words", 0.0) >= LONG)
            ]

        ans, un = pick("answerable"), pick("unanswerable")
        if not ans:
            continue
        said = [i for i in ans if p[i] >= DEFAULT_THRESHOLD]
        prec = np.mean([rows[i]["right"] for i in said]) if said else 0.0
        false = np.mean([p[i] >= DEFAULT_THRESHOLD for i in un]) if un else 0.0
        out[name] = f"{len(said) / len(ans):.3f}/{prec:.3f}/{false:.3f}"
    return out


def show(label: str, rows: list[dict], rule: Rule) -> None:
    for long_only in (False, True):
        cells = table(rows, rule, long_only)
        tag = "20+ words" if long_only else "all"
        print(f"{label:<40} {tag:<9} " + " ".join(f"{k}={v}" for k, v in cells.items()), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, required=True)
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--c", type=float, default=3.0)
    args = ap.parse_args()
    rows = json.loads(args.rows.read_text())
    base = json.loads(args.baseline.read_text())
    hybrid = COEFFICIENTS["hybrid"]
    print("answered / precision when answered / false answers, dev, threshold 0.5")
    show("baseline (no adapter, hybrid)", base, (hybrid, hybrid))
    show("adapter, hybrid for every message", rows, (hybrid, hybrid))
    show("adapter, product (hybrid_adapted 20+)", rows, (hybrid, COEFFICIENTS[ADAPTED_MODE]))
    long_rows = [r for r in rows if r["features"].get("_words", 0.0) >= LONG]
    for weight in (0.8, 0.9, 1.0, 1.1, 1.2):
        coef = calfit.fit(rows, args.c, weight)
        show(f"refit all rows, w {weight:g}", rows, (hybrid, coef))
        print(f"    coefficients: {json.dumps(coef)}")
        coef = calfit.fit(long_rows, args.c, weight)
        show(f"refit 20+ rows, w {weight:g}", rows, (hybrid, coef))
        print(f"    coefficients: {json.dumps(coef)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
