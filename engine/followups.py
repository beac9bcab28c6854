"""Is a message a follow-up to the previous answer, a new question, or two questions at once? Decided on
evidence, not on length.

A message *refers back* when it says so: an opener like "còn…", "thế…", "vậy…", "nếu vậy…", an ending like
"…thì sao?", a pronoun ("nó", "cái đó", "trường hợp này"), or a correction ("không, ý tôi là…"). It is
*elliptic* when it is short and names no health subject of its own ("bao lâu thì lành?"). Only such a
message is read with the previous answer's context, and even then its own retrieval is compared with the
contextual one (``choose``): "nhiệt miệng" after a question on bad breath, or "đau răng quá" after one on a
child's knocked-out tooth, stand on their own and are answered as asked. The previous reply's suggestions
(the buttons the patient saw) are candidates: a follow-up that names one ("còn trẻ con thì sao?" after a
reply suggesting the children's entry) is that entry when retrieval agrees it is close.

``split_parts`` cuts a two-part question ("…có cần nhổ không? Nhổ xong thì kiêng gì?") into its parts.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from engine.classify import looks_medical
from engine.text import fold, fold_alnum, fold_plain, has_diacritics, nfc, split_words, syllables
from engine.types import Hit

_OPENER = re.compile(
    r"^(?:a\s*|uh\s*|vang\s*|da\s*)?(?:con|the\s*con|vay|vay\s*thi|vay\s*con|neu\s*vay|the|nhung|con\s*neu|neu|"
    r"the\s*thi|con\s*truong\s*hop|con\s*voi|voi|con\s*doi\s*voi|doi\s*voi)\b"
)
_ENDING = re.compile(
    r"\b(?:thi\s*sao|the\s*nao\s*nua|thi\s*phai\s*lam\s*sao|thi\s*lam\s*sao|co\s*sao\s*khong\s*nua|nua\s*khong|"
    r"nua\s*thi\s*sao|thi\s*the\s*nao|thi\s*co\s*sao\s*khong|thi\s*co\s*duoc\s*khong)\s*$"
)
_PRONOUN = re.compile(
    r"\b(?:no|cai\s*do|cai\s*nay|chuyen\s*do|benh\s*do|benh\s*nay|truong\s*hop\s*nay|truong\s*hop\s*do|"
    r"van\s*de\s*do|nhu\s*vay|nhu\s*the|thuoc\s*do|thuoc\s*nay|cach\s*do)\b"
)
_CORRECTION = re.compile(
    r"^(?:a\s*)?(?:khong|ko|k)?\s*(?:phai\s*)?(?:y\s*(?:toi|minh|em|chau)\s*(?:la|muon\s*hoi)|"
    r"(?:toi|minh|em|chau)\s*(?:hoi|muon\s*hoi|dang\s*hoi)\s*(?:ve|cho|la)?|khong\s*phai|nham\s*roi|"
    r"(?:khong|ko|k)\s*(?:phai)?\s*,)"
)
_LEAD = re.compile(
    r"\s*(?:(?:a|uh|vang|da)\s+)?"
    r"(?:y\s*(?:toi|minh|em|chau)\s*(?:la|muon\s*hoi)|(?:toi|minh|em|chau)\s*(?:hoi|muon\s*hoi|dang\s*hoi)\s*"
    r"(?:ve|cho|la)?|con|the\s*con|vay\s*con|vay|the|neu\s*vay)\s+"
)
_NO = re.compile(r"^\s*(?:a\s+)?(?:khong|ko|k)(?:\s*phai)?(?=\W)")
_TRAIL = re.compile(r"\s+(?:thi\s*sao|the\s*nao\s*nua|thi\s*the\s*nao|nua)\s*$")
# Words that name no subject: the question's own frame ("có … không", "bao lâu", "bao nhiêu"), persons, particles.
# "giữ được bao lâu?" (how long does a crown last?) named "Niềng răng có đau không, mất bao lâu?" by "bao lâu".
_STOP = frozenset(
    "co khong ko k thi sao the nao la gi duoc bi ban toi minh em con va hay voi cua cho nhu vay nay do a nhe "
    "nha roi lam can nen phai o khi bao lau nhieu ay bs".split()
)
ELLIPTIC_WORDS = 8
SUGGESTION_MARGIN = 0.2  # a suggested entry within this much of the contextual top is preferred
OWN_MARGIN = 0.1  # a referring message keeps its own reading only when it is this much stronger


# The opener words as spelled with their marks. Folded, "con tôi" (my child), "vôi răng" (tartar), "thẻ bảo hiểm"
# (a card) and "nhung hươu" (antler velvet) read like "còn", "với", "thế", "nhưng": a message typed with marks
# opens with a reference only when the opener is spelled as one.
_OPENER_SPELLING = {
    "con": "còn", "the": "thế", "vay": "vậy", "neu": "nếu", "nhung": "nhưng", "voi": "với", "doi": "đối",
}  # fmt: skip
# Typed without marks, the same nouns by the word after them: a child ("con toi", "con be", "con 5 tuoi"),
# tartar, a card, antler velvet.
_NOUN_OPENING = re.compile(
    r"^(?:(?:a|uh|vang|da)\s+)?(?:con\s+(?:toi|tui|em|minh|chau|be|gai|trai|nha|cua|anh|chi|ut|dau|so|\d)|"
    r"voi\s+rang|the\s+(?:bao\s+hiem|bhyt|atm|kham|ngan\s+hang|thanh\s+vien)|nhung\s+huou)\b"
)


def _opens_with_reference(query: str, folded: str) -> bool:
    """Whether the message opens with "còn…", "thế…", "vậy…", "nếu vậy…" (not with a word that folds like one)."""
    opener = _OPENER.search(folded)
    if opener is None:
        return False
    if not has_diacritics(query):
        return _NOUN_OPENING.search(folded) is None
    words = split_words(nfc(query).lower())[: len(opener.group(0).split())]
    return all(_OPENER_SPELLING.get(fold(w), w) == w for w in words)


def refers_back(query: str) -> bool:
    folded = fold_plain(query)
    return bool(
        _opens_with_reference(query, folded)
        or _ENDING.search(folded)
        or _PRONOUN.search(folded)
        or _CORRECTION.search(folded)
    )


def is_correction(query: str) -> bool:
    return bool(_CORRECTION.search(fold_plain(query)))


# Medical words that name an action, not a subject: "có cần đi khám ngay ko", "uống thuốc gì", "kiêng gì" ask
# about whatever the conversation is about.
_ACTION = re.compile(r"\b(?:di\s*)?(?:kham|thuoc|kieng|dieu\s*tri)\b")


def elliptic(query: str) -> bool:
    """Short, and no health subject of its own ("bao lâu thì lành?", "có cần đi khám ngay ko")."""
    folded = fold_plain(query)
    return len(folded.split()) <= ELLIPTIC_WORDS and not looks_medical(_ACTION.sub(" ", folded))


def own_words(query: str) -> str:
    """The message without the words that only refer back ("còn …", "ý tôi là …", "… thì sao"), in its own
    spelling (``fold_alnum`` keeps every character's position)."""
    text = " ".join(query.split())
    folded = fold_alnum(text)
    start = 0
    no = _NO.match(folded)
    if no and text[no.end() : no.end() + 1] in (",", ".", "!"):  # "không, …" / "không phải, …"
        start = no.end() + 1
    lead = _LEAD.match(folded, start)
    start = lead.end() if lead else start
    trail = _TRAIL.search(folded, start)
    end = trail.start() if trail else len(text)
    return text[start:end].strip(" ,.?!") or text


def suggested_hit(query: str, hits: list[Hit], suggestions: list[str]) -> Hit | None:
    """Among ``hits``, the first entry the previous reply suggested that has at least half of the message's own
    words (counting only words that at most half of the suggestions have; all of them for an entry below the
    top) and is close to the top (``SUGGESTION_MARGIN``)."""
    if not hits or not suggestions:
        return None
    offered = {fold_plain(s) for s in suggestions}
    said = _said(own_words(query))
    # A word most of the suggestions share ("răng" under a dental answer) says nothing about which one is meant.
    shared_by = Counter(w for s in suggestions for w in _overlap(said, s))
    words = {w for w in said if shared_by[w] * 2 <= len(offered)}
    for rank, hit in enumerate(hits):
        if hit.score < hits[0].score - SUGGESTION_MARGIN:
            break
        question = fold_plain(hit.entry.question or "")
        named = _overlap(words, f"{hit.entry.question or ''} {hit.entry.topic}")
        # Named, not merely touched: "còn niềng răng trong suốt thì sao?" is not "Bao nhiêu tuổi thì niềng răng
        # được?" for sharing "niềng" with it. Below the contextual top, every word: "thế uống thuốc giảm đau gì
        # được" (which painkiller?) is not "Đang uống thuốc chống đông có nhổ răng được không?" for "uống thuốc".
        # As spelled: "nó có phải do sâu răng ko" (caries) does not name "…ê buốt sau khi tẩy trắng?" (after).
        if question in offered and named and (named == words if rank else len(named) * 2 >= len(words)):
            return hit
    return None


def _said(text: str) -> set[str]:
    """The content words of a text as typed (lowercase; with their marks when it has them)."""
    return {w for w in syllables(text, folded=False) if fold(w) not in _STOP and len(w) > 1}


def _overlap(words: set[str], text: str) -> set[str]:
    """The ``words`` that ``text`` has: a word typed with marks as spelled ("sâu", caries, is not "sau", after;
    "hạ" is not "há"), one typed without marks in any spelling."""
    spelled = _said(text)
    folded = {fold(w) for w in spelled}
    return {w for w in words if w in spelled or (not has_diacritics(w) and w in folded)}


def supported(query: str, hits: list[Hit]) -> list[Hit]:
    """The contextual hits whose question or keywords have a word of the message's own (``_overlap``). Read
    with the previous answer's topic, the topic's own words can carry an entry that the message never asked
    about: after "Xử trí ngất và hạ đường huyết tại ghế nha?", "hạ đường huyết thì sao?" read as "Khớp thái
    dương hàm & khác hạ đường huyết thì sao?" was "Xử trí ban đầu rối loạn khớp thái dương hàm?" (p 0.75). A
    message with no word of its own ("thế thì sao?") keeps every hit."""
    words = _said(own_words(query))
    if not words:
        return hits
    return [h for h in hits if _overlap(words, " ".join([h.entry.question or "", *h.entry.keywords]))]


@dataclass(slots=True)
class Reading:
    """Which reading of the message answers it: its own, or with the previous answer's context."""

    hits: list[Hit]
    follow_up: bool
    reason: str


def choose(
    own: list[Hit],
    contextual: list[Hit],
    *,
    refers: bool,
    threshold: float,
    suggestions: list[str],
    query: str,
) -> Reading:
    """Own retrieval vs contextual retrieval of a message that refers back or is elliptic."""
    picked = suggested_hit(query, contextual, suggestions)
    contextual = supported(query, contextual)
    own_score = own[0].score if own else 0.0
    ctx_score = contextual[0].score if contextual else 0.0
    if picked is not None and not (own_score >= threshold and own_score > ctx_score + OWN_MARGIN):
        # Three pieces of evidence agree: the bot offered this entry, the message names it, and retrieval in
        # context puts it near the top. That is enough to answer from it.
        rest = [h for h in contextual if h is not picked]
        picked = replace(picked, score=max(picked.score, threshold))
        return Reading([picked, *rest], True, "một câu hỏi gợi ý ở câu trả lời trước")
    if refers:
        if own_score >= threshold and own_score > ctx_score + OWN_MARGIN:
            return Reading(own, False, "nhắc lại nhưng tự đủ nghĩa, đổi chủ đề")
        if contextual and (ctx_score >= threshold or ctx_score >= own_score):
            return Reading(contextual, True, "hỏi tiếp câu trước")
        return Reading(own, False, "không khớp hơn khi đọc cùng câu trước")
    if own_score < threshold <= ctx_score or ctx_score > own_score + OWN_MARGIN:
        return Reading(contextual, True, "câu ngắn, chỉ rõ nghĩa khi đọc cùng câu trước")
    return Reading(own, False, "tự đủ nghĩa")


_PART = re.compile(
    r"(?<=[?？])\s+|[;；]\s*|,\s*(?:và|va|với lại|voi lai|còn|con)\s+|\s+(?:và|va)\s+(?=\S+\s+\S+\s+\S+)"
)


def split_parts(query: str) -> list[str]:
    """The parts of a two-part question (each of at least three words), or [query]."""
    parts = [p.strip(" ,.?") for p in _PART.split(query) if p and p.strip(" ,.?")]
    parts = [p for p in parts if len(p.split()) >= 3]
    return parts if len(parts) == 2 else [query]
