"""Fourteenth round (issue 21): do "does an entry fit" and agreement features (``agreement_features``) tell a
right top entry from a wrong one better, with each blind set of ``calibration_heldout.FIT_SETS`` (RQ-RQ5) left out
in turn and on faq-val dev? Research.

Rows: ``python -m bench.research.calibration_heldout collect --dir /tmp/ret14-rows`` (records the twelfth and
fourteenth rounds' ``x_`` features). ``augment`` adds the features that need two searches of one message, joined
by ``x_qhash`` (and ``qid`` for the sets):

- ``x_adapt_dis``: a search the query adapter decided (``_adapted``) whose top entry differs from the same message's
  top searched without the adapter (dev: ``dev-hybrid`` against ``dev-adapted``; the sets: ``heldout-noadapter``
  against ``heldout``); 0 on every other search;
- ``x_fcov_share``: ``x_tcov_share`` (title fields), or ``x_qcov_share`` (every field) when the top entry has no
  question: the bench's KBs have questions on every entry or on none, so this is "title coverage, or all fields on
  an answer-only KB";
- ``x_spell_dis``: (diagnosis only; ``questions`` alone has both runs) the typed message's top differs from the
  same message's top with every mark removed.

``--diag`` prints each candidate's rate (or mean) among right top entries, wrong ones and unanswerable searches on
the sets (typed) and on dev; otherwise each ``--variants`` entry is judged as ``separation_fit`` does (``by_set``:
each set left out; ``--dev``: each dev shape left out), one JSON line per variant.

    PYTHONPATH=$PWD python -m bench.research.agreement_fit --diag
    PYTHONPATH=$PWD python -m bench.research.agreement_fit --variants JSON [--dev]
    PYTHONPATH=$PWD python -m bench.research.agreement_fit --nested '["x_qcov_share", ...]'
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from bench.research.calibration_heldout import load
from bench.research.separation_fit import by_dev_shape, by_set, nested


def _key(r: dict, with_set: bool) -> tuple:
    f = r["features"]
    base = (r["shape"], r["run"], f.get("x_qhash"))
    return (r["set"], r.get("qid"), *base) if with_set else base


def augment(rows: dict) -> dict:
    """``x_adapt_dis`` on every row (and ``x_spell_dis`` on the sets' and dev's ``questions`` rows)."""
    for plain, adapted, with_set in (
        ("heldout-noadapter", "heldout", True),
        ("dev-hybrid", "dev-adapted", False),
    ):
        top = {_key(r, with_set): r["features"].get("x_top") for r in rows[plain]}
        for kind in (plain, adapted):
            for r in rows[kind]:
                f = r["features"]
                other = top.get(_key(r, with_set))
                f["x_adapt_dis"] = float(
                    bool(f.get("_adapted")) and other is not None and other != f.get("x_top")
                )
    for kind_rows in rows.values():  # title coverage, or all fields for an entry without a question
        for r in kind_rows:
            f = r["features"]
            if "x_tcov_share" in f:
                f["x_fcov_share"] = f["x_qcov_share"] if f.get("no_question") else f["x_tcov_share"]
    for kind in rows:
        by_id: dict[tuple, object] = {}
        for r in rows[kind]:
            if r["shape"] == "questions" and r["run"] in ("nodiac", "unanswerable_nodiac"):
                by_id[
                    (r.get("set"), r.get("qid"), r["run"].replace("nodiac", "").rstrip("_") or "answerable")
                ] = r["features"].get("x_top")
        for r in rows[kind]:
            if r["shape"] == "questions" and r["run"] in ("answerable", "unanswerable") and "qid" in r:
                other = by_id.get((r.get("set"), r.get("qid"), r["run"]))
                r["features"]["x_spell_dis"] = float(
                    other is not None and other != r["features"].get("x_top")
                )
    return rows


CANDIDATES = (
    "x_adapt_dis",
    "x_spell_dis",
    "x_qcov_best",
    "x_qcov_share",
    "x_keycov",
    "x_keycov_best",
    "x_nq",
    "x_nmatch",
    "x_nconflict",
    "x_srank",
    "x_drank",
    "query_cov",
)


def diag(rows: dict) -> dict[str, object]:
    out: dict[str, object] = {}
    for kind in ("heldout", "dev-adapted"):
        typed = [r for r in rows[kind] if r["run"] in ("answerable", "unanswerable")]
        groups = {
            "right": [r for r in typed if r["run"] == "answerable" and r["right"]],
            "wrong": [r for r in typed if r["run"] == "answerable" and not r["right"]],
            "unanswerable": [r for r in typed if r["run"] == "unanswerable"],
        }
        adapted = {g: [r for r in v if r["features"].get("_adapted")] for g, v in groups.items()}
        out[kind] = {
            name: {
                g: round(float(np.mean([r["features"].get(name, 0.0) for r in v])), 4) if v else None
                for g, v in (adapted if name == "x_adapt_dis" else groups).items()
            }
            for name in CANDIDATES
        }
        out[kind]["n"] = {g: len(v) for g, v in groups.items()}
        out[kind]["n_adapted"] = {g: len(v) for g, v in adapted.items()}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/ret14-rows"))
    ap.add_argument("--variants", default="")
    ap.add_argument("--dev", action="store_true")
    ap.add_argument("--diag", action="store_true")
    ap.add_argument(
        "--nested", default="", help="a JSON list of extra features: separation_fit's nested choice"
    )
    args = ap.parse_args()
    rows = augment(load(args.dir))
    if args.diag:
        print(json.dumps(diag(rows), indent=1))
        return 0
    if args.nested:
        print(json.dumps(nested(rows, json.loads(args.nested))))
        return 0
    for variant in json.loads(args.variants):
        res = by_dev_shape(rows, variant) if args.dev else by_set(rows, variant)
        print(json.dumps({"variant": variant, **res}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
