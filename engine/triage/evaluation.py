"""Measuring triage on labelled messages: recall per category, false alarms, and the misses themselves.

Labelled JSONL rows: ``{"text", "emergency": bool, "category": id or ""}``. Used by the tests (the gates),
by ``make bench`` (the figures) and by ``python -m engine.triage eval FILE`` (a reviewer's look).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.triage import RuleSet, triage


def load_labelled(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(slots=True)
class Report:
    emergencies: int = 0
    caught: int = 0
    ordinary: int = 0
    alarms: int = 0
    per_category: dict[str, tuple[int, int]] = field(default_factory=dict)  # id -> (caught, total)
    missed: list[dict[str, Any]] = field(default_factory=list)
    false_alarms: list[dict[str, Any]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.caught / self.emergencies if self.emergencies else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return self.alarms / self.ordinary if self.ordinary else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "emergencies": self.emergencies,
            "caught": self.caught,
            "recall": round(self.recall, 4),
            "ordinary": self.ordinary,
            "false_alarms": self.alarms,
            "false_alarm_rate": round(self.false_alarm_rate, 4),
            "per_category": {k: {"caught": c, "total": t} for k, (c, t) in sorted(self.per_category.items())},
        }


def evaluate(rows: list[dict[str, Any]], rules: RuleSet | None = None) -> Report:
    report = Report()
    caught_by: Counter[str] = Counter()
    total_by: Counter[str] = Counter()
    for row in rows:
        verdict = triage(row["text"], rules)
        if row["emergency"]:
            report.emergencies += 1
            cat = row.get("category") or "?"
            total_by[cat] += 1
            if verdict.is_emergency:
                report.caught += 1
                caught_by[cat] += 1
            else:
                report.missed.append(row)
        else:
            report.ordinary += 1
            if verdict.is_emergency:
                report.alarms += 1
                report.false_alarms.append({**row, "found": list(verdict.categories)})
    report.per_category = {cat: (caught_by[cat], n) for cat, n in total_by.items()}
    return report
