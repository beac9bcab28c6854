"""Triage text normalisation: what a patient typed, reduced to the words the emergency rules are written in.

Steps, each for a way the rules were missed before:
- NFKC, so full-width letters and compatibility forms read as plain letters;
- every invisible or format character removed (soft hyphen, zero-width space and joiners, word joiner, BOM,
  bidirectional marks, variation selectors, stray combining marks): ``kh\\u00adó th\\u00adở`` is ``khó thở``;
- Telex and VNI leftovers undone when a message is full of them ("khos thowr" → "kho tho", "ddau nguwc" → "dau
  nguc"), never in English;
- letters typed three or more times collapsed ("cứuuuu" → "cứu"), and a last letter typed twice where no
  Vietnamese word ends so ("cốcc", "tayy", "máuu"; not "full", "kill");
- a number glued to the word after it split off ("15p" → "15 p", "45t" → "45 t"), so the unit reads as a word;
- English contractions spelt out ("can't" → "can not", "he's" → "he is"), also typed without the apostrophe
  ("wont", "cant", "hes", "didnt"), so "not" reads as a negation;
- chat spellings mapped to words ("ko" → "khong", "hông" → "khong"), from the rules file's ``[words]``
  table, on the word as typed (diacritics tell "hông" from "họng"); not in a message written in English, where
  "a", "e", "h" are English ("bleeding a lot" is not "bleeding anh lot");
- folded with the engine's one folding table (lowercase, no diacritics, đ→d), every other character a space;
- a hedge opening a clause ("chắc chỉ là trào ngược thôi nhưng…", "probably nothing but…") made a clause of
  its own, so the writer's guess does not exclude or soften the signs that follow;
- laughter typed as a face ("=))", ":)))", "=]]", 😂, 🤣) read as the word "haha" (round 14: "OT tôi tim ngừng
  đập luôn rồi =))" is a joke, and the rules' joke markers read words, not punctuation); a plain smile ":)" is not;
- a clock time's "giờ" written "h" ("lúc 6h còn tỉnh táo" is a time, not "giờ … tỉnh táo");
- numbers said in words, as phone dictation writes them, read as digits when they are made with "trăm" or
  "mươi" ("hai trăm hai mươi trên một trăm hai mươi" → "220 tren 120", "ba mươi sáu tuần" → "36 tuan"); a lone
  word ("ba", "năm", "muối") is left as it is.

The result is ``[a-z0-9]`` words separated by single spaces, clauses joined by `` ; `` so that no phrase
reads across a comma or a full stop, plus the sentence boundaries (sentence punctuation, line breaks) and
clause boundaries (commas, colons) of the original text, as character spans.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from engine.text import CharTable, fold

# Invisible characters are dropped in two passes: format characters (Cf: soft hyphen, zero-width space and
# joiners, word joiner, BOM, bidirectional marks) before composing, so a tone mark split from its letter by
# one still composes; then marks left over after composing (Mn, Me), control characters and fillers.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u034f")
# A full stop or comma between two digits is a decimal mark ("2.5", "3,6 mmol"), not a break.
SENTENCE_BREAK = re.compile(r"(?:[!?;…\n]|\.(?!\d)|(?<!\d)\.)+")
_CLAUSE_BREAK = re.compile(r"(?:[:]|,(?!\d)|(?<!\d),)+")
_NON_WORD = re.compile(r"[^a-z0-9]+")
# laughter typed as a face: "=))", ":)))", "=]]", 😂 🤣 😆 😅
_LAUGH = re.compile(r"[=:;]-?(?:\){2,}|\]{2,})|[\U0001F602\U0001F923\U0001F606\U0001F605]")
_ELONGATED = re.compile(r"([^\W\d_])\1{2,}")
_WORD = re.compile(r"[^\W_]+")
_GLUED_UNIT = re.compile(r"(?<=\d)(?=[^\W\d_])")  # between a digit and the letter right after it
# English: contractions, and the function words that tell an English message from Vietnamese typed without
# diacritics (none of them is a Vietnamese word).
_CONTRACTIONS = (
    (re.compile(r"\b(can)['’]?t\b", re.I), r"\1 not"),
    (re.compile(r"\bwon['’]t\b", re.I), "will not"),
    (re.compile(r"\b(\w+)n['’]t\b", re.I), r"\1 not"),
    (
        re.compile(r"\b(do|does|did|is|are|was|were|has|have|had|could|would|should|must|need|ai)nt\b", re.I),
        r"\1 not",
    ),
    (re.compile(r"\b(?:(he|she|it|that|there|what|who)['’]s)\b", re.I), r"\1 is"),
    (re.compile(r"\bi['’]m\b", re.I), "i am"),
    # the same typed without the apostrophe, as children and phones write them ("wont wake up", "hes on the
    # floor", "im scared"): only words that are no English word of their own ("its", "ill", "were" are)
    (re.compile(r"\bwont\b", re.I), "will not"),
    (re.compile(r"\b(he|she|that|there|what|who)s\b", re.I), r"\1 is"),
    (re.compile(r"\bim\b", re.I), "i am"),
    (re.compile(r"\b(you|they)re\b", re.I), r"\1 are"),
    (re.compile(r"\b(i|you|we|they)ve\b", re.I), r"\1 have"),
    (re.compile(r"\b(\w+)['’](re|ve|ll|d)\b", re.I), r"\1 \2"),
)
_ENGLISH_WORDS = frozenset(
    "and is are was were has have had his her she what with of it its the this that there been after from "
    "should would could does did just very our your their they he's she's i'm can't don't won't isn't "
    "help please now wont cant dont didnt doesnt isnt wasnt hes shes".split()
)
_VIET_SYLLABLE = re.compile(
    r"^(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnpqrstvx])?[aeiouy]{1,3}(?:ng|nh|ch|[cmnptiyou])?$"
)
# A hedge at the start of a clause ("chắc chỉ là trào ngược thôi nhưng…", "probably nothing but…") is the
# writer's guess, not a finding: it ends at its "nhưng"/"but", so its words neither exclude nor soften the signs
# told after it.
_HEDGE = re.compile(
    r"^(?:(?:chac|co le|hy vong|hi vong|mong la|chac la|chac chi|chac do|chac tai|co khi|probably|maybe|perhaps"
    r"|hopefully|i think|i guess|might be|may be|could be|not sure|sorry to bother|bit of a|sorry)(?: [a-z0-9]+)*?)"
    r" (?=(?:nhung|but) )"
)
# Telex and VNI leftovers: a Vietnamese keyboard that was off, or a phone's input method that did not convert,
# leaves the letters and digits that should have become diacritics ("khos thowr" for "khó thở", "ddau nguwc" for
# "đau ngực", "kho1 tho73"). Folding drops diacritics anyway, so undoing a leftover only means removing its
# markers: "dd" → "d", a "w" after a vowel (ư, ơ, ă; any other "w" is an "ư"), a doubled vowel (â, ê, ô), a tone
# letter (s f r x j) after a vowel or at the end, VNI digits inside a word. A word is rewritten only when the
# result is shaped like a Vietnamese syllable and the word as typed is not (or carries one of those markers), and
# a message only when two of its words are leftovers and it is not English.
# "khos", "trasi"; before a final consonant too, "bojt", "mesp" (round 32: "suis bojt mesp" for "sùi bọt mép"), but
# not the "r" or the "st" of English words ("short", "chest", "most")
_TELEX_TONE = re.compile(
    r"(?<=[aeiouy])[sfrxj](?=[aeiouy]|$)|(?<=[a-z])[sfrxj]$"
    r"|(?<=[aeiouy])(?:[fjx](?=(?:ch|nh|ng|[cmnpt])$)|s(?=(?:ch|nh|ng|[cmnp])$))"
)
_TELEX_TONE_INSIDE = re.compile(
    r"(?<=[aeiouy])[sfrxj]|(?<=[a-z])[sfrxj]$"
)  # "quaans", "thaasm": only in a marked word
_TELEX_MARKED = re.compile(r"^dd|[aeiouy]w|aa|ee|oo|[a-z][1-9]")
_TELEX_HINT = re.compile(r"(?<![^\W\d_])dd|[aeiouy]w|aa|ee|oo|[a-z][1-9]", re.IGNORECASE)
_VNI = re.compile(r"^[a-z]+[1-9]+[a-z]*$")
_DOUBLED_VOWEL = re.compile(r"([aeiouy])\1+")


def _untelex_word(word: str) -> str | None:
    """The word with its Telex or VNI markers removed, or None when it is not a leftover."""
    if not word.isascii() or not word.isalnum() or len(word) < 2 or len(word) > 9:
        return None
    marked = bool(_TELEX_MARKED.search(word))
    if _VIET_SYLLABLE.match(word) and not marked:
        return None
    out = re.sub(r"[1-9]", "", word) if _VNI.match(word) else word
    if out.startswith("dd"):
        out = out[1:]
    out = re.sub(r"(?<=[aeiouy])w", "", out).replace("w", "u")
    out = out[:1] + (_TELEX_TONE_INSIDE if marked else _TELEX_TONE).sub("", out[1:])
    out = _DOUBLED_VOWEL.sub(r"\1", out)
    return out if out != word and _VIET_SYLLABLE.match(out) else None


def untelex(text: str, words: dict[str, str]) -> str:
    """``text`` with its Telex or VNI leftovers undone (see above). Unchanged unless at least two words carry a
    marker no Vietnamese or English spelling explains as a whole ("dd", "uw", "ee", a VNI digit), a fifth of its
    unaccented words are leftovers and, once undone, nearly every unaccented word is shaped like a Vietnamese
    syllable (an English sentence is not: "how", "deep", "keeps" look like leftovers, "bleeding" is no syllable).
    Capitalised words (names: "Kian Pee Wan") and chat spellings of ``words`` are left alone."""
    if not _TELEX_HINT.search(text):  # most messages: no marker anywhere, nothing to read word by word
        return text
    plain = [m for m in _WORD.finditer(text) if m.group(0).isascii() and not m.group(0).isdigit()]
    if len(plain) < 2:
        return text
    if len(_ENGLISH_WORDS.intersection(m.group(0).lower() for m in plain)) >= 2:
        return text
    fixes: list[tuple[int, int, str]] = []
    odd = marked = 0
    for m in plain:
        word = m.group(0)
        low = word.lower()
        fixed = None
        if low not in words and (word == low or m.start() == 0):
            fixed = _untelex_word(low)
        if fixed is not None:
            fixes.append((m.start(), m.end(), fixed))
            marked += bool(_TELEX_MARKED.search(low))
        elif len(low) >= 2 and low not in words and not _VIET_SYLLABLE.match(low):
            odd += 1
    if marked < 2 or 5 * len(fixes) < len(plain) or 10 * odd > len(plain):
        return text
    for start, end, fixed in reversed(fixes):
        text = text[:start] + fixed + text[end:]
    return text


# Clauses are joined with this, so no phrase (and no `~` gap) reads across a comma or a full stop.
CLAUSE_JOIN = " ; "


def _drop_format(ch: str) -> str:
    return "" if unicodedata.category(ch) == "Cf" or ch in _FILLERS else ch


def _drop_leftover(ch: str) -> str:
    if ch == "\n":
        return ch
    return "" if unicodedata.category(ch) in ("Mn", "Me", "Cc") else ch


_FORMAT_TABLE = CharTable(_drop_format)
_LEFTOVER_TABLE = CharTable(_drop_leftover)


def strip_invisible(text: str) -> str:
    """NFKC, then every invisible or format character dropped (joined, not replaced by a space)."""
    text = unicodedata.normalize("NFKC", text or "").translate(_FORMAT_TABLE)
    return unicodedata.normalize("NFC", text).translate(_LEFTOVER_TABLE)


@dataclass(frozen=True, slots=True)
class Normalized:
    """The folded words of a message, joined by single spaces, and where each clause starts and ends."""

    text: str
    clauses: tuple[tuple[int, int], ...]  # character spans of ``text``, one per clause (commas split them)
    sentences: tuple[tuple[int, int], ...]  # the same for sentences
    accented: str  # lowercase words with their diacritics, for the few spellings folding makes ambiguous
    english: bool = False  # written in English (``is_english``): "no" is a negation there, not "nó"

    def clause_at(self, pos: int) -> tuple[int, int]:
        return _span_at(self.clauses, pos, len(self.text))

    def sentence_at(self, pos: int) -> tuple[int, int]:
        return _span_at(self.sentences, pos, len(self.text))


def _span_at(spans: tuple[tuple[int, int], ...], pos: int, length: int) -> tuple[int, int]:
    for start, end in spans:
        if start <= pos <= end:
            return start, end
    return 0, length


_POINT = frozenset(("cham", "phay"))  # "chấm", "phẩy": the decimal point said aloud
_DIGITS = {
    "khong": 0,
    "mot": 1,
    "hai": 2,
    "ba": 3,
    "bon": 4,
    "nam": 5,
    "sau": 6,
    "bay": 7,
    "tam": 8,
    "chin": 9,
}
# Units after "mươi": "mốt" for one, "tư" for four, "lăm"/"nhăm" for five ("hai mươi năm" is twenty years).
_UNITS_AFTER_TENS = {
    **{k: v for k, v in _DIGITS.items() if k not in ("nam", "khong")},
    "tu": 4,
    "lam": 5,
    "nham": 5,
}


# Words before "muối" (salt), which folds like "mười": "nước muối hai lần" is not "nước 12 lần".
_SALTY = frozenset("nuoc an rang ngam chanh ot tieu xa ca dua kho hat vi bot tam uop cham bo sua".split())


def _tens(tokens: list[str], i: int) -> tuple[int, int] | None:
    """(value, tokens read) of "D mươi [U]" or "mười [U]" at ``i``, or None."""
    if (
        i + 1 < len(tokens)
        and tokens[i] in _DIGITS
        and tokens[i + 1] == "muoi"
        and tokens[i] not in ("mot", "khong")
    ):
        value, used = _DIGITS[tokens[i]] * 10, 2
    elif i < len(tokens) and tokens[i] == "muoi" and (i == 0 or tokens[i - 1] not in _SALTY):
        value, used = 10, 1
    else:
        return None
    unit = tokens[i + used] if i + used < len(tokens) else ""
    if unit in _UNITS_AFTER_TENS:
        return value + _UNITS_AFTER_TENS[unit], used + 1
    return value, used


def _spoken_number(tokens: list[str], i: int) -> tuple[int, int] | None:
    """(value, tokens read) of a number said in words starting at ``i`` (1–999, with "trăm" or "mươi"), or
    None. A lone "mười" counts only with a unit after it ("mười lăm"): "muối" folds to the same letters."""
    if i + 1 < len(tokens) and tokens[i] in _DIGITS and tokens[i + 1] == "tram" and tokens[i] != "khong":
        value, used = _DIGITS[tokens[i]] * 100, 2
        rest = _tens(tokens, i + used)
        if rest:
            return value + rest[0], used + rest[1]
        if (
            i + used + 1 < len(tokens)
            and tokens[i + used] in ("linh", "le")
            and tokens[i + used + 1] in _DIGITS
        ):
            return value + _DIGITS[tokens[i + used + 1]], used + 2
        if i + used < len(tokens) and tokens[i + used] in _UNITS_AFTER_TENS:  # "một trăm hai" is 120
            return value + 10 * _UNITS_AFTER_TENS[tokens[i + used]], used + 1
        if i + used < len(tokens) and tokens[i + used] == "ruoi":  # "một trăm rưỡi" is 150
            return value + 50, used + 1
        return value, used
    rest = _tens(tokens, i)
    if rest and rest[1] >= 2:
        return rest
    return None


# Round 25: "hai chấm mấy" (two point something): a reading told by its whole part only, read as its middle (".5"), so
# "đường còn hai chấm mấy" is under 3.0 and "ba chấm mấy" under 3.9, as whatever the decimal was.
_SOME_DIGIT = "may"


def _decimal_digit(token: str) -> str | None:
    """The digit a word after a spoken decimal point stands for ("tám" → "8", "mấy" → "5"), or None."""
    if token == _SOME_DIGIT:
        return "5"
    return str(_DIGITS[token]) if token in _DIGITS else None


def _some_digit_then(token: str) -> str:
    """The punctuation glued after "mấy" ("hai chấm mấy, gọi không tỉnh": the glucose reader splits words on spaces
    only), or "" when ``token`` is no "mấy" with punctuation after it."""
    word = token.rstrip(",.;:!?")
    return token[len(word) :] if word == _SOME_DIGIT and word != token else ""


def read_spoken_numbers(folded: str) -> str:
    """Folded words with every number said in words ("hai tram hai muoi") written as digits ("220")."""
    tokens = folded.split(" ")
    if not _POINT.intersection(tokens) and "tram" not in tokens and "muoi" not in tokens:
        return folded
    out: list[str] = []
    i = 0
    while i < len(tokens):
        found = _spoken_number(tokens, i)
        if (
            not found
            and tokens[i] in _DIGITS
            and tokens[i] != "nam"  # "nam châm" is a magnet
            and i + 2 < len(tokens)
            and tokens[i + 1] in _POINT
            and (_decimal_digit(tokens[i + 2]) is not None or _some_digit_then(tokens[i + 2]))
        ):
            found = (_DIGITS[tokens[i]], 1)  # "hai chấm tám": a single digit before a decimal point
        if (
            not found
            and tokens[i].isdigit()
            and len(tokens[i]) <= 2
            and i + 2 < len(tokens)
            and tokens[i + 1] in _POINT
            and (
                _decimal_digit(tokens[i + 2]) is not None
                or _some_digit_then(tokens[i + 2])
                or (tokens[i + 2].isdigit() and len(tokens[i + 2]) == 1)
            )
        ):
            # round 13: "3 chấm 9", "6 chấm một": digits with the decimal point said aloud (a dictated reading)
            after = _some_digit_then(tokens[i + 2])
            decimal = "5" if after else _decimal_digit(tokens[i + 2]) or tokens[i + 2]
            out.append(f"{tokens[i]}.{decimal}{after}")
            i += 3
            continue
        if found:
            number, i = str(found[0]), i + found[1]
            # "hai chấm tám", "mười hai phẩy năm": a decimal said in words
            if i + 1 < len(tokens) and tokens[i] in _POINT and _decimal_digit(tokens[i + 1]) is not None:
                number, i = f"{number}.{_decimal_digit(tokens[i + 1])}", i + 2
            elif i + 1 < len(tokens) and tokens[i] in _POINT and _some_digit_then(tokens[i + 1]):
                number, i = f"{number}.5{_some_digit_then(tokens[i + 1])}", i + 2
            out.append(number)
        else:
            out.append(tokens[i])
            i += 1
    return " ".join(out)


# A clock time ("lúc 6h", "6h30", "9 giờ tối") is not "giờ" (now): its "giờ" is written "h" ("luc 6 h", "6 h 30"),
# so "lúc 6h còn tỉnh táo" does not read as "giờ … tỉnh táo" (it is over). A duration ("2 giờ rồi") keeps "giờ".
_CLOCK = (
    (re.compile(r"\b(luc|hoi|vao|vao luc|khoang luc|tu luc) (\d{1,2}) gio\b"), r"\1 \2 h"),
    (re.compile(r"\b(\d{1,2}) gio (?=(?:\d{1,2} )?(?:sang|chieu|toi|trua|dem|kem)\b)"), r"\1 h "),
    (re.compile(r"\b(\d{1,2}) (?:gio|h) ?(\d{2})\b(?! phut)"), r"\1 h \2"),
    (re.compile(r"\b(\d{1,2}) h(\d{2})\b(?! phut)"), r"\1 h \2"),
)


# Round 12: typos the round-11 tolerance missed, each read only where no Vietnamese word is spelt so.
# consonants no English word people type here ends in twice ("egg" stays)
_DOUBLED_END = frozenset("tnmgcphrkx")
# "naoo", "voii", "dauu"; never "cuu" (cứu), "see"
_DOUBLED_VOWEL_END = re.compile(r"(?:aa|ii|yy|(?<=[aeiouy])(?:oo|uu))$")
# a vowel typed twice before the last consonant ("ngưuc"); "xoong", "boong" keep theirs
_INNER_DOUBLED = re.compile(r"([aeiuy])\1(?=(?:ng|nh|ch|[cmnpt])$)")
_INNER_DOUBLED_CONSONANT = re.compile(r"([bcdghklmnprstvx])\1(?=[a-z])")
_TELEX_IN_WORD = re.compile(r"uw|[oa]w[frxj]")  # "nguwjc", "thowr": keys no English word holds
# English key words typed with one inner letter dropped ("electrocutd", "swallowd", "batery", "seizre",
# "paracetmol"): only these words (five letters or more), only inner letters, and never into another word.
_ENGLISH_KEY_WORDS = (
    "electrocuted", "swallowed", "battery", "paracetamol", "seizure", "pressure", "infection", "passed",
    "breathing", "bleeding", "unconscious", "vomiting", "choking", "swelling", "swollen", "allergic", "overdose",
    "poisoned", "collapsed", "breathe", "shock", "bitten", "burned", "drowned", "drowning", "fainted",
)  # fmt: skip
_ENGLISH_KEEP = frozenset("sock stoke bleding breding".split())
_ENGLISH_DROPPED = {
    key[:i] + key[i + 1 :]: key
    for key in _ENGLISH_KEY_WORDS
    for i in range(1, len(key) - 1)
    if key[:i] + key[i + 1 :] not in _ENGLISH_KEEP
}


def _retyped(word: str) -> str:
    """One typed word with its slips undone; a space when two words were run together."""
    if len(word) < 3:
        return word
    if word.isascii():
        if word in _ENGLISH_DROPPED:
            return _ENGLISH_DROPPED[word]
        if word[-1] == word[-2] and (word[-1] in _DOUBLED_END or word[-1] == "y"):
            # round 11 ("cốcc", "tayy") and round 12 ("camm", "giatt", "bungg"): no syllable ends so
            if word[-1] in "cy" or (not _VIET_SYLLABLE.match(word) and _VIET_SYLLABLE.match(word[:-1])):
                return word[:-1]
        elif _DOUBLED_VOWEL_END.search(word) and _VIET_SYLLABLE.match(word[:-1]):
            return word[:-1]
        elif _TELEX_IN_WORD.search(word) and len(word) <= 9:
            return _untelex_word(word) or word
        elif (inner := _INNER_DOUBLED_CONSONANT.search(word)) and not _VIET_SYLLABLE.match(word):
            fixed = word[: inner.start()] + word[inner.start() + 1 :]  # "bonng": a key typed twice inside
            return fixed if _VIET_SYLLABLE.match(fixed) else word
        return word
    if word[-1] == word[-2]:  # round 11: "máuu", "tiếngg"
        return word[:-1]
    plain = fold(word)
    if len(plain) < 2:  # a word of marks that fold away (the pipeline strips them first): no IndexError below
        return word
    if word[-1].isascii() and plain[-1] == plain[-2] and plain[-2:] != "uu":  # "đèe" (never "cừu")
        return word[:-1]
    if plain[-1] in "sfrxj" and plain[:-1].isalpha():  # a Telex tone key after a word already toned: "tửr"
        word, plain = word[:-1], plain[:-1]
    inner = _INNER_DOUBLED.search(plain)
    if inner and _VIET_SYLLABLE.match(plain[: inner.start()] + plain[inner.start() + 1 :]):
        # a vowel typed twice before the last consonant ("ngưuc"): drop the one without its mark
        i = inner.start() if word[inner.start()].isascii() else inner.start() + 1
        return word[:i] + word[i + 1 :]
    if plain.isalpha() and not _VIET_SYLLABLE.match(plain) and len(plain) <= 14:
        # two syllables typed together ("khóthở", "bỏngmặt"), split where both halves are syllables
        for i in range(2, len(plain) - 1):
            if _VIET_SYLLABLE.match(plain[:i]) and _VIET_SYLLABLE.match(plain[i:]):
                return f"{word[:i]} {word[i:]}"
    return word


def fold_words(text: str, words: dict[str, str]) -> str:
    """One clause (or pattern-free phrase) folded to plain words. Chat spellings are mapped on the word as
    typed, diacritics included: "hông" is "không" but "hong" may be "họng" (throat) and stays as it is; a key of two
    or three words is read before the words one by one ("hong phai" is "không phải", "tía tô" stays a herb)."""
    typed = [
        word
        for chunk in _WORD.findall(_GLUED_UNIT.sub(" ", _ELONGATED.sub(r"\1", text.lower())))
        for word in _retyped(chunk).split()
    ]
    out: list[str] = []
    i = 0
    while i < len(typed):
        # a key of two or three words first: a regional word read only in the words around it ("té xe" is a fall,
        # "té ra" is "it turns out"; "tía tô" is a herb, not a father)
        for n in (3, 2):
            if i + n <= len(typed) and (phrase := words.get(" ".join(typed[i : i + n]))) is not None:
                out.append(phrase)
                i += n
                break
        else:
            word = typed[i]
            out.append(words.get(word) or _NON_WORD.sub(" ", fold(word)).strip())
            i += 1
    folded = read_spoken_numbers(" ".join(w for w in out if w))
    if "gio" in folded or " h" in folded:
        for rx, repl in _CLOCK:
            folded = rx.sub(repl, folded)
    return folded


def is_english(text: str) -> bool:
    """No Vietnamese diacritics, and two distinct English function words or two longer words no Vietnamese
    syllable is shaped like ("swallowed", "magnet"), a third of the words or more: an English message."""
    lowered = text.lower()
    if any(ord(ch) > 0x7F and ch.isalpha() for ch in lowered):
        return False
    tokens = re.findall(r"[a-z']+", lowered)
    if len(_ENGLISH_WORDS.intersection(tokens)) >= 2:
        return True
    foreign = [t for t in tokens if len(t) >= 4 and not _VIET_SYLLABLE.match(t)]
    return len(set(foreign)) >= 2 and 3 * len(foreign) >= len(tokens)


def normalize(text: str, words: dict[str, str]) -> Normalized:
    """The message as triage reads it (see the module docstring)."""
    visible = untelex(_LAUGH.sub(" haha ", strip_invisible(text)), words)
    english = is_english(visible)
    if english:
        words = {}
        for rx, repl in _CONTRACTIONS:
            visible = rx.sub(repl, visible)
    # an English phrase inside a Vietnamese message ("bé can't breathe"); "cant" is no Vietnamese syllable, so it is
    # read as "can not" with or without its apostrophe ("mum cant breathe giờ em phải làm sao")
    else:
        for rx, repl in _CONTRACTIONS[:1] + (_CONTRACTIONS[2:3] if "'" in visible or "’" in visible else ()):
            visible = rx.sub(repl, visible)
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    sentences: list[tuple[int, int]] = []
    pos = 0
    for sentence in SENTENCE_BREAK.split(visible):
        first = len(spans)
        # an English sentence after a Vietnamese one ("Dạ em chào bác sĩ ạ. mum cant breathe"): read as English
        sentence_words = words
        if not english and is_english(sentence):
            sentence_words = {}
            for rx, repl in _CONTRACTIONS:
                sentence = rx.sub(repl, sentence)
        for clause in _CLAUSE_BREAK.split(sentence):
            folded = fold_words(clause, sentence_words)
            hedge = _HEDGE.match(folded)
            for piece in (folded[: hedge.end() - 1], folded[hedge.end() :]) if hedge else (folded,):
                if not piece:
                    continue
                if parts:
                    pos += len(CLAUSE_JOIN)
                spans.append((pos, pos + len(piece)))
                parts.append(piece)
                pos += len(piece)
        if len(spans) > first:
            sentences.append((spans[first][0], spans[-1][1]))
    accented = " ".join(_retyped(w) for w in re.sub(r"[\W_]+", " ", visible.lower()).split())
    return Normalized(CLAUSE_JOIN.join(parts), tuple(spans), tuple(sentences), accented, english)
