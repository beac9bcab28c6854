"""Minimal Vietnamese text helpers private to the verifier (NFC, folding, tokens, numbers, negation).

Folding is the engine's (``engine.text.fold``); ``nfc`` here keeps line breaks, which article splitting needs.
The number, unit and negation helpers are specific to the offline verdict rule.
"""

from __future__ import annotations

import re
import unicodedata

from engine.text import fold as text_fold

_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]")


def nfc(text: str) -> str:
    """NFC-normalised text without control characters."""
    return _CONTROL.sub("", unicodedata.normalize("NFC", text or ""))


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space and strip."""
    return _WS.sub(" ", text).strip()


def fold(text: str) -> str:
    """Lowercase, diacritics removed, đ→d: "Răng bị ê buốt" → "rang bi e buot" (the engine's folding)."""
    return text_fold(nfc(text))


_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")


def tokens(text: str) -> list[str]:
    """Folded word tokens (syllables for Vietnamese); numbers keep their decimal separator."""
    return _TOKEN.findall(fold(text))


# Function words that carry no claim content (folded). Negation words are NOT here: they are checked apart.
STOPWORDS = frozenset(
    """
    va la cua cac nhung mot co duoc cho voi trong khi nay do thi ma nhu de tu den o tai ve hay hoac
    cung nen can phai se da dang bi boi vi neu thuong rat nhieu it hon nhat moi ca the nguoi benh
    ban chung ta toi minh ho nhe a oi theo sau truoc len ra vao lai van con tren duoi giua
    """.split()
)

# Negation and contraindication markers, matched on lowercase text WITH diacritics (folding would turn
# "cấm" (forbid) into "cam" (orange) and "cảm" (feel)). Longest phrases first.
NEGATION_PHRASES = (
    "chống chỉ định",
    "không nên",
    "không được",
    "không cần",
    "không phải",
    "không thể",
    "không",
    "chưa",
    "tránh",
    "cấm",
    "đừng",
)
# Phrases where "không" does not negate anything.
_NOT_NEGATION = ("không khí", "không gian", "không rõ", "không đổi")
_NEGATION_TOKENS = frozenset(fold(w) for p in NEGATION_PHRASES for w in p.split())


def content_tokens(text: str) -> set[str]:
    """The claim-bearing tokens of a text: folded, stop words and negation words removed."""
    return {
        t
        for t in tokens(text)
        if t[0].isdigit() or (len(t) > 1 and t not in STOPWORDS and t not in _NEGATION_TOKENS)
    }


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", nfc(text).lower())) + " "


def negation_markers(text: str) -> set[str]:
    """The negation/contraindication phrases present in the text (longest match wins)."""
    words = _words(text)
    for phrase in _NOT_NEGATION:
        words = words.replace(f" {phrase} ", " ")
    found: set[str] = set()
    for phrase in NEGATION_PHRASES:
        if f" {phrase} " in words:
            found.add(phrase)
            words = words.replace(f" {phrase} ", " ")
    return found


def negated(text: str) -> bool:
    """True when the text contains a negation or contraindication marker."""
    return bool(negation_markers(text))


# A number followed by an optional unit: "500 mg", "7,5 mmol/l", "2.5%", "3 lần", "1.000 mg".
_QUANTITY = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)*)\s*(%|[a-z]+(?:/[a-z0-9]+)?)?")
UNITS = frozenset(
    """
    mg g kg mcg ug ml l dl mmol/l mg/dl mg/kg mg/ngay g/ngay ml/kg iu ui mmhg % lan ngay tuan thang nam gio
    phut giay tuoi vien goi cm mm m kcal bpm nhip don vi
    """.split()
)


def parse_number(raw: str) -> float | None:
    """Vietnamese or English number: "7,5" → 7.5, "2.5" → 2.5, "1.000" → 1000 (thousands), "1,5" → 1.5."""
    if re.fullmatch(r"\d{1,3}(\.\d{3})+", raw):  # Vietnamese thousands separator
        return float(raw.replace(".", ""))
    if re.fullmatch(r"\d{1,3}(,\d{3}){2,}", raw):  # English thousands (two groups or more)
        return float(raw.replace(",", ""))
    try:
        return float(raw.replace(",", "."))
    except ValueError:
        return None


def quantities(text: str) -> list[tuple[float, str]]:
    """(value, unit) pairs found in the text; unit is "" when none of the known units follows."""
    folded = fold(text)
    out: list[tuple[float, str]] = []
    for match in _QUANTITY.finditer(folded):
        value = parse_number(match.group(1))
        if value is None:
            continue
        unit = match.group(2) or ""
        if unit not in UNITS:
            head = unit.split("/", 1)[0]
            unit = head if head in UNITS else ""
        out.append((value, unit))
    return out
