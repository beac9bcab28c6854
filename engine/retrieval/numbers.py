"""Numbers with units in the ranking: siblings that differ by the number the message states (issue 21, 13th round).

A clinic's KB has sibling entries that differ only by a number: "Tiêm phòng cho trẻ 2 tháng" / "... trẻ 2 tuổi",
"Bầu 12 tuần ..." / "Bầu 32 tuần ...". Both legs see almost the same words, so the sibling whose number the
message does not state can come first. The twelfth round found a conflict between the message's number and the
top entry's title on 1.4 % of right top entries and 11.2 % of wrong ones (``bench/retrieval_shapes_results.md``).

``quantities`` reads the numbers with a unit of a folded text (with or without diacritics: "2 tháng" and
"2 thang" alike), each as a kind and an interval in one unit per kind:

- time (ages, durations, weeks of pregnancy): ngày (hôm), tuần, tháng, tuổi, năm, giờ, phút, in days, so "24
  tháng" is "2 tuổi" and "4 tuần" is "1 tháng" (equal within 10 %), and "3 tuổi rưỡi" is 3 to 3,5 tuổi;
- mass (mg, mcg, gram, kg, in mg), volume (ml, cc, lít, in ml): "5 ml" against "5 mg" is no conflict, another kind;
- concentrations as written (mmol/l, mg/dl: one kind each), temperature ("39 độ", 34-43 only);
- counts written as an ordinal: "mũi (thứ) 2", "lần thứ 2", "liều thứ 2", "độ 2" (a grade), "thứ hai".

A bound or a range is an interval: "dưới 6 tháng" (up to 6 months), "trên 1 tuổi", "từ 2-3 tuổi". Two
quantities of one kind *agree* when their intervals meet; a title *conflicts* with the message when, for a kind
both state, none of the title's quantities agrees with one of the message's.

``rerank`` (``KBSearch``, after fusion): when the top candidate's title conflicts with the message, every
conflicting candidate among the first ``WINDOW`` loses ``MARGIN`` of fused score, so one that does not conflict
and was within ``MARGIN`` of the top comes first. Nothing moves when the message states no number, or the top entry does not conflict.
The trace shows the move (``RankedHit.features["numbers"]``: 1 for the entry moved up, -1 for the former top, wherever it now stands).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.retrieval.fusion import Fused
from engine.text import fold

# The window (the first WINDOW candidates) and the fused-score penalty of a conflicting one. Set before measuring
# and measured once on faq-val dev and RQ-RQ4 (``bench/research/number_rerank.py``, thirteenth round in
# ``bench/retrieval_shapes_results.md``), not tuned: the fused scores of siblings sit within 0.15 of each other.
WINDOW = 3
MARGIN = 0.15
# Times within this share of each other are equal ("24 tháng" and "2 tuổi"); other kinds must be equal.
TOLERANCE = 0.1

_UNITS: dict[str, tuple[str, float]] = {
    "ngay": ("time", 1.0),
    "hom": ("time", 1.0),
    "tuan": ("time", 7.0),
    "thang": ("time", 30.0),
    "tuoi": ("time", 365.0),
    "nam": ("time", 365.0),
    "gio": ("time", 1 / 24),
    "phut": ("time", 1 / 1440),
    "mcg": ("mass", 0.001),
    "mg": ("mass", 1.0),
    "gram": ("mass", 1000.0),
    "gam": ("mass", 1000.0),
    "kg": ("mass", 1e6),
    "ml": ("volume", 1.0),
    "cc": ("volume", 1.0),
    "lit": ("volume", 1000.0),
    "mmol/l": ("mmol", 1.0),
    "mmol": ("mmol", 1.0),
    "mg/dl": ("mg/dl", 1.0),
    "mg/kg": ("mg/kg", 1.0),
    "do": ("temperature", 1.0),
}
_NUM = r"(\d+(?:[.,]\d+)?)"
_UNIT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
# "2-3 tuổi", "2 đến 3 tuổi", "2 tới 3 tuổi" (a range), or "2 tuổi"; a bound word may come before.
_BOUND = r"(?:(duoi|tren|tu|truoc|sau|hon|qua|toi da|toi thieu|it nhat|khong qua)\s+)?"
_PAIR = re.compile(
    r"(?<![\w.,])"
    + _BOUND
    + _NUM
    + r"(?:\s*(?:-|–|den|toi)\s*"
    + _NUM
    + r")?\s*("
    + _UNIT
    + r")(?![\w/])(\s+ruoi(?!\w))?"
)
_ORDINAL_WORDS = {"nhat": 1, "hai": 2, "ba": 3, "tu": 4, "nam": 5, "sau": 6}
_COUNT = re.compile(
    r"\b(mui|lan|lieu|dot|do|ky)\s+(?:tiem\s+)?(?:(thu)\s+)?(\d+|"
    + "|".join(_ORDINAL_WORDS)
    + r")(?!\w|[.,]\d|\s+lan\b)"
)
_UPPER = ("duoi", "truoc", "toi da", "khong qua")
_LOWER = ("tren", "tu", "sau", "hon", "qua", "toi thieu", "it nhat")


@dataclass(frozen=True, slots=True)
class Quantity:
    kind: str
    low: float
    high: float

    def agrees(self, other: Quantity) -> bool:
        """Same kind and the intervals meet (times within ``TOLERANCE`` of each other: units round)."""
        if self.kind != other.kind:
            return False
        exact = self.kind != "time" or not math.isfinite(self.high + other.high)
        slack = 1e-9 if exact else TOLERANCE * max(self.high, other.high)
        return self.low <= other.high + slack and other.low <= self.high + slack


def _number(s: str) -> float:
    return float(s.replace(",", "."))


def quantities(text: str) -> set[Quantity]:
    """The numbers with a unit and the ordinal counts of a text (folded here): "Bé 2 tháng" -> time 60-60."""
    folded = fold(text)
    out: set[Quantity] = set()
    for bound, a, b, unit, half in _PAIR.findall(folded):
        kind, scale = _UNITS[unit]
        low = _number(a)
        high = _number(b) if b else low
        if half:  # "4 tháng rưỡi": four to four and a half months (a title's "4 tháng" or "4,5 tháng" agrees)
            high += 0.5
        if kind == "temperature" and not (34 <= low <= 43):
            continue  # "độ" after a number is a temperature only in a fever's range
        if bound in _UPPER and not b:
            low = 0.0
        elif bound in _LOWER and not b:
            high = math.inf
        out.add(Quantity(kind, low * scale, high * scale if math.isfinite(high) else high))
    for word, thu, n in _COUNT.findall(folded):
        if n in _ORDINAL_WORDS:
            if not thu:
                continue  # "mũi hai" is rare; "lần ba" is not a count
            value = float(_ORDINAL_WORDS[n])
        else:
            value = float(n)
        if word == "lan" and not thu:
            continue  # "lần 2" without "thứ" is mostly "2 times"
        out.add(Quantity("grade" if word == "do" else "count", value, value))
    return out


def conflicts(message: set[Quantity], title: set[Quantity]) -> bool:
    """The title states a quantity of a kind the message states, and none of that kind agrees with the message."""
    for kind in {q.kind for q in message} & {q.kind for q in title}:
        mine = [q for q in message if q.kind == kind]
        theirs = [q for q in title if q.kind == kind]
        if not any(m.agrees(t) for m in mine for t in theirs):
            return True
    return False


def rerank(
    ranked: list[Fused], message: str, titles: Sequence[str], *, window: int = WINDOW, margin: float = MARGIN
) -> tuple[list[Fused], int]:
    """``ranked`` with every conflicting candidate among the first ``window`` lowered by ``margin`` in fused score,
    when the top one conflicts (see the module docstring); the first ``window`` re-sorted, the rest as they were.

    A penalty rather than a swap, so that the new top entry's margin to the former (``lead``, a calibration
    feature) is what the penalty left of the gap, positive and small, not negative. ``titles[i]`` is
    ``ranked[i]``'s title (only the first ``window`` are read). Returns the ranking and the former place (0-based)
    of the candidate now first, 0 when the top did not change."""
    if len(ranked) < 2 or window < 2:
        return ranked, 0
    said = quantities(message)
    if not said or not conflicts(said, quantities(titles[0])):
        return ranked, 0
    n = min(window, len(ranked), len(titles))
    head = [
        replace(f, score=f.score - margin) if conflicts(said, quantities(titles[j])) else f
        for j, f in enumerate(ranked[:n])
    ]
    order = sorted(range(n), key=lambda j: -head[j].score)  # stable: ties keep the fused order
    return [head[j] for j in order] + ranked[n:], order[0]
