"""Vietnamese text tools shared by retrieval, import and the nodes.

- ``nfc`` / ``nfc_lines`` / ``squash`` / ``has_diacritics``: normalisation (``nfc`` collapses whitespace;
  ``nfc_lines`` keeps line breaks and spacing, which document parsing needs).
- Folding, the one place it is defined (retrieval, import, classifier rules, verification all use these):
  ``fold`` (lowercase, tone and vowel marks removed, đ→d) is what lets "rang bi e buot" find "Răng bị ê buốt";
  it is computed character by character so a folded string has the same length as the NFC string it came
  from (spans found in one map onto the other). ``fold_alnum`` is the same with every character that is not a
  letter or digit turned into a space (still one character for one), ``fold_spaced`` is ``fold`` with runs
  of whitespace collapsed (stored search text, header keys) and ``fold_plain`` is ``fold_alnum`` with runs of
  spaces collapsed (words only: the rule-based classifiers).
- ``clean_query``: removes the chatty noise of patient messages (greetings, thanks, pleas for advice,
  signatures such as "Nguyễn Thị Bốn ( 1990 )", "Câu hỏi ẩn danh", repeated punctuation) and expands
  common chat abbreviations ("bs", "ko", "dc", "e"). It is for the search query only; the stored message
  keeps the patient's words.
- ``syllables`` / ``ngrams``: tokenisation into syllables (Vietnamese writes one syllable per space-separated
  token, so syllable bigrams stand in for most two-syllable words) and n-gram helpers.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import pairwise

__all__ = [
    "DiacriticRestorer",
    "NearSpelling",
    "char_ngrams",
    "clean_query",
    "fold",
    "fold_alnum",
    "fold_plain",
    "fold_spaced",
    "has_diacritics",
    "nfc",
    "nfc_lines",
    "ngrams",
    "split_words",
    "squash",
    "strip_diacritics",
    "syllables",
    "word_ngrams",
]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\ufeff]")
_SPACES = re.compile(r"\s+")


def nfc(s: str) -> str:
    """NFC-normalise, drop control and zero-width characters, collapse whitespace, strip."""
    s = unicodedata.normalize("NFC", s)
    s = _CONTROL.sub(" ", s)
    return _SPACES.sub(" ", s).strip()


_LINE_CONTROL = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]")


def nfc_lines(s: str) -> str:
    """NFC-normalised text without control characters; line breaks, tabs and spacing kept."""
    return _LINE_CONTROL.sub("", unicodedata.normalize("NFC", s or ""))


def squash(s: str) -> str:
    """Collapse runs of whitespace (line breaks included) to one space and strip."""
    return _SPACES.sub(" ", s).strip()


def _fold_char(c: str) -> str:
    if c in "đĐ":
        return "d"
    if unicodedata.combining(c):
        return ""
    base = "".join(ch for ch in unicodedata.normalize("NFD", c.lower()) if not unicodedata.combining(ch))
    # Keep a 1:1 character mapping; anything that would not fold to a single character stays as it was.
    return base if len(base) == 1 else c


class CharTable(dict[int, str]):
    """A ``str.translate`` table that maps each code point through ``fold_char`` on first sight (C-speed
    lookups afterwards). At most ``limit`` code points are remembered, so odd input cannot grow it forever."""

    def __init__(self, fold_char: Callable[[str], str], limit: int = 20_000) -> None:
        super().__init__()
        self.fold_char = fold_char
        self.limit = limit

    def __missing__(self, cp: int) -> str:
        folded = self.fold_char(chr(cp))
        if len(self) < self.limit:
            self[cp] = folded
        return folded


_FOLD_TABLE = CharTable(_fold_char)


@functools.lru_cache(maxsize=8192)
def fold(s: str) -> str:
    """Lowercase, remove diacritics, map đ/Đ to d; combining and precomposed input fold alike.

    The input is NFC-normalised first (a stray combining mark is dropped), then folded character by
    character, so ``len(fold(s)) == len(unicodedata.normalize("NFC", s))`` for text without stray marks.
    Cached: every message folds the same KB questions and the patient's text several times.
    """
    return unicodedata.normalize("NFC", s).translate(_FOLD_TABLE)


def fold_spaced(s: str) -> str:
    """``fold`` with runs of whitespace collapsed to one space, stripped: "Liều  khởi đầu\n" → "lieu khoi dau"."""
    return squash(fold(s))


def _fold_alnum_char(ch: str) -> str:
    if ch in "đĐ":
        return "d"
    base = unicodedata.normalize("NFD", ch)[0].lower()
    if len(base) != 1:
        return " "
    return base if base.isalnum() else " "


_FOLD_ALNUM_TABLE = CharTable(_fold_alnum_char)


def fold_alnum(s: str) -> str:
    """Lowercase, no diacritics, đ→d, every non-alphanumeric character a space; same length as NFC input."""
    return unicodedata.normalize("NFC", s).translate(_FOLD_ALNUM_TABLE)


def fold_plain(s: str) -> str:
    """The words of a text, folded, one space apart: "Đau răng, quá!" → "dau rang qua"."""
    return squash(fold_alnum(s))


def strip_diacritics(s: str) -> str:
    """Remove every mark but keep case ("Đà Nẵng" -> "Da Nang"): how patients type without a Vietnamese IME."""
    s = unicodedata.normalize("NFD", s).replace("đ", "d").replace("Đ", "D")
    return unicodedata.normalize("NFC", "".join(c for c in s if not unicodedata.combining(c)))


# Vietnamese function words that never name what a message is about, as written (lowercase, NFC): persons and
# terms of address ("em", "tôi", "mẹ", "cháu"), sentence particles ("ạ", "nhé", "ơi", "hả"), and adverbs of
# degree, frequency and time that chat adds ("quá", "lắm", "hoài", "mãi", "cứ", "luôn", "rồi", "nữa"). A
# clinic's KB of a few dozen entries uses few of them, so a search must not read one it lacks as a sign that the
# message is about something the KB does not cover (``SparseIndex.unknown_count``). A closed class, not a list of
# subjects; matched as spelled (folded, "dạ" is "da", skin, and "hở" is "ho", cough).
FUNCTION_WORDS = frozenset(
    """
    em tôi tui mình cháu bạn anh chị ông bà mẹ bố má con cậu cô chú bác dì họ chúng ta nó
    ạ à ừ dạ vâng nhé nha nhá nhỉ ơi hả hở vậy đấy đó kìa nè chứ thôi
    quá lắm thật rất hoài mãi cứ luôn rồi nữa vẫn chưa sắp đang vừa mới thường giùm dùm
    """.split()
)


def function_word(word: str) -> bool:
    """Whether ``word``, as written, is one of ``FUNCTION_WORDS``."""
    return unicodedata.normalize("NFC", word.lower()) in FUNCTION_WORDS


# Vietnamese tone marks (as combining characters); the others (circumflex, breve, horn) shape the vowel.
_TONES = frozenset("\u0300\u0301\u0303\u0309\u0323")


def spelling(word: str) -> str:
    """A word's written form, lowercase, with its tone mark moved to the end: "hoà" and "hòa" (the old and the new
    tone placement) are one spelling, "trĩ" and "trị" (both "tri" folded) are two."""
    tone = ""
    kept = []
    for c in unicodedata.normalize("NFD", word.lower()):
        if c in _TONES:
            tone = c
        else:
            kept.append(c)
    return unicodedata.normalize("NFC", "".join(kept)) + tone


def has_diacritics(s: str) -> bool:
    """True when the text carries any Vietnamese mark (tone, vowel mark or đ)."""
    for c in unicodedata.normalize("NFD", s):
        if unicodedata.combining(c) or c in "đĐ":
            return True
    return False


# ---------------------------------------------------------------------------------------------- cleaning

# Patterns are written on the folded form (no marks, lowercase) so they match with and without diacritics;
# the matched spans are cut out of the NFC original (folding keeps positions).
_ADDRESSEE = (
    r"(?:bac\s*si|bac\s*sy|bsi|bs|b\.s|duoc\s*si|chuyen\s*gia|tu\s*van\s*vien|ban\s*bien\s*tap|"
    r"moi\s*nguoi|cac\s*(?:me|chi|anh|ban|bac\s*si)|ca\s*nha|chi|anh|co|chu|bac|ad|admin)"
)
_SELF = r"(?:em|e|toi|chau|minh|con|tui|tao)"
_NOISE_PATTERNS = [
    # greetings: "chào bác sĩ", "xin chào", "kính gửi bác sĩ", "thưa bs", "bs ơi", "hi bác sĩ"
    rf"\b(?:xin\s+)?(?:chao|kinh\s+chao|kinh\s+gui|gui|thua|hello|hi|alo)\s+{_ADDRESSEE}(?:\s+(?:a|oi|nhe))?\b",
    r"\bxin\s+chao\b",
    rf"\b{_ADDRESSEE}\s+(?:oi|oii+|ui)\b",
    # thanks: "em cảm ơn bác sĩ nhiều ạ", "xin chân thành cảm ơn", "thanks bs"
    rf"\b(?:{_SELF}\s+)?(?:xin\s+)?(?:chan\s+thanh\s+)?(?:cam\s+on|cam\s+ong|thank\s*s?|thank\s+you|tks|thanks)"
    rf"(?:\s+{_ADDRESSEE})?(?:\s+(?:rat\s+)?nhieu)?(?:\s+(?:da|vi\s+da)\s+(?:tu\s+van|doc|tra\s+loi|giup\s+do))?"
    rf"(?:\s+(?:a|nha|nhe|truoc))*\b",
    # pleas for advice: "mong bác sĩ tư vấn giúp em ạ", "nhờ bs giải đáp", "xin bác sĩ tư vấn"
    rf"\b(?:{_SELF}\s+)?(?:rat\s+)?(?:mong|xin|nho|rat\s+mong|hy\s+vong|mong\s+muon)\s+(?:som\s+)?"
    rf"(?:(?:quy\s+)?{_ADDRESSEE}\s+)?(?:som\s+)?"
    r"(?:tu\s+van|giai\s+dap|tra\s+loi|giup\s+do|giup|chi\s+giao|phan\s+hoi|chia\s+se|hoi\s+am)"
    rf"(?:\s+(?:giup|cho|dum|ho|som|them|som\s+nhat))*(?:\s+{_SELF})?(?:\s+(?:voi|a|nhe|nha))*\b",
    rf"\b(?:{_SELF}\s+)?(?:rat\s+)?mong\s+(?:som\s+)?nhan\s+duoc\s+(?:su\s+)?(?:phan\s+hoi|tu\s+van|tra\s+loi|hoi\s+am)"
    rf"(?:\s+(?:tu|cua)\s+(?:quy\s+)?{_ADDRESSEE})?\b",
    # "bác sĩ cho em hỏi", "cho em hỏi là"
    rf"\b(?:{_ADDRESSEE}\s+)?cho\s+{_SELF}\s+hoi(?:\s+(?:la|chut|voi|ti|1\s+chut))?\b",
    # anonymous-question markers of forum exports
    r"\bcau\s+hoi\s+(?:cua\s+)?(?:khach\s+hang\s+|ban\s+doc\s+)?an\s+danh\b",
]
_NOISE = re.compile("|".join(f"(?:{p})" for p in _NOISE_PATTERNS))

_UPPER = "".join(
    sorted({chr(i) for i in range(0x41, 0x1EFA) if chr(i).isupper() and chr(i).isalpha()} | {"Đ"})
)
_CAP_WORD = rf"[{_UPPER}][^\W\d_]*"
# A signature: one to five capitalised words (or a single initial) followed by "( 1990 )", "( Hà Nội )",
# "( Tp . Đà Nẵng )" or ", 1997" at the end of a message part.
_SIGNATURE = re.compile(
    rf"(?:{_CAP_WORD}\s+){{0,4}}{_CAP_WORD}\s*"
    rf"(?:\(\s*(?:(?:19|20)\d\d|(?:Tp\s*\.?\s*|TP\s*\.?\s*)?{_CAP_WORD}(?:\s+{_CAP_WORD}){{0,3}}"
    rf"(?:\s*[,-]\s*(?:(?:19|20)\d\d|{_CAP_WORD}(?:\s+{_CAP_WORD}){{0,3}}))?)\s*\)"
    rf"|,\s*(?:19|20)\d\d\b)"
    rf"(?=\s*(?:$|[.!?]|{_CAP_WORD}))"
)
_REPEATED_PUNCT = re.compile(r"([!?.,;:~\-])(?:\s*\1)+")
# A run of punctuation left where noise was cut ("khoẻ lại , !"): keep its strongest mark.
_PUNCT_RUN = re.compile(r"[,;:.!?](?:\s*[,;:.!?])+")

# Chat abbreviations patients use, on folded lowercase tokens -> the written form (with marks).
_ABBREVIATIONS = {
    "bs": "bác sĩ",
    "bsi": "bác sĩ",
    "ko": "không",
    "k": "không",
    "kh": "không",
    "hok": "không",
    "hong": "không",
    "khg": "không",
    "dc": "được",
    "dk": "được",
    "đc": "được",
    "e": "em",
    "mk": "mình",
    "vs": "với",
    "ntn": "như thế nào",
    "j": "gì",
    "z": "vậy",
    "sdt": "số điện thoại",
    "tgian": "thời gian",
    "ng": "người",
    "nguoi": "người",
    "r": "rồi",
    "cx": "cũng",
    "bv": "bệnh viện",
    "ks": "kháng sinh",
}
_WORD = re.compile(r"\w+", re.UNICODE)


def _expand_abbreviations(s: str) -> str:
    # Without diacritics in the message, expansions stay unmarked too, so the query keeps one script.
    marked = has_diacritics(s)

    def repl(m: re.Match[str]) -> str:
        tok = m.group(0)
        exp = _ABBREVIATIONS.get(tok.lower())
        if exp is None:
            return tok
        return exp if marked else fold(exp)

    return _WORD.sub(repl, s)


def _strongest_punct(m: re.Match[str]) -> str:
    marks = m.group(0)
    for mark in "?!.;:,":
        if mark in marks:
            return mark
    return marks[0]


def clean_query(s: str) -> str:
    """The search form of a patient message: NFC, noise removed, chat abbreviations expanded.

    Falls back to the NFC text when cleaning would leave nothing (a message that is only "chào bác sĩ" is
    the classifier's business, not retrieval's).
    """
    text = nfc(s)
    if not text:
        return text
    text = _SIGNATURE.sub(" ", text)
    folded = fold(text)
    if len(folded) == len(text):
        spans = [m.span() for m in _NOISE.finditer(folded)]
        for start, end in reversed(spans):
            text = text[:start] + " " + text[end:]
    text = _expand_abbreviations(text)
    text = _REPEATED_PUNCT.sub(r"\1", text)
    text = _SPACES.sub(" ", text).strip()
    text = _PUNCT_RUN.sub(_strongest_punct, text)
    text = _SPACES.sub(" ", text).strip(" ,;:.")
    return text if _WORD.search(text) else nfc(s)


# ---------------------------------------------------------------------------------------------- tokens


def split_words(s: str) -> list[str]:
    """Runs of letters/digits of a text as it is (no folding): for text already folded."""
    return _WORD.findall(s)


def syllables(s: str, *, folded: bool = True) -> list[str]:
    """Syllable tokens (runs of letters/digits); folded unless ``folded=False`` (then NFC lowercase)."""
    return _WORD.findall(fold(s) if folded else nfc(s).lower())


def ngrams(tokens: Sequence[str], n_min: int = 1, n_max: int = 2, sep: str = " ") -> Iterator[str]:
    """All token n-grams with n_min <= n <= n_max, joined by ``sep``."""
    for n in range(n_min, n_max + 1):
        for i in range(len(tokens) - n + 1):
            yield sep.join(tokens[i : i + n])


def word_ngrams(s: str, n_max: int = 2) -> list[str]:
    """Folded syllable 1..n_max-grams of a text."""
    return list(ngrams(syllables(s), 1, n_max))


def char_ngrams(s: str, n_min: int = 3, n_max: int = 5) -> list[str]:
    """Folded character n-grams inside word boundaries (each syllable padded with spaces)."""
    out: list[str] = []
    for tok in split_words(fold(s)):
        padded = f" {tok} "
        for n in range(n_min, n_max + 1):
            out.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return out


# ---------------------------------------------------------------------------------------------- restoring


class DiacriticRestorer:
    """Puts marks back on unmarked text, learning the spelling from a corpus (a role's KB).

    Each folded syllable and syllable bigram remembers its most frequent marked spelling in the corpus; a
    token takes the spelling its neighbours' bigrams vote for, else its own most frequent one, else stays as
    typed. Used for the dense leg only: the embedding model reads unmarked Vietnamese poorly, while the KB's
    own words are exactly the ones worth restoring.

    ``confidences`` says how sure each choice is: the share of its context's spellings in the corpus that agree
    with it (every spelling of the two neighbouring bigrams, counted on the token's side, else of the syllable
    alone; 1.0 for a token left as typed). ``restore(text, keep_below=c)`` leaves a token whose choice is less
    sure than ``c`` unmarked, as typed. On faq-val dev and the blind sets RQ-RQ5, choices under 0.6 (about 6 %
    of a message's syllables) are wrong about 70 % of the time, those at 0.95 or more (about 79 %) 4-5 %
    (``bench/research/restoration_confidence.py``; fifteenth round of ``bench/retrieval_shapes_results.md``).

    ``restore_near(text, NearSpelling(...))`` prefers the spelling of a few given texts (the entries the sparse
    leg found for the message): their bigrams, then the KB's, then their syllables, then the KB's. It lowers the
    syllable error rate on faq-val dev and every blind set RQ-RQ6 (e.g. 0.110 -> 0.105 on dev, 0.125 -> 0.118 on
    RQ6) but did not move retrieval on every set, so the search does not use it by default
    (``engine.retrieval.search.NEAR_SPELLING_K``; sixteenth round).
    """

    def __init__(self, texts: Iterable[str], max_tokens_per_text: int = 40) -> None:
        # Flat counters keyed by marked spelling (no per-key Counter objects: a 100k-entry KB has millions).
        uni: Counter[str] = Counter()
        bi: Counter[tuple[str, str]] = Counter()
        for text in texts:
            words = split_words(nfc(text).lower())[:max_tokens_per_text]
            uni.update(words)
            bi.update(pairwise(words))
        self.unigrams: dict[str, tuple[str, int]] = {}
        # Only for the folded keys with more than one spelling (most have one): every spelling's count (per side
        # of a bigram, that side's spellings), which ``readings`` reads.
        self.unigram_spellings: dict[str, dict[str, int]] = {}
        for word, n in uni.items():
            f = fold(word)
            if (held := self.unigrams.get(f)) is not None:
                self.unigram_spellings.setdefault(f, {held[0]: held[1]})[word] = n
            if n > self.unigrams.get(f, ("", 0))[1]:
                self.unigrams[f] = (word, n)
        self.bigrams: dict[tuple[str, str], tuple[tuple[str, str], int]] = {}
        self.bigram_totals: dict[tuple[str, str], int] = {}
        self.bigram_sides: dict[tuple[str, str, int], dict[str, int]] = {}
        for pair, n in bi.items():
            key = (fold(pair[0]), fold(pair[1]))
            if (held := self.bigrams.get(key)) is not None:
                self.bigram_totals[key] = self.bigram_totals.get(key, held[1]) + n
                for side in (0, 1):
                    if pair[side] != held[0][side] or (*key, side) in self.bigram_sides:
                        counts = self.bigram_sides.setdefault((*key, side), {})
                        if not counts:  # the spellings seen before this one all had the held pair's
                            counts[held[0][side]] = self.bigram_totals[key] - n
                        counts[pair[side]] = counts.get(pair[side], 0) + n
            if n > self.bigrams.get(key, (("", ""), 0))[1]:
                self.bigrams[key] = (pair, n)

    def _spellings(self, key: tuple[str, str], side: int) -> dict[str, int]:
        """Every spelling of one side of a folded bigram the corpus has, with its count."""
        best, n = self.bigrams[key]
        return self.bigram_sides.get((*key, side)) or {best[side]: self.bigram_totals.get(key, n)}

    def readings(self, text: str) -> list[tuple[re.Match[str], str, float, str]]:
        """Per word of ``text``: its match, the spelling ``restore`` chooses, how sure that is (see the class)
        and the second reading (the context's most frequent other spelling; the choice when there is none)."""
        words = [m for m in _WORD.finditer(text)]
        folded = [fold(m.group(0)) for m in words]
        out: list[tuple[re.Match[str], str, float, str]] = []
        for i, f in enumerate(folded):
            votes: Counter[str] = Counter()  # the choice: each neighbouring bigram's best pair votes
            context: Counter[str] = (
                Counter()
            )  # the confidence: those bigrams' every spelling (or the syllable's)
            for key, side in (
                ((folded[i - 1], f), 1) if i > 0 else (None, 1),
                ((f, folded[i + 1]), 0) if i + 1 < len(folded) else (None, 0),
            ):
                if key is not None and (best := self.bigrams.get(key)) is not None:
                    votes[best[0][side]] += best[1]
                    context.update(self._spellings(key, side))
            if not votes and (uni := self.unigrams.get(f)):
                votes[uni[0]] += uni[1]
                context.update(self.unigram_spellings.get(f) or {uni[0]: uni[1]})
            word = words[i].group(0)
            if not votes or not word.isascii():
                out.append((words[i], word, 1.0, word))
                continue
            choice = votes.most_common(1)[0][0]
            others = [(n, s) for s, n in context.items() if s != choice]
            second = max(others)[1] if others else choice
            out.append((words[i], choice, context[choice] / sum(context.values()), second))
        return out

    def restore(self, text: str, keep_below: float = 0.0) -> str:
        """``text`` in the corpus's spelling; a word whose choice is less sure than ``keep_below`` stays as typed."""
        return _fill(text, [c if s >= keep_below else m.group(0) for m, c, s, _ in self.readings(text)])

    def restore_both(self, text: str, unsure_below: float) -> tuple[str, str | None]:
        """``restore(text)`` and the same with every word whose choice is less sure than ``unsure_below`` given
        its second reading instead; None for the second when that changes nothing (every choice sure, or no
        other spelling known). The dense leg embeds both and averages the vectors (``engine.retrieval.search``)."""
        read = self.readings(text)
        restored = _fill(text, [c for _, c, _, _ in read])
        if all(s >= unsure_below or o == c for _, c, s, o in read):
            return restored, None
        return restored, _fill(text, [c if s >= unsure_below else o for _, c, s, o in read])

    def restore_near(
        self,
        text: str,
        near: NearSpelling,
        *,
        syllables: bool = True,
        context_first: bool = False,
        agree: float = 0.0,
        unsure_below: float = 2.0,
    ) -> str:
        """``text`` in the spelling of ``near`` (a few texts, e.g. the entries the sparse leg found for it) where
        ``near`` has the word, else as ``restore`` spells it. A word takes the spelling the neighbouring bigrams
        of ``near`` vote for (when that choice has at least ``agree`` of their weight; else the KB-wide choice);
        without such a bigram, with ``syllables``, its most frequent spelling in ``near`` (after the KB's own
        bigrams with ``context_first``); else the KB-wide choice."""
        read = self.readings(text)
        folded = [fold(m.group(0)) for m, _, _, _ in read]
        chosen = []
        for i, (m, choice, sure, _) in enumerate(read):
            word = m.group(0)
            if not word.isascii() or sure >= unsure_below:
                chosen.append(choice if word.isascii() else word)
                continue
            keys = []
            if i > 0:
                keys.append(((folded[i - 1], folded[i]), 1))
            if i + 1 < len(folded):
                keys.append(((folded[i], folded[i + 1]), 0))
            votes: Counter[str] = Counter()
            for key, side in keys:
                for pair, w in near.bigrams.get(key, {}).items():
                    votes[pair[side]] += w
            if votes:
                best, w = votes.most_common(1)[0]
                chosen.append(best if w >= agree * sum(votes.values()) else choice)
                continue
            if syllables and (spellings := near.unigrams.get(folded[i])):
                kb_context = any(key in self.bigrams for key, _ in keys)
                if not (context_first and kb_context):
                    chosen.append(max(spellings.items(), key=lambda kv: kv[1])[0])
                    continue
            chosen.append(choice)
        return _fill(text, chosen)


class NearSpelling:
    """The spellings of a few texts (the candidates' fields), each text weighted: per folded syllable and folded
    syllable bigram, every marked spelling with its summed weight (``DiacriticRestorer.restore_near``)."""

    def __init__(self, texts: Iterable[tuple[str, float]], max_tokens_per_text: int = 40) -> None:
        self.unigrams: dict[str, dict[str, float]] = {}
        self.bigrams: dict[tuple[str, str], dict[tuple[str, str], float]] = {}
        for text, weight in texts:
            words = split_words(nfc(text).lower())[:max_tokens_per_text]
            for w in words:
                d = self.unigrams.setdefault(fold(w), {})
                d[w] = d.get(w, 0.0) + weight
            for pair in pairwise(words):
                d2 = self.bigrams.setdefault((fold(pair[0]), fold(pair[1])), {})
                d2[pair] = d2.get(pair, 0.0) + weight


def _fill(text: str, chosen: Sequence[str]) -> str:
    """``text`` with its i-th word (``_WORD``) replaced by ``chosen[i]``."""
    out, last = [], 0
    for m, word in zip(_WORD.finditer(text), chosen, strict=True):
        out.append(text[last : m.start()])
        out.append(word)
        last = m.end()
    out.append(text[last:])
    return "".join(out)
