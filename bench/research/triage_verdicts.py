"""Every triage verdict, text by text: what a rules change is judged with.

    python -m bench.research.triage_verdicts OUT.tsv [--product [--data-folder .medbot]] [--no-held-out]

Writes one line per text — the file it comes from, the categories found ("-" for none), the text (a line break in
it written " / ") — over every labelled set (``engine/triage/data/*.jsonl``), the rule authors' rows
(``tests/data/triage_rule_rows_r*.jsonl``), the held-out test (left out with ``--no-held-out``: a rule author who must
not read it runs it so) and faq-val's 1,326 queries (``../shared/eval/faq-val``, when present). Rules alone by default, which is what a rules change moves;
``--product`` adds the trained model (fitted, or loaded from ``--data-folder``'s cache). Run it before and after a
change and ``diff`` the two files: each line that differs is a verdict that moved (every round since 35 was checked
this way: no emergency lost, no false alarm added anywhere).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.triage import default_model, default_rules, triage
from engine.triage.evaluation import load_labelled
from engine.triage.model import DATA_DIR

ROOT = Path(__file__).resolve().parents[2]
TESTS_DATA = ROOT / "tests" / "data"
HELD_OUT = TESTS_DATA / "triage_heldout.jsonl"
FAQ_VAL = ROOT.parent / "shared" / "eval" / "faq-val" / "queries.jsonl"


def texts(*, held_out: bool) -> list[tuple[str, str]]:
    """(source, text) for every text the verdicts are read on, in a fixed order."""
    files = sorted(DATA_DIR.glob("*.jsonl")) + sorted(TESTS_DATA.glob("triage_rule_rows_r*.jsonl"))
    if held_out and HELD_OUT.is_file():
        files.append(HELD_OUT)
    out = [(path.name, row["text"]) for path in files for row in load_labelled(path)]
    if FAQ_VAL.is_file():
        lines = FAQ_VAL.read_text(encoding="utf-8").splitlines()
        out += [("faq-val", json.loads(line)["query"]) for line in lines if line.strip()]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the file to write (one tab-separated line per text)")
    parser.add_argument(
        "--product", action="store_true", help="rules and the trained model, as the product runs"
    )
    parser.add_argument("--data-folder", type=Path, help="where the fitted model is cached (MEDBOT_DATA_DIR)")
    parser.add_argument("--no-held-out", action="store_true", help="leave the held-out test out")
    args = parser.parse_args()
    rules = None if args.product else default_rules()
    if args.product:
        default_model().warm_up(wait=True, data_folder=args.data_folder)
    lines = [
        f"{source}\t{','.join(triage(text, rules).categories) or '-'}\t{text.replace(chr(10), ' / ')}"
        for source, text in texts(held_out=not args.no_held_out)
    ]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    flagged = sum(1 for line in lines if line.split("\t")[1] != "-")
    print(
        f"{len(lines)} texts, {flagged} read as an emergency ({'product' if args.product else 'rules alone'}) -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
