"""Blood-glucose readings in a message ("đường huyết 2,5", "đo đường 40 mg", "glucose 33 mmol/l").

A number counts when it follows a glucose word within a few words. Its unit is read when written; a bare
value above 35 is taken as mg/dL (no mmol/L reading is that high and no mg/dL reading that low is survivable
without symptoms), and converted (1 mmol/L = 18 mg/dL). The thresholds live in the rules file.
"""

from __future__ import annotations

import re

from engine.text import fold
from engine.triage.normalize import strip_invisible
from engine.triage.rules import GlucoseRule, Hit

# Up to five short words between the glucose word and the number ("đường huyết sáng nay là 2,8"), none of
# them a word that makes the number something else ("type 2", "10 năm"); the unit, when written, after it.
_READING = re.compile(
    r"^(?:\s*[:=]?\s*(?!type|tuyp|typ|loai|nam|thang|tuan|ngay|gio|tieng|lan|tuoi)[a-z]+){0,5}\s*[:=]?\s*"
    r"(?<![a-z\d.,])(\d{1,3}(?:[.,]\d{1,2})?)(?![\d])(?!\s*[(:])\s*(mmol|mg|mm)?"
    r"(?!\s*(?:nam|thang|tuan|ngay|gio|tieng|lan|tuoi|vien|kg|cm|%|phut|don vi|ui|u\b))"
)
_WINDOW = 50  # characters after the glucose word in which the reading is looked for


def glucose_readings(text: str, rule: GlucoseRule) -> list[float]:
    """Every glucose reading in ``text``, in mmol/L."""
    folded = fold(strip_invisible(text))
    values: list[float] = []
    for word in rule.words.finditer(folded):
        window = folded[word.end() : word.end() + _WINDOW]
        m = _READING.search(window)
        if m is None:
            continue
        raw = m.group(1)
        value = float(raw.replace(",", "."))
        unit = m.group(2) or ""
        if not unit and raw.isdigit() and value < 2:  # "glucose 1 (lúc đói)" is a label, not a reading
            continue
        if unit == "mg" or (not unit and value > 35):
            value /= 18.0
        values.append(value)
    return values


def glucose_hits(text: str, rule: GlucoseRule) -> dict[str, list[Hit]]:
    """Readings as rule hits: very low → hypoglycaemia; low → a hypoglycaemia symptom (it needs a severity
    sign too: "ăn kẹo rồi vẫn run"); high → a hyperglycaemia symptom; extreme → hyperglycaemia on its own."""
    hits: dict[str, list[Hit]] = {}
    for value in glucose_readings(text, rule):
        shown = f"đường huyết {value:.1f} mmol/L"
        if value < rule.low_below_mmol:
            hits.setdefault("hypoglycaemia", []).append(Hit("hypoglycaemia", "alone", shown))
        elif rule.symptom_below_mmol is not None and value < rule.symptom_below_mmol:
            hits.setdefault("hypoglycaemia", []).append(Hit("hypoglycaemia", "symptom", shown))
        elif value >= rule.extreme_from_mmol:
            hits.setdefault("hyperglycaemia", []).append(Hit("hyperglycaemia", "alone", shown))
        elif value >= rule.high_from_mmol:
            hits.setdefault("hyperglycaemia", []).append(Hit("hyperglycaemia", "symptom", shown))
    return hits
