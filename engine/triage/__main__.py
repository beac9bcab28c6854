"""``python -m engine.triage TEXT`` shows the verdict on one message; ``python -m engine.triage eval FILE
[FRAGMENT.toml ...]`` measures a labelled JSONL file with the rules alone (optionally with extra rule fragments
appended); ``python -m engine.triage eval --product FILE`` with the rules and the trained model, as the product runs
(the product's own rules file: fragments and TRIAGE_RULES are not read then; the model is fitted first, about a minute
and a half).
``TRIAGE_RULES=path`` reads another copy of the rules file (a reviewer's draft) instead of the product's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from engine.triage import answer, default_model, parse_rules, triage
from engine.triage.evaluation import evaluate, load_labelled
from engine.triage.rules import RULES_FILE


def main(argv: list[str]) -> int:
    rules_text = Path(os.environ.get("TRIAGE_RULES") or RULES_FILE).read_text(encoding="utf-8")
    if len(argv) >= 2 and argv[0] == "eval":
        product = "--product" in argv
        argv = [a for a in argv if a != "--product"]
        for extra in argv[2:]:
            rules_text += "\n" + Path(extra).read_text(encoding="utf-8")
        rules = parse_rules(rules_text)
        if product:
            default_model().warm_up(wait=True)
        report = evaluate(load_labelled(Path(argv[1])), None if product else rules)
        for cat, (caught, total) in sorted(report.per_category.items()):
            print(f"{cat:<20} {caught:>4}/{total:<4}")
        print(f"recall {report.caught}/{report.emergencies} = {report.recall:.3f}")
        print(f"false alarms {report.alarms}/{report.ordinary} = {report.false_alarm_rate:.3f}")
        for row in report.missed:
            print(f"MISSED [{row.get('category')}] {row['text']}")
        for row in report.false_alarms:
            print(f"ALARM {row['found']} {row['text']}")
        return 0
    rules = parse_rules(rules_text)
    text = " ".join(argv) or sys.stdin.read()
    verdict = triage(text, rules)
    print(verdict.as_trace())
    if verdict.is_emergency:
        print(answer(verdict, rules=rules))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
