"""Blood-glucose readings in a message ("đường huyết 2,5", "đo đường 40 mg", "glucose 33 mmol/l").

A number counts when it follows a glucose word within a few words. Its unit is read when written; a bare
value above 35 is taken as mg/dL (no mmol/L reading is that high and no mg/dL reading that low is survivable
without symptoms), and converted (1 mmol/L = 18 mg/dL). A number said in words, as dictation writes it ("hai
chấm tám"), is read as digits first (``normalize.read_spoken_numbers``). The thresholds live in the rules file.
"""

from __future__ import annotations

import re

from engine.text import fold
from engine.triage.normalize import read_spoken_numbers, strip_invisible
from engine.triage.rules import GlucoseRule, Hit

# Up to five short words between the glucose word and the number ("đường huyết sáng nay là 2,8"), none of
# them a word that makes the number something else ("type 2", "10 năm"); the unit, when written, after it. A
# weekday is no reading ("khám đường huyết sáng thứ 2"; "đo thử 2.5" still is).
_READING = re.compile(
    r"^(?:\s*[:=]?\s*(?!type|tuyp|typ|loai|nam|thang|tuan|ngay|gio|tieng|lan|tuoi)[a-z]+){0,5}\s*[:=]?\s*"
    r"(?<![a-z\d.,])(?!(?<=thu )[2-7](?![\d.,]))(\d{1,3}(?:[.,]\d{1,2})?)(?![\d])(?!\s*[(:])\s*(mmol|mg|mm)?"
    r"(?!\s*(?:nam|thang|tuan|ngay|gio|tieng|lan|tuoi|vien|kg|cm|%|phut|don vi|ui|u\b|h\b))"
    # a difference between two readings, not a reading ("reads about 1 mmol higher than the lab")
    r"(?!\s*[a-z/]*\s*(?:higher|lower|more|less|cao hon|thap hon) (?:than (?:the |my |a )?(?:lab|meter|finger|"
    r"blood test|hospital|clinic|other)|so voi (?:xet nghiem|may|benh vien)))"
)
_WINDOW = 50  # characters after the glucose word in which the reading is looked for


# A later decimal value in the same message ("2,9 lúc sáng, uống nước cam giờ 5,8"; "6.5 mà giờ tụt còn 2.4"):
# the reading as it is now. Only a decimal mmol/L value, not followed by a unit that makes it something else.
_LATER = re.compile(
    r"(?<![\d.,])(\d{1,2}[.,]\d{1,2})(?![\d])(?!\s*(?:kg|cm|%|do|c\b|nam|thang|tuan|ngay|gio|tieng|lan|tuoi))"
)
_LATER_WINDOW = 160


def glucose_readings(text: str, rule: GlucoseRule) -> list[float]:
    """Every glucose reading in ``text``, in mmol/L, in the order written."""
    return [
        value for _, value in _positioned_readings(read_spoken_numbers(fold(strip_invisible(text))), rule)
    ]


def _positioned_readings(folded: str, rule: GlucoseRule) -> list[tuple[int, float]]:
    values: list[tuple[int, float]] = []
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
        # round 61: a decimal value under 35 written with "mg" ("đường huyết lúc đói 5.9 mg gì đó") is mmol/L with the
        # wrong unit: mg/dL readings are whole numbers, and 5.9 mg/dL would be no reading anyone talks through
        mislabelled = unit == "mg" and not raw.isdigit() and value < 35
        if (unit == "mg" and not mislabelled) or (not unit and value > 35):
            value /= 18.0
        values.append((word.end() + m.start(1), value))
    return values


def _current_low(folded: str, rule: GlucoseRule, readings: list[tuple[int, float]]) -> bool | None:
    """Whether the latest value in the message (a reading, or a later decimal value after one) is low: None when
    no later decimal value follows the last reading."""
    if not readings:
        return None
    first, last = readings[0][0], readings[-1][0]
    later = [
        (first + m.start(1), float(m.group(1).replace(",", ".")))
        for m in _LATER.finditer(folded[first : first + _LATER_WINDOW])
        if first + m.start(1) > last
    ]
    if not later:
        return None
    value = later[-1][1]
    return (
        value < (rule.symptom_below_mmol or rule.low_below_mmol)
        if 1.0 <= value < rule.high_from_mmol
        else None
    )


def glucose_hits(text: str, rule: GlucoseRule) -> dict[str, list[Hit]]:
    """Readings as rule hits: very low → hypoglycaemia; low → a hypoglycaemia symptom (it needs a severity
    sign too: "ăn kẹo rồi vẫn run"); high → a hyperglycaemia symptom; extreme → hyperglycaemia on its own."""
    hits: dict[str, list[Hit]] = {}
    folded = read_spoken_numbers(fold(strip_invisible(text)))
    readings = _positioned_readings(folded, rule)
    now_low = _current_low(folded, rule, readings)
    values = [value for _, value in readings]
    if now_low is False:  # a low already treated: the latest value is back in range
        values = [v for v in values if v >= (rule.symptom_below_mmol or rule.low_below_mmol)]
    elif now_low:  # "6.5 mà giờ tụt còn 2.4": the latest value is the reading
        later = _LATER.findall(folded[readings[0][0] : readings[0][0] + _LATER_WINDOW])
        values.append(float(later[-1].replace(",", ".")))
    for value in values:
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
