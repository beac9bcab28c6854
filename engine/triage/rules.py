"""The emergency rules: loaded from the reviewed data file (``emergencies.toml``) and matched against a message.

A category is an emergency presentation (from a recognised triage system, or a role's own emergency). It
fires when the message holds one of its ``alone`` phrases, or one of its ``symptoms`` and one of its
``severity`` phrases anywhere in the message (not the same words read twice). A phrase does not count when:
- a negation word stands right before it in its clause ("không khó thở", "chưa bị ngất");
- its clause speaks of the past, or of what might happen ("năm ngoái bố tôi bị đột quỵ", "nếu bé sốt…"); a
  clause with no time word of its own continues the one before it in the sentence. A symptom may lie in the
  past when its severity sign is here now ("ngã đập đầu 3 hôm trước, giờ lơ mơ");
- a word for "mild" stands next to it and the category allows that ("khó thở nhẹ");
- one of the category's ``exclude`` phrases is in its clause ("co giật mí mắt").
A category's ``fragment`` phrases (its core signs: "co giật", "ngất", "đau ngực", "HA 210/120") count as ``alone``
ones in a short message that tells rather than asks ("con co giật", "ba ngất"), and in a message of any length
when the sign is said to persist after first aid ("làm theo rồi mà mẹ vẫn co giật", "vẫn không đỡ, giờ…").
A neutral sentence (``markers.neutral``: a greeting, thanks, the distance to a hospital, no transport, "giờ em phải
làm sao?", the writer's job, an occasion; an ending or opening typed without a full stop is made a sentence of its
own first) does not count: it neither lengthens a short fragment nor makes a message a question or a lesson.
A message left quiet where a sign is spoken of is read once more without its background sentences, whatever their
shape (``_background_reduced``: a sentence with no sign, no "?" and no time, question, lesson, story, animal or care
marker: "Nhà em không có bảo hiểm y tế.", "Em là giáo viên, đang đứng lớp thì đọc được tin nhắn."), and the model
reads that text too (docs/triage.md, "Neutral context, second round").
A whole message raises no alarm when it only asks in general ("dấu hiệu đột quỵ là gì?": a question form and
nobody's situation in it), asks to learn ("cách sơ cứu…", "em tò mò"), describes a pattern over time with
nothing acute ("dạo này hay tức ngực"), or says it is over ("giờ bình thường rồi"; not a baseline dated earlier
today after a sign said now: "giờ lay không dậy. Sáng nay nó vẫn chơi bình thường"), or tells of someone already in
hospital being treated and doing well, with no sign told after it ("đang lọc máu ở Chợ Rẫy, bác sĩ nói đang tiến triển
tốt"), as far as each category allows (``*_cancels`` flags). The categories spoken of are still reported as *topics*: a clinician's role shows
the emergency card after the clinical answer.

Phrases are Python regular expressions over the normalised text (``normalize.py``: plain lowercase words, one
space between, clauses joined by " ; " so no phrase reads across a comma). They are written in ordinary
Vietnamese, with or without diacritics: letters are folded when the file is loaded; English phrases (a
category's ``english_*`` lists, and English words among the markers) are read the same way. ``~`` stands for up to
three other words, ``~~`` for up to eight; whole words only. Blood-glucose numbers are read by ``numbers.py``
with thresholds from the same file.

How phrases are matched: each list (a category's ``alone`` phrases, the ``past`` markers…) is one compiled
regular expression, ``(?<![a-z0-9])(?:p1|p2|…)(?![a-z0-9])``, searched over the normalised text. Python's ``re``
tries the alternatives one after the other at every word and keeps the first that matches, so each list is
factored by ``alternation.py`` before it is compiled: phrases that begin with the same letters share one branch
("khó thở nhanh", "khó thở gấp" → "kho tho (?:nhanh|gap)"), and a phrase that begins with a choice of words is
written out once per word first, so at each word only the phrases that can start there are tried (rules-only
``match`` 5 to 7 times faster; compiling the file, once per process, about 2 s slower: docs/triage.md). The
factored pattern finds exactly what the plain list finds, from every position: the same phrase, text and place
(``tests/unit/test_triage_alternation.py``; ``python -m bench.triage_matcher compare`` runs every labelled
message through a copy of the plain matcher and this one). Factoring and compiling the lists takes seconds, so
both are kept between processes (``compiled.py``, in ``engine/triage/__pycache__``): a process whose rules were
compiled before loads them in a fraction of a second.
"""

from __future__ import annotations

import re
import tomllib
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from engine.text import fold
from engine.triage import alternation
from engine.triage.alternation import factor
from engine.triage.compiled import PatternStore
from engine.triage.normalize import CLAUSE_JOIN, SENTENCE_BREAK, Normalized, fold_words, is_english, normalize

RULES_FILE = Path(__file__).parent / "emergencies.toml"
NOW, PAST, IF = "now", "past", "if"  # when a clause speaks of
_GAP_LONG = re.compile(r"\s*~~\s*")
_GAP = re.compile(r"\s*~\s*")
_NO_BEFORE = re.compile(r"(?:^| )no (?:[a-z]+ )?(?:(?:of|about|to) )?$")  # "no (thoughts) (of)"
# "…giống y như trong phim": a likeness to the story, not another story
# a yes/no question about the writer's own case ("… có phải là dấu hiệu nguy hiểm không", "is this a sign of…?"):
# a headline or a warning marker in such a sentence is no post to everyone (round 20)
_ASKS = re.compile(
    r"(?<![a-z0-9])(?:co phai|phai khong|phai ko|(?:co|duoc|roi|nguy hiem|sao) (?:khong|ko|chua)|khong a|khong ha"
    r"|is (?:this|that|it)|could (?:this|it) be|should (?:i|we))(?![a-z0-9])"
)
_LIKENED = re.compile(r"(?:giong|nhu|het|chang|like)(?: [a-z]+){0,2} $")
_WORD_EDGE = "(?<![a-z0-9])(?:{})(?![a-z0-9])"
# a day named as a date, nothing else ("hôm nay", "this morning"): before an outcome in its clause, the outcome's date
_TODAY = re.compile(r"(?:hom|sang|trua|chieu|toi) nay|today|this (?:morning|afternoon|evening)")
_EARLIER_TODAY = re.compile(r"(?:sang|trua|chieu|toi) nay|this (?:morning|afternoon)|(?:luc|hoi|ban) nay")
# the day before: "tối qua bà vẫn ăn uống bình thường" told after "sáng nay không dậy" is how she was before (merge of
# rounds 54-55)
_DAY_BEFORE = re.compile(r"(?:hom|dem|toi|chieu|trua|sang) qua|last night|yesterday")
# round 60: a baseline dated earlier, with "still": "tối (qua) bà vẫn …", "trưa nay vẫn …", "tối qua lúc em đi còn …"
_BASELINE = re.compile(
    r"(?:[a-z]+ ){0,2}(?:(?:hom|dem|toi|chieu|trua|sang) qua|(?:sang|trua|chieu|toi) nay|toi|chieu|trua|luc toi|buoi toi"
    # round 64: "sáng" bare, only with "vẫn" right after it or one word on ("Bác không tiểu đường, sáng vẫn ăn bình
    # thường"); bare "sang" is also "sang" (over to), so not further
    r"|sang(?= (?:[a-z]+ )?van )"
    r"|last night|yesterday|this morning)(?: (?![0-9])[a-z]+){0,6} (?:van|con(?! (?:em|be|gai|trai|toi|minh|chau|nha|tui))|still|was) "
)
# any time named for the signs before such a baseline ("hôm qua …", "lúc 3h …", "chiều …"): the baseline may be the outcome
_ANY_DATE = re.compile(
    r"(?<![a-z])(?:(?:hom|dem|toi|chieu|trua|sang) (?:qua|nay|hom kia|mai)|luc \d|\d+ ?h|hom truoc|hom kia"
    r"|(?:may|\d+|hai|ba) (?:hom|ngay|tuan) (?:truoc|nay|roi)"
    r"|yesterday|last night|this (?:morning|afternoon|evening)|today|ago|earlier)(?![a-z])|(?:^|; )(?:sang|trua|chieu|toi|dem)(?![a-z])"
)


def _still_before(text: str, clause_start: int, last: int) -> bool:
    """The clause of the outcome at ``last`` opens with a baseline dated earlier and "still" ("vẫn", "còn")."""
    # the outcome phrase may hold the date's end and "vẫn" itself ("(trưa) nay vẫn nói chuyện bình thường"); "still" comes
    # just before the outcome, not anywhere in a clause that tells the event ("chiều qua con em sốt … rồi tự hết")
    end = text.find(" ;", last)
    return bool(
        _BASELINE.match(text, clause_start, min(len(text) if end < 0 else end, last + len("nay ba van an ")))
    )


# "now" opening a clause ("…; giờ lay không dậy"), or "giờ" before shaking or calling ("con ngủ trưa giờ lay không
# dậy"), told before a baseline dated earlier today (round 31)
_NOW_BEFORE = re.compile(
    r"(?<![a-z0-9] )(?<![a-z0-9])(?:gio|bay gio|hien gio|now|right now)(?! (?:hay|thuong|sang|chieu|toi|trua))(?![a-z])"
    r"|(?<![a-z])(?<![0-9] )(?:gio|bay gio|hien gio)(?= (?:lay|goi|keu|danh thuc|vo|tat)(?![a-z]))"
)
_NO_BETTER_REACH = 80  # characters before a fragment sign in which "vẫn không đỡ" counts for it
# an English "-ing" at the end of a pattern's word, to be read also as the "-in" people type in a hurry
_DROPPED_G = re.compile(r"(?:(?<=[a-z]{3})|(?<=[a-z][(|?]))ing(?=[ )|]|$)")  # "vomiting", "vomit(ed|ing)"
_CONTRAST_AFTER = re.compile(r" (?:; )?(?:nhung|but|ma|tuy nhien|however)(?![a-z])")
_SENTENCE_SPLIT = re.compile(f"({SENTENCE_BREAK.pattern})")  # a sentence, then the punctuation that ends it
# neutral words that do not open a message without a full stop: a plea asks about what follows ("giờ em phải làm gì với
# vết bỏng này"), a fear joins it ("I'm scared my husband will bleed…")
_NOT_OPENING = re.compile(
    r"(?<![a-z])(?:lam (?:gi|sao|the nao)|what|(?:so|lo|hoang|run) qua|scared|terrified|panicking|freaking)(?![a-z])"
)
_CONTRAST = re.compile(r"\b(?:nhung|but|ma van|van con|tuy nhien|however)\b")  # what follows "it is over"


def fold_pattern(pattern: str) -> str:
    """Fold the letters of a regular expression (keeping escapes such as ``\\d`` as written), expand gaps."""
    out: list[str] = []
    escaped = False
    for ch in pattern:
        out.append(ch if escaped else fold(ch))
        escaped = ch == "\\" and not escaped
    folded = "".join(out)
    # A gap starts with a space unless one was just read ("(bi )? ~ x" must not ask for two in a row); it never
    # starts inside a word.
    folded = _GAP_LONG.sub("(?:(?<= )| )(?:[a-z0-9]+ ){0,8}", folded)
    return _GAP.sub("(?:(?<= )| )(?:[a-z0-9]+ ){0,3}", folded)


def compile_phrases(phrases: list[str], *, folded: bool = True) -> re.Pattern[str] | None:
    """One alternation of whole-word phrases, or None for an empty list. An English word ending in "-ing" (three
    letters or more before it) also reads without its "g" (round 11: "vomitin blood", "not respondin", "throat
    closin"): no Vietnamese syllable ends in "ing", and only the rules' own words are read so, never "insulin"."""
    if not phrases:
        return None
    store = _store()
    return store.compile(_WORD_EDGE.format(store.factored(phrase_patterns(phrases, folded=folded), factor)))


@cache
def patterns() -> PatternStore:
    """This process's factored and compiled phrase lists, kept between processes (``compiled.py``)."""
    return PatternStore(factoring_code=Path(alternation.__file__))


# The store of the ``parse_rules`` call under way, when it was given one (a test's own folder, or none at all).
_STORE: ContextVar[PatternStore | None] = ContextVar("triage_pattern_store", default=None)


def _store() -> PatternStore:
    return _STORE.get() or patterns()


def phrase_patterns(phrases: list[str], *, folded: bool = True) -> list[str]:
    """Each phrase as the regular expression it is read as (folded, gaps expanded, "-ing" also "-in")."""
    return [_read_dropped_g(fold_pattern(p) if folded else p.lower()) for p in phrases]


def _read_dropped_g(pattern: str) -> str:
    """``pattern`` with each word's final "ing" made "ing?", outside look-behinds (they need a fixed width)."""
    if "ing" not in pattern:
        return pattern
    behind: list[tuple[int, int]] = []
    for m in re.finditer(r"\(\?<[=!]", pattern):
        depth, i = 0, m.start()
        while i < len(pattern):
            if pattern[i] == "\\":
                i += 2
                continue
            depth += {"(": 1, ")": -1}.get(pattern[i], 0)
            if depth == 0:
                break
            i += 1
        behind.append((m.start(), i))
    return _DROPPED_G.sub(
        lambda m: m.group(0) if any(a <= m.start() <= b for a, b in behind) else "ing?", pattern
    )


@dataclass(frozen=True, slots=True)
class Category:
    id: str
    name: str  # Vietnamese, shown to the patient
    priority: int  # lower first: the most time-critical category leads the answer
    system: str  # the triage system presentation(s) it comes from
    alone: re.Pattern[str] | None
    accented: re.Pattern[str] | None  # on the text with diacritics, for spellings folding makes ambiguous
    symptoms: re.Pattern[str] | None
    severity: re.Pattern[str] | None
    exclude: re.Pattern[str] | None
    # Core signs that are an emergency said with nothing else, as a short present-tense fragment ("con co giật",
    # "ba ngất", "HA 210/120"), or said again after first aid was tried ("… rồi mà mẹ vẫn co giật") (round 9)
    fragment: re.Pattern[str] | None
    # Anywhere in a message with nothing acute in it, these undo the category ("em sẽ không làm gì đâu" after a
    # passive wish to die; a coin "móc ra được rồi"): what the clause-level ``exclude`` cannot see across a comma.
    dismiss: re.Pattern[str] | None
    mild_cancels: bool
    recurrent_cancels: bool
    conditional_cancels: bool
    resolved_cancels: bool
    in_care_cancels: bool  # someone already in hospital being treated, said to be doing well (round 26)
    advice: tuple[str, ...]
    advice_source: str
    message: str  # a whole answer of its own (suicide), else empty: the standard card
    yields_to: tuple[str, ...]  # categories that, when found too, make this one redundant


@dataclass(frozen=True, slots=True)
class Markers:
    negation: re.Pattern[str]  # must end right before the phrase
    past: re.Pattern[str]
    present: re.Pattern[str]
    # after a sign in a clause dated in the past, a duration running up to now ('hồi chiều … cắn gạc 1 tiếng rồi
    # không bớt'): the sign has not stopped, so it is now
    continuing: re.Pattern[str] | None
    # a learning marker that frames or words an event (round 37: ``_beside_frame``)
    frame: re.Pattern[str] | None
    mild_before: re.Pattern[str]  # ends right before the phrase ("hơi khó thở")
    mild_after: re.Pattern[str]  # starts right after it ("khó thở nhẹ")
    # signs no "mild" word softens ("môi hơi tím", "hơi lơ mơ"): "a little blue" is blue
    unsoftened: re.Pattern[str] | None
    general: re.Pattern[str]
    learning: re.Pattern[str]  # curiosity, a course, a joke, a deadline: no alarm, whoever it is about
    # a question to learn ("cách sơ cứu…", "kỹ năng phòng chống…"), "đang" or not
    educational: re.Pattern[str]
    # someone else's story (a film, the news, a clip): hides its own sentence, not the whole message
    story: re.Pattern[str] | None
    # where, inside a story's sentence, the writer turns to someone real, now ("đang xem phim thì bố em ngã ra…",
    # "đọc trên mạng thì thấy giống hệt ông nhà em"): the story ends there
    story_turn: re.Pattern[str] | None
    # a post that tells the news or warns everyone (a headline about a stranger, "…tử vong vì…", "- nguồn
    # VnExpress"; signs listed for all, "Mọi người nhớ giùm: …", "Các mẹ ơi dấu hiệu…"): its whole sentence is a
    # story, not only from the marker's clause, whatever the tense (round 20)
    headline: re.Pattern[str] | None
    # a sign said in the present, close before it: wins over a whole-message learning marker
    said_now: re.Pattern[str] | None
    resolved: re.Pattern[str]  # it is over ("giờ bình thường rồi", "rồi hết hẳn")
    personal: re.Pattern[str]
    conditional: re.Pattern[str]  # a clause about what might happen ("nếu bé sốt, bỏ bú…")
    recurrent: re.Pattern[str]  # a pattern over time ("thường hay bị", "dạo này", "các cơn")…
    acute: re.Pattern[str]  # …unless something says it is happening now, suddenly
    animal: re.Pattern[str]  # the message is about a pet or farm animal ("chó nhà em bị ngộ độc")…
    animal_accented: re.Pattern[str] | None  # the same, with diacritics ("con chó", never "thở như chó chạy")
    bitten: re.Pattern[str]  # "… bị chó cắn": a person, unless an animal was spoken of before it
    human_hurt: re.Pattern[str]  # …unless a person is hurt too ("chó cắn con tôi", "cả nhà cùng ăn")
    # an animal word that names a food, a place or a thing, not an animal ("hot dog", "pig pen", "chuồng heo"): round 38
    not_animal: re.Pattern[str] | None = None
    # a short message that asks rather than tells ("con co giật thì sao", "ba ngất là bệnh gì"): no fragment
    asking: re.Pattern[str] | None = None
    # a clause of its own that asks what to do now ("…, phải làm gì", "what do we do now"): with someone named in the
    # message ("đứa nhỏ co giật trên thuyền, phải làm gì") it is a plea, and the message stays a fragment (round 19)
    act_now: re.Pattern[str] | None = None
    # the writer only as the one who asks ("cho em hỏi…", "em làm ở rẫy cà phê", "để em để ý"): not someone the message
    # is about, so these words do not make a question personal (round 19)
    asker: re.Pattern[str] | None = None
    # right before a sign: it is still there, or worse ("vẫn", "vẫn đang", "nặng hơn", "still"): a fragment sign
    # counts in a message of any length then
    persists: re.Pattern[str] | None = None
    # anywhere before the sign: first aid did not help ("vẫn không đỡ", "nặng hơn lúc nãy", "not helping")
    no_better: re.Pattern[str] | None = None
    fragment_words: int = 10  # at most this many words make a short fragment
    # a phrase read across a clause that ends on a sign said to be absent ("huyết áp 180/100, không nhức đầu", "ong
    # đốt nhưng không sưng môi"): the reassurance, not the sign (round 19)
    ends_denied: re.Pattern[str] | None = None
    # the person is already in hospital being treated and the message says how it goes or asks what comes after
    # ("đang lọc máu ở Chợ Rẫy, bác sĩ nói đang tiến triển tốt", "đã đặt stent xong, có được đánh răng không"): the
    # emergency is in hands, unless something worse is told after it (round 26)
    in_care: re.Pattern[str] | None = None
    # help is being called for someone now ("we're calling 115", "em đang gọi 115", "xe cấp cứu đang tới"): a learning
    # marker (a medical student, "em hỏi để học") does not make such a message a question to learn (round 27)
    help_called: re.Pattern[str] | None = None
    # a plea to anyone to call help now ("ai nghe được gọi 115 giúp", "can someone call an ambulance"): help called too,
    # and a story told with it is happening now (round 40)
    help_asked: re.Pattern[str] | None = None
    # a sentence that carries nothing a triage nurse would weigh (a greeting or thanks, an apology, the distance to a
    # hospital or no transport, a plea for what to do now, the writer's job or an occasion): whole, or opening or
    # closing the message unpunctuated; left out when a message is judged short, and its "?" or "làm sao" do not make
    # the message a question (the context probe)
    neutral: re.Pattern[str] | None = None
    # of those, the ones the model still reads (a greeting, "Chào bác sĩ."): it learnt from questions that open so
    greeting: re.Pattern[str] | None = None
    # who a sign is told of beside an animal word (round 39's ``_subjects``, data since round 40): a person named (in
    # Vietnamese, in English), the writer in a state ("em bị", "I got"), an animal after a preposition or a handling
    # verb (an object), the owner and age after an animal's name (the animal's)
    subject_person: re.Pattern[str] | None = None
    subject_person_english: re.Pattern[str] | None = None
    writer_state: re.Pattern[str] | None = None
    animal_object: re.Pattern[str] | None = None
    animal_possessed: re.Pattern[str] | None = None


@dataclass(frozen=True, slots=True)
class GlucoseRule:
    words: re.Pattern[str]
    low_below_mmol: float
    high_from_mmol: float
    extreme_from_mmol: float
    symptom_below_mmol: float | None = None  # a low that is an emergency only with a severity sign


@dataclass(frozen=True, slots=True)
class RuleSet:
    categories: tuple[Category, ...]
    markers: Markers
    words: dict[str, str]  # chat spellings → words
    glucose: GlucoseRule
    crisis_lines: tuple[str, ...]
    sources: tuple[str, ...]


@dataclass(slots=True)
class Hit:
    category: str
    kind: str  # alone | symptom | severity | number
    phrase: str


@dataclass(slots=True)
class Match:
    """What the rules found in one message."""

    categories: list[str] = field(default_factory=list)  # emergencies, most time-critical first
    topics: list[str] = field(default_factory=list)  # categories spoken of, emergency or not
    hits: list[Hit] = field(default_factory=list)
    general_question: bool = False
    recurrent: bool = False  # the message describes a pattern over time, nothing acute
    resolved: bool = False  # the message says it is over, nothing acute
    about_animal: bool = False  # the message is about an animal and no person is hurt
    in_care: bool = False  # someone already being treated in hospital, doing well, nothing worse after it
    # the normalised text without its neutral sentences (``markers.neutral``), when it had any: the model reads it too
    told: str = ""
    # the whole message as the model reads it (``normalize(text, rules.words).text``), made once here for both
    read: str = ""


def _required(spec: dict[str, Any], key: str, where: str) -> Any:
    if key not in spec or spec[key] in ("", [], None):
        raise ValueError(f"{where}: missing {key}")
    return spec[key]


def _alternation(words: list[str], where: str) -> re.Pattern[str]:
    rx = compile_phrases(words)
    if rx is None:
        raise ValueError(f"{where}: empty list")
    return rx


def _ending_at_end(phrases: list[str]) -> re.Pattern[str] | None:
    """Phrases that must end where the matched text ends ("… không nhức đầu")."""
    rx = compile_phrases(phrases)
    return None if rx is None else re.compile(f"(?:{rx.pattern})$")


def _ending(phrases: list[str]) -> re.Pattern[str] | None:
    """Phrases that must end right before a sign (at most one word between: "vẫn đang giật")."""
    rx = compile_phrases(phrases)
    return None if rx is None else re.compile(r"(?:^| )(?:" + rx.pattern + r")(?: [a-z0-9]+)? $")


def _neutral(phrases: list[str]) -> re.Pattern[str] | None:
    """Neutral sentence shapes, read from the start of a sentence to its end (``_neutral_spans`` anchors them)."""
    if not phrases:
        return None
    store = _store()
    return store.compile("(?:" + store.factored(phrase_patterns(phrases), factor) + ")")


def _regex_alternation(items: list[str]) -> str:
    """The alternation of ``items`` read as written: regular expressions already folded, no gaps, no "-ing" dropped
    (the subject readings of round 39, kept byte for byte when they moved into the rules file)."""
    return "|".join(items)


def _words_regex(items: list[str]) -> re.Pattern[str] | None:
    """Whole words or phrases, as written."""
    return None if not items else re.compile(_WORD_EDGE.format(_regex_alternation(items)))


def _writer_state(before: list[str], state: list[str]) -> re.Pattern[str] | None:
    """Right after the writer: a state word, with filler words between ("em cũng bị", "I suddenly felt")."""
    if not state:
        return None
    fill = "".join(f"{w} |" for w in before).rstrip("|")
    return re.compile(rf" (?:(?:{fill})*(?:{_regex_alternation(state)}))(?![a-z])")


def _just_before(items: list[str]) -> re.Pattern[str] | None:
    """A word that ends right before a place (searched up to it: "walking the dog")."""
    return None if not items else re.compile(rf"(?:^| )(?:{_regex_alternation(items)}) $")


def _possessed(possessive: list[str], owner: list[str]) -> re.Pattern[str] | None:
    """Read right after an animal's name: up to two words, the possessives, the owners, then an age."""
    if not owner:
        return None
    return re.compile(
        rf"(?:(?: [a-z0-9]+){{0,2}}(?: (?:{_regex_alternation(possessive)}))+)?"
        rf"(?: (?:{_regex_alternation(owner)}))*"
        r"(?:(?: da)? (?:\d+|mot|hai|ba|bon|nam|sau|bay|tam|chin|muoi)(?: [a-z0-9]+)? tuoi)?"
    )


def parse_rules(text: str, *, store: PatternStore | None = None) -> RuleSet:
    """Parse and compile the rules file; a clear ``ValueError`` names the first thing wrong. The phrase lists
    are factored and compiled through ``store`` (by default this process's, ``patterns``)."""
    token = _STORE.set(store)
    try:
        return _parse_rules(text)
    finally:
        _STORE.reset(token)


def _parse_rules(text: str) -> RuleSet:
    data = tomllib.loads(text)
    words = {k.lower(): fold(v) for k, v in data.get("words", {}).items()}
    m = data.get("markers", {})
    negation = compile_phrases(_required(m, "negation", "markers"))
    assert negation is not None
    mild = _alternation(_required(m, "mild", "markers"), "markers.mild").pattern
    markers = Markers(
        negation=re.compile(
            r"(?:^| )(?:"
            + negation.pattern
            + r")(?: (?:bi|co|thay|con|he|tung|bao gio|cam thay|phai|nghi (?:toi|den)(?: chuyen| viec)?|muon|y dinh|y muon|co y|y nghi|suy nghi|dau hieu|trieu chung"
            r"|have|has|had|having|any|been|feel|feeling|felt|show|showing|experiencing|get|got|getting|a|an|the"
            r"|signs? of|really|even|ever|thinking (?:of|about)|thoughts? (?:of|about)|planning (?:to|on)|going to|want to|wanting to|trying to|intend to|intending to|considering))* $"
        ),
        past=_alternation(_required(m, "past", "markers"), "markers.past"),
        present=_alternation(_required(m, "present", "markers"), "markers.present"),
        continuing=compile_phrases(m.get("continuing", [])),
        frame=compile_phrases(m.get("frame", [])),
        mild_before=re.compile(r"(?:^| )(?<!mo )(?:" + mild + r")(?: [a-z0-9]+)? $"),
        mild_after=re.compile(r"^ (?:[a-z0-9]+ )?(?:" + mild + r")(?![a-z0-9])"),
        unsoftened=compile_phrases(m.get("unsoftened", [])),
        general=_alternation(_required(m, "general", "markers"), "markers.general"),
        personal=_alternation(_required(m, "personal", "markers"), "markers.personal"),
        educational=_alternation(_required(m, "educational", "markers"), "markers.educational"),
        learning=_alternation(_required(m, "learning", "markers"), "markers.learning"),
        story=compile_phrases(m.get("story", [])),
        story_turn=compile_phrases(m.get("story_turn", [])),
        headline=compile_phrases(m.get("headline", [])),
        said_now=compile_phrases(m.get("said_now", [])),
        resolved=_alternation(_required(m, "resolved", "markers"), "markers.resolved"),
        conditional=_alternation(_required(m, "conditional", "markers"), "markers.conditional"),
        recurrent=_alternation(_required(m, "recurrent", "markers"), "markers.recurrent"),
        acute=_alternation(_required(m, "acute", "markers"), "markers.acute"),
        animal=_alternation(_required(m, "animal", "markers"), "markers.animal"),
        animal_accented=compile_phrases(m.get("animal_accented", []), folded=False),
        bitten=_alternation(_required(m, "bitten", "markers"), "markers.bitten"),
        human_hurt=_alternation(_required(m, "human_hurt", "markers"), "markers.human_hurt"),
        not_animal=compile_phrases(m.get("not_animal", [])),
        asking=compile_phrases(m.get("asking", [])),
        act_now=compile_phrases(m.get("act_now", [])),
        asker=compile_phrases(m.get("asker", [])),
        persists=_ending(m.get("persists", [])),
        no_better=compile_phrases(m.get("no_better", [])),
        ends_denied=_ending_at_end(m.get("ends_denied", [])),
        in_care=compile_phrases(m.get("in_care", [])),
        help_called=compile_phrases(m.get("help_called", [])),
        help_asked=compile_phrases(m.get("help_asked", [])),
        neutral=_neutral(m.get("neutral", []) + m.get("greeting", [])),
        greeting=_neutral(m.get("greeting", [])),
        fragment_words=int(m.get("fragment_words", 10)),
        # who a sign is told of beside an animal word: required, or a message naming an animal could not be read
        subject_person=_words_regex(_required(m, "subject_person", "markers")),
        subject_person_english=_words_regex(_required(m, "subject_person_english", "markers")),
        writer_state=_writer_state(m.get("writer_state_before", []), _required(m, "writer_state", "markers")),
        animal_object=_just_before(_required(m, "animal_object_after", "markers")),
        animal_possessed=_possessed(m.get("animal_possessive", []), _required(m, "animal_owner", "markers")),
    )
    g = _required(data, "glucose", "file")
    glucose = GlucoseRule(
        words=_alternation(_required(g, "words", "glucose"), "glucose.words"),
        low_below_mmol=float(_required(g, "low_below_mmol", "glucose")),
        high_from_mmol=float(_required(g, "high_from_mmol", "glucose")),
        extreme_from_mmol=float(_required(g, "extreme_from_mmol", "glucose")),
        symptom_below_mmol=float(g["low_symptom_below_mmol"]) if "low_symptom_below_mmol" in g else None,
    )
    categories: list[Category] = []
    seen: set[str] = set()
    for i, spec in enumerate(data.get("category", [])):
        where = f"category #{i + 1} ({spec.get('id', '?')})"
        cid = _required(spec, "id", where)
        if cid in seen:
            raise ValueError(f"{where}: duplicate id")
        seen.add(cid)
        # English phrases (``english_alone``…) are kept apart in the file for its reviewers and matched alike.
        alone, symptoms, severity, exclude = (
            spec.get(key, []) + spec.get(f"english_{key}", [])
            for key in ("alone", "symptoms", "severity", "exclude")
        )
        # Terse clinical shorthand ("GCS 8", "qSOFA 3", "sats 82%", "bầu co giật"): emergencies by themselves,
        # kept in their own list so a reviewer sees the clinical terms and vital-sign numbers together (round 8).
        alone = alone + spec.get("shorthand", [])
        if not alone and not (symptoms and severity) and not spec.get("model_only"):
            raise ValueError(f"{where}: needs alone phrases, or symptoms and severity")
        advice = tuple(spec.get("advice", []))
        message = spec.get("message", "").strip()
        if not message and not 1 <= len(advice) <= 4:
            raise ValueError(f"{where}: 1 to 4 advice steps (or a message)")
        try:
            categories.append(
                Category(
                    id=cid,
                    name=_required(spec, "name", where),
                    priority=int(spec.get("priority", 50)),
                    system=_required(spec, "system", where),
                    alone=compile_phrases(alone),
                    accented=compile_phrases(spec.get("accented", []), folded=False),
                    symptoms=compile_phrases(symptoms),
                    severity=compile_phrases(severity),
                    exclude=compile_phrases(exclude),
                    fragment=compile_phrases(spec.get("fragment", []) + spec.get("english_fragment", [])),
                    dismiss=compile_phrases(spec.get("dismiss", []) + spec.get("english_dismiss", [])),
                    mild_cancels=bool(spec.get("mild_cancels", True)),
                    recurrent_cancels=bool(spec.get("recurrent_cancels", True)),
                    conditional_cancels=bool(spec.get("conditional_cancels", True)),
                    resolved_cancels=bool(spec.get("resolved_cancels", True)),
                    in_care_cancels=bool(spec.get("in_care_cancels", True)),
                    advice=advice,
                    advice_source=_required(spec, "advice_source", where),
                    message=message,
                    yields_to=tuple(spec.get("yields_to", [])),
                )
            )
        except re.error as exc:
            raise ValueError(f"{where}: bad phrase: {exc}") from exc
    if not categories:
        raise ValueError("no categories")
    categories.sort(key=lambda c: c.priority)
    meta = data.get("meta", {})
    return RuleSet(
        categories=tuple(categories),
        markers=markers,
        words=words,
        glucose=glucose,
        crisis_lines=tuple(data.get("crisis", {}).get("lines", [])),
        sources=tuple(meta.get("sources", [])),
    )


@cache
def default_rules() -> RuleSet:
    """The product's rules, parsed once per process (their patterns compiled once per machine: ``patterns``)."""
    rules = parse_rules(RULES_FILE.read_text(encoding="utf-8"))
    patterns().save()
    return rules


class _Message:
    """One normalised message and the clause-level checks on it."""

    def __init__(self, norm: Normalized, markers: Markers) -> None:
        self.norm = norm
        self.markers = markers
        self._sentence_times: dict[tuple[int, int], dict[tuple[int, int], str]] = {}

    def clause(self, pos: int) -> tuple[int, int]:
        return self.norm.clause_at(pos)

    def negated(self, start: int) -> bool:
        cs, _ = self.clause(start)
        before = self.norm.text[cs:start]
        # In English, "no" right before a sign (one word may stand between: "no stiff neck") negates it; in
        # Vietnamese the same letters are "nó" (he, she), so only the listed English signs count there.
        # "hét" (shouted) folds to "het" (no more): typed with its accent it negates nothing ("hét ai vào là chị cắt
        # tay", round 36).
        return any(
            not self._shouted(cs + m.start(), m.group(0)) for m in self.markers.negation.finditer(before)
        ) or (self.norm.english and bool(_NO_BEFORE.search(before)))

    def _shouted(self, pos: int, word: str) -> bool:
        if word.strip() != "het":
            return False
        words = self.norm.accented.split()
        i = _word_index(self.norm.text, pos + len(word) - len(word.lstrip()))
        return i < len(words) and words[i] == "hét"

    def time_of(self, pos: int) -> str:
        """NOW, PAST or IF for the clause at ``pos``. A clause with no time word of its own continues the one
        before it in the same sentence ("Tháng 6/2019 tôi bị yếu nửa người, méo miệng"; "nếu bé sốt, bỏ bú").
        In a clause that speaks of both the past and now, the time word nearest before ``pos`` decides ("hồi
        nhỏ em bị đuối nước nên giờ sợ nước": the drowning is the past); a condition covers the whole clause. A past
        clause is now when a duration running up to now follows the sign in its sentence ("hồi chiều … 1 tiếng rồi
        không bớt")."""
        clause, sentence = self.clause(pos), self.norm.sentence_at(pos)
        when = self._clause_times(sentence).get(clause, NOW)
        if when == IF:
            return when
        text = self.norm.text
        before = text[clause[0] : pos]
        last_past = max((m.end() for m in self.markers.past.finditer(before)), default=-1)
        last_now = max((m.end() for m in self.markers.present.finditer(before)), default=-1)
        if last_past >= 0 or last_now >= 0:
            when = PAST if last_past > last_now else NOW
        if (
            when == PAST
            and self.markers.continuing
            and self.markers.continuing.search(text, pos, sentence[1])
        ):
            return NOW
        return when

    def _clause_times(self, sentence: tuple[int, int]) -> dict[tuple[int, int], str]:
        times = self._sentence_times.get(sentence)
        if times is None:
            times, when = {}, NOW
            for span in self.norm.clauses:
                if not (sentence[0] <= span[0] and span[1] <= sentence[1]):
                    continue
                text = self.norm.text[span[0] : span[1]]
                if self.markers.conditional.search(text):
                    when = IF
                elif self.markers.present.search(text):
                    when = NOW
                elif self.markers.past.search(text):
                    when = PAST
                times[span] = when
            self._sentence_times[sentence] = times
        return times

    def mild_near(self, start: int, end: int) -> bool:
        cs, ce = self.clause(start)
        text = self.norm.text
        if self.markers.unsoftened is not None and self.markers.unsoftened.search(text, start, end):
            return False
        return bool(
            self.markers.mild_before.search(text[cs:start]) or self.markers.mild_after.search(text[end:ce])
        )


Span = tuple[int, int] | None  # where a phrase stands in the normalised text (None: read from a number)
Found = list[tuple[str, Span]]


def _counts(m: re.Match[str], msg: _Message, cat: Category, kind: str, topical: Found) -> bool:
    """Whether one match counts (it is added to ``topical`` when it at least makes the category a topic)."""
    if msg.negated(m.start()):
        return False
    span = msg.clause(m.start())
    if cat.exclude is not None and cat.exclude.search(msg.norm.text, span[0], span[1]):
        return False
    if (
        msg.markers.ends_denied is not None
        and msg.markers.ends_denied.search(m.group(0))
        and not _CONTRAST_AFTER.match(msg.norm.text, m.end())  # "chưa khó thở nhưng mặt bắt đầu sưng"
    ):
        return False
    topical.append((m.group(0), m.span()))
    # A symptom may lie in the past when a severity sign is here now ("ngã đập đầu 2 hôm trước, hôm nay
    # lơ mơ"): the severity phrase must be current, the symptom need not be.
    when = msg.time_of(m.start())
    if (when == IF and cat.conditional_cancels) or (when == PAST and kind != "symptom"):
        return False
    return not (kind != "severity" and cat.mild_cancels and msg.mild_near(m.start(), m.end()))


def _hits(rx: re.Pattern[str] | None, msg: _Message, cat: Category, *, kind: str) -> tuple[Found, Found]:
    """(phrases that count, phrases that only make the category a topic) for one list of phrases."""
    if rx is None:
        return [], []
    text = msg.norm.text
    counted: Found = []
    topical: Found = []
    m = rx.search(text)
    while m is not None:
        # A match that does not count may hide a shorter one starting inside it ("hóc xương cá, ho không ra
        # tiếng": the phrase read from "hóc" is excluded in its clause, the one read from "ho" is not), so the
        # search goes on from its next word; one that counts is read whole.
        nxt = text.find(" ", m.start() + 1)
        resume = nxt + 1 if 0 <= nxt < m.end() else m.end()
        if _counts(m, msg, cat, kind, topical):
            counted.append((m.group(0), m.span()))
            resume = m.end()
        m = rx.search(text, resume)
    return counted, topical


def _pair(symptoms: Found, severity: Found) -> tuple[str, str] | None:
    """A symptom and a severity phrase that are not the same words read twice ("ép tim" is both)."""
    for s_phrase, s_span in symptoms:
        for v_phrase, v_span in severity:
            if s_span is None or v_span is None or v_span[1] <= s_span[0] or s_span[1] <= v_span[0]:
                return s_phrase, v_phrase
    return None


def _accented_hit(phrase: str, msg: _Message, cat: Category) -> tuple[Found, Found]:
    """An accented phrase ("tự tử", where folding alone would also read "từ từ") goes through the same checks
    as any phrase, at the place its folded form stands in the message."""
    words = fold_words(phrase, {}).split()
    rx = re.compile(_WORD_EDGE.format("(?: ; | )".join(re.escape(w) for w in words)))  # it may cross a comma
    return _hits(rx, msg, cat, kind="alone")


def match(text: str, rules: RuleSet, extra_hits: dict[str, list[Hit]] | None = None) -> Match:
    """Run every category on ``text``. ``extra_hits`` (from the number readers) count as ``alone`` or
    ``symptom`` phrases of the category they name.

    A message the rules leave quiet, where a sign is spoken of, is read again without its background sentences
    (``_background_reduced``: a sentence that names no sign and carries no marker, "Nhà em không có bảo hiểm y tế.",
    "Em là giáo viên, đang đứng lớp thì đọc được tin nhắn."): what it says then stands ("… con co giật nè" is the
    fragment "con co giật nè"), and the model reads that text too (the context probe, second round)."""
    result = _match(text, rules, extra_hits)
    if result.categories or result.general_question or not result.topics:
        return result
    reduced = _background_reduced(text, rules)
    if reduced is None:
        return result
    again = _match(reduced, rules, extra_hits)
    again.told = again.told or again.read  # the reduced text, as _match normalised it
    again.read = result.read  # the model reads the whole message too
    return again


def _background_reduced(text: str, rules: RuleSet) -> str | None:
    """``text`` without its background sentences, or None when it has none (or is nothing else). A sentence ends at
    its punctuation; the last sentence of a Vietnamese message may also end where a sentence typed without a full
    stop begins (``_unstopped``). A background sentence asks nothing ("?"), and in it no category reads a sign (an
    alone, fragment or symptom phrase) and no marker reads a time, a question, a lesson, a story, an animal or care;
    a severity word alone ("lúc này", "sáng nay") is no sign. A sentence split off without a full stop (the same
    clause as written) must also hold none of a category's exclude phrases, nor a negation, where it meets the rest."""
    sentences = [s for s in _SENTENCE_END.split(text) if s.strip(" .,!;…\n")]
    pieces = [(s, (False, False)) for s in sentences]
    if sentences and not is_english(text):
        cut = _unstopped(sentences[-1], rules)
        if cut is not None:
            pieces[-1:] = [(sentences[-1][:cut], (False, True)), (sentences[-1][cut:], (True, False))]
    if len(pieces) < 2:
        return None
    kept = [p for p, cut in pieces if not _background(p, rules, cut)]
    if not kept or len(kept) == len(pieces):
        return None
    return " ".join(p.strip() for p in kept)


_SENTENCE_END = re.compile(r"(?<=[!?;…\n]|\.(?!\d))(?<!\d\.)")  # after the punctuation that ends a sentence


# a time of its own, which the ``past`` markers only read next to a sign ("Hôm qua. Con co giật.")
_TIME_SAID = re.compile(
    r"(?<![a-z])(?:hom (?:qua|kia|truoc)|(?:tuan|thang|nam|bua|toi|dem) (?:truoc|qua|ngoai|kia)|truoc (?:day|kia)"
    r"|hoi (?:nho|be|xua|truoc|do)|ngay xua|tung|luc do|khi do|yesterday|last (?:night|week|month|year)|ago|before)"
    r"(?![a-z])"
)


def _unstopped(sentence: str, rules: RuleSet) -> int | None:
    """Where a background sentence typed without a full stop ends ``sentence``: the last capitalised word (not an
    acronym) that follows a word ending in a lower-case letter and is followed by one, when the words from it to the
    end, three or more, are a background sentence ("con co giật nè Nhà em không có bảo hiểm y tế."). Not "… trên Đà
    Lạt" (a name followed by a capital or by nothing), not "xem TikTok thấy …" (what follows tells a sign)."""
    words = sentence.split(" ")
    for i in range(len(words) - 3, 0, -1):
        before, word, after = words[i - 1], words[i], words[i + 1]
        if (
            before[-1:].islower()
            and not before[:1].isupper()  # "ở Chợ Rẫy, bác sĩ…": the second word of a name
            and word[:1].isupper()
            and word[1:2].islower()
            and after[:1].islower()
        ):
            start = len(" ".join(words[:i])) + 1
            return start if _background(sentence[start:], rules, (True, False)) else None
    return None


def _background(piece: str, rules: RuleSet, cut: tuple[bool, bool]) -> bool:
    """Whether ``piece`` is a background sentence (``_background_reduced``)."""
    if "?" in piece:
        return False
    said = normalize(piece, rules.words).text
    if not said:
        return True
    mk = rules.markers
    markers = (
        mk.past,
        mk.conditional,
        mk.recurrent,
        mk.resolved,
        mk.general,
        mk.learning,
        mk.educational,
        mk.story,
        mk.headline,
        mk.asking,
        mk.act_now,
        mk.animal,
        mk.bitten,
        mk.in_care,
        mk.help_called,
    )
    if _TIME_SAID.search(said) or any(rx is not None and rx.search(said) for rx in markers):
        return False
    clauses = said.split(CLAUSE_JOIN)
    # the clauses a piece cut out by a capital shares with the piece before it and the one after it, as written
    edges = [c for c, shared in zip((clauses[0], clauses[-1]), cut, strict=True) if shared]
    # a negation reads only the end of its own clause ("không … co giật"): a head's last clause runs into the tail
    if cut[1] and mk.negation.search(clauses[-1]):
        return False
    for cat in rules.categories:
        for rx in (cat.alone, cat.fragment, cat.symptoms):
            if rx is not None and rx.search(said):
                return False
        if cat.exclude is not None and any(cat.exclude.search(c) for c in edges):
            return False
    return True


def _match(text: str, rules: RuleSet, extra_hits: dict[str, list[Hit]] | None = None) -> Match:
    mk = rules.markers
    read = normalize(text, rules.words)
    norm = _neutral_apart(read, mk)
    msg = _Message(norm, rules.markers)
    result = Match(read=read.text)
    # A neutral sentence ("Cảm ơn bác sĩ.", "Nhà em ở xa bệnh viện 40 cây số.", "Giờ em phải làm sao?") carries nothing
    # a nurse would weigh: the message is judged a question, a lesson or a short fragment without it (the context probe).
    neutral = _neutral_spans(norm, mk)
    told_text = _without(norm.text, neutral) if neutral else norm.text
    # the model reads the message without them too, greetings kept (``markers.greeting``)
    unread = [(a, b) for a, b in neutral if mk.greeting is None or not mk.greeting.fullmatch(norm.text, a, b)]
    result.told = _without(norm.text, unread) if unread else ""
    about = mk.asker.sub(" ", told_text) if mk.asker is not None else told_text
    personal = bool(mk.personal.search(about))
    acute = bool(mk.acute.search(norm.text))
    learning = bool(mk.learning.search(told_text))
    result.general_question = learning or (
        not personal
        and (
            bool(mk.educational.search(told_text))
            or (bool(mk.general.search(told_text)) and not mk.present.search(told_text))
        )
    )
    # A learning marker reads the whole message; a sign said in the present ("she just fainted", "giờ thở co kéo")
    # is someone's emergency now, and a question asked inside it ("chưa biết làm gì", "should we wait") is no
    # question to learn: the sign wins over the marker (round 7).
    only_learning = (
        result.general_question
        and learning
        and not (not personal and (mk.educational.search(told_text) or mk.general.search(told_text)))
    )
    # About an animal, with no person hurt: not a human emergency ("mèo nhà mình ăn phải cá nóc, co giật").
    # where no animal is read: the neutral sentences and the animal words that name a food, a place or a thing
    # (``markers.not_animal``: "choking on a hot dog", "the fence around the pig pen", "chuồng heo"; round 38)
    no_animal = neutral + (
        [m.span() for m in mk.not_animal.finditer(norm.text)] if mk.not_animal is not None else []
    )
    result.about_animal = _about_animal(norm, mk, no_animal)
    # help called for someone now: the signs told are theirs, whatever the writer studies (round 27)
    pleading = mk.help_asked is not None and bool(mk.help_asked.search(norm.text))
    calling = pleading or (mk.help_called is not None and bool(mk.help_called.search(norm.text)))
    # Where a learning marker is a frame or an idiom (``markers.frame`` inside it: "xem trên live thấy anh …", "cãi nhau
    # với bố xong thì đau ngực", "xem bóng đá, giờ ai cũng đau đầu"), when it is about someone: two signs of a category
    # told beside it beat it (``_beside_frame``, round 37); a lesson, a course or a question to learn is no frame
    frames = (
        [
            m.span()
            for m in mk.learning.finditer(norm.text)
            if mk.frame is not None and mk.frame.search(norm.text, m.start(), m.end())
        ]
        if learning and personal
        else []
    )
    # the message's own reasons to raise no alarm, before the animal's: a sign told of a person named as its subject
    # beside an animal word is the person's (``_persons_sign``, round 39), so the animal silences only the others
    asks_only = result.general_question
    result.general_question = result.general_question or result.about_animal
    subjects = _subjects(norm, mk, no_animal) if result.about_animal else []
    result.recurrent = bool(mk.recurrent.search(norm.text)) and not acute
    story = _story_sentences(norm, mk, neutral)
    # a plea to call help told outside the story ("… gửi ảnh đang đứng ngoài lan can … Ai nghe được gọi 115 giúp"): what
    # the story tells is happening now (round 40); a plea inside a film's or a clip's sentence is the story's own
    pleads_now = (
        pleading
        and mk.help_asked is not None
        and any(not _inside(m.start(), list(story)) for m in mk.help_asked.finditer(norm.text))
    )
    in_story: set[str] = set()
    # It is over when the last thing said is that it is over: "sáng nay con em hóc kẹo, vỗ lưng ra ngay, giờ bé chơi
    # bình thường" (the acute words come before the outcome), not "giờ bình thường rồi nhưng vừa nãy lại co giật".
    # Only when the one acute word is the time of day it happened ("sáng nay", "this morning"), and not when a "but"
    # follows the outcome ("giờ hết giật rồi nhưng mê man").
    last_acute = _last_start(mk.acute, norm.text)
    earlier_today = all(_EARLIER_TODAY.fullmatch(m.group(0)) for m in mk.acute.finditer(norm.text))

    def over_now(rx: re.Pattern[str]) -> bool:
        last = _last_start(rx, norm.text)
        if last < 0:
            return False
        # "…, giờ lay không dậy. Sáng nay nó vẫn chơi bình thường": a baseline dated earlier today, told after a sign
        # said now, is how the child was before, not how it ended (round 31)
        clause_start, clause_end = norm.clause_at(last)
        dated = _EARLIER_TODAY.search(norm.text, clause_start, clause_end)
        if dated and dated.start() <= last and _NOW_BEFORE.search(norm.text, 0, clause_start):
            return False
        # "Sáng nay bà không dậy, gọi to chỉ rên rồi lịm đi. Tối qua bà vẫn ăn uống bình thường": a baseline dated the day
        # before, told after a sign dated today, is how she was before it (the merge of rounds 54-55)
        before = _DAY_BEFORE.search(norm.text, clause_start, clause_end)
        if before and before.start() <= last and _TODAY.search(norm.text, 0, clause_start):
            return False
        # "…, em gọi lay mạnh mà bà không mở mắt. Tối bà vẫn ăn uống bình thường", "…, trưa nay vẫn nói chuyện bình thường",
        # "tối qua lúc em đi còn bình thường": a baseline dated earlier (the evening, earlier today, the day before) and
        # "still" ("vẫn", "còn") before the outcome, told after signs that carry no date of their own, is how the person
        # was before them (round 60); not "hôm qua co giật, sáng nay vẫn chơi bình thường" (the signs dated first)
        if _still_before(norm.text, clause_start, last) and not _ANY_DATE.search(norm.text, 0, clause_start):
            return False
        # "…, hôm nay bé tỉnh táo chơi bình thường": the day named just before the outcome, in its own clause, dates the
        # outcome; it is no acute word (round 32)
        acute_elsewhere = acute and any(
            not (clause_start <= m.start() < last and _TODAY.fullmatch(m.group(0)))
            for m in mk.acute.finditer(norm.text)
        )
        if not acute_elsewhere:
            return not acute or not _CONTRAST.search(norm.text, last)
        return earlier_today and last > last_acute and not _CONTRAST.search(norm.text, last)

    result.resolved = over_now(mk.resolved)
    # Someone already being treated in hospital: the signs told up to the last word of that ("… đang thở oxy, bác sĩ nói
    # theo dõi thêm") are in hands; a sign told after it ("…, mà giờ môi tím tái") or after a "but" is new (round 26).
    care = list(mk.in_care.finditer(norm.text)) if mk.in_care is not None else []
    care_end = care[-1].end() if care and not _CONTRAST.search(norm.text, care[-1].start()) else -1
    result.in_care = care_end >= 0
    # A short fragment that tells rather than asks ("con co giật", "ba ngất", "HA 210/120"): its core signs count
    # by themselves (round 9); a question ("… thì sao", "… là gì", "?") is no fragment.
    # A plea for what to do now in a clause of its own, with someone named ("con em co giật, phải làm gì?"), is no
    # question to learn: the rest of the message decides (round 19).
    # A neutral sentence neither lengthens the message nor makes it a question.
    pleads = personal and mk.act_now is not None and bool(mk.act_now.search(told_text))
    asked = mk.act_now.sub(" ", told_text) if pleads and mk.act_now is not None else told_text
    short = (
        len(told_text.replace(" ; ", " ").split()) <= mk.fragment_words
        and (pleads or not _question(text, neutral, rules))
        and not (mk.asking is not None and mk.asking.search(asked))
    )
    extra_hits = extra_hits or {}
    for cat in rules.categories:
        alone, alone_topic = _hits(cat.alone, msg, cat, kind="alone")
        if cat.accented is not None:
            for m in cat.accented.finditer(norm.accented):
                found, topical = _accented_hit(m.group(0), msg, cat)
                alone += found
                alone_topic += topical
        if cat.fragment is not None:
            found, topical = _fragment_hits(cat.fragment, msg, cat, short)
            alone += found
            alone_topic += topical
        symptoms, symptoms_topic = _hits(cat.symptoms, msg, cat, kind="symptom")
        for hit in extra_hits.get(cat.id, []):
            (alone if hit.kind == "alone" else symptoms).append((hit.phrase, None))
        severity: Found = []
        if symptoms or symptoms_topic:
            severity, _ = _hits(cat.severity, msg, cat, kind="severity")
        pair = _pair(symptoms, severity)
        fired = bool(alone) or pair is not None
        # help asked for now ("ai nghe được gọi 115 giúp"): what the story tells is happening (round 40)
        if fired and story and not pleads_now and not _outside(alone, symptoms, severity, norm, story):
            in_story.add(cat.id)
        spoken_of = fired or bool(alone_topic) or _pair(symptoms_topic, severity) is not None
        if spoken_of:
            result.topics.append(cat.id)
        over = (result.recurrent and cat.recurrent_cancels) or (result.resolved and cat.resolved_cancels)
        over = over or (cat.dismiss is not None and over_now(cat.dismiss))
        if result.in_care and cat.in_care_cancels:
            told = alone + ([*symptoms, *severity] if pair is not None else [])
            over = over or all(span is not None and span[0] < care_end for _, span in told)
        animal_quiet = result.about_animal and not (
            fired and _persons_sign(alone, _pair_spans(symptoms, severity), subjects, norm)
        )
        asked_now = only_learning and not animal_quiet and (calling or _said_now(alone or severity, msg))
        beats_frame = (
            fired and bool(frames) and not animal_quiet and _beside_frame(alone, symptoms, severity, frames)
        )
        quiet = asks_only or animal_quiet
        if fired and (not quiet or asked_now or beats_frame) and not over:
            result.categories.append(cat.id)
            # a sign read by two of the category's lists ("méo miệng" as a phrase and as a fragment) is one hit
            result.hits += [Hit(cat.id, "alone", p) for p in dict.fromkeys(p for p, _ in alone)]
            if pair is not None and not alone:
                result.hits += [Hit(cat.id, "symptom", pair[0]), Hit(cat.id, "severity", pair[1])]
    if story:
        # A story with nothing happening now outside it is a story (and the model is not asked either); one
        # told next to an emergency does not hide the emergency.
        result.categories = [c for c in result.categories if c not in in_story]
        result.hits = [h for h in result.hits if h.category not in in_story]
        if not result.categories:
            result.general_question = True
    return _drop_yielding(result, rules)


def _neutral_apart(norm: Normalized, mk: Markers) -> Normalized:
    """``norm`` with a neutral ending of its last sentence, or opening of its first, typed without a full stop ("con
    co giật cảm ơn bác sĩ", "bé ngất giờ em phải làm sao") made a sentence of its own, as if the writer had
    punctuated: a phrase that must end its clause ("… da trắng", "uống thuốc cỏ") ends it, and the neutral words
    are then left out like any neutral sentence."""
    rx = mk.neutral
    if rx is None or not norm.sentences:
        return norm
    text = norm.text
    cuts: list[int] = []
    a, b = norm.sentences[-1]
    if not rx.fullmatch(text, a, b):
        tail = _neutral_tail(text, a, b, rx)
        # a greeting does not close a message ("…, đo máy báo HI" is a glucose meter's "HI", not "hi")
        if tail is not None and not (mk.greeting is not None and mk.greeting.fullmatch(text, tail, b)):
            cuts.append(tail)
    a, b = norm.sentences[0]
    if not rx.fullmatch(text, a, b):
        for end in reversed([a + m.start() for m in re.finditer(" ", text[a:b])]):  # the longest opening
            if text[end - 1] != ";" and rx.fullmatch(text, a, end) and not _NOT_OPENING.search(text, a, end):
                if not cuts or end < cuts[0] - 1:
                    cuts.insert(0, end + 1)
                break
    if not cuts:
        return norm
    join = len(CLAUSE_JOIN) - 1  # a space becomes " ; "

    def moved(pos: int) -> int:
        return pos + join * sum(pos >= c for c in cuts)

    def split(spans: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        out: list[tuple[int, int]] = []
        for a, b in spans:
            cur = a
            for c in cuts:
                if a < c - 1 < b:
                    out.append((moved(cur), moved(c - 1)))
                    cur = c
            out.append((moved(cur), moved(b)))
        return tuple(out)

    pieces, pos = [], 0
    for c in cuts:
        pieces.append(text[pos : c - 1])
        pos = c
    pieces.append(text[pos:])
    return replace(
        norm, text=CLAUSE_JOIN.join(pieces), clauses=split(norm.clauses), sentences=split(norm.sentences)
    )


def _neutral_spans(norm: Normalized, mk: Markers) -> list[tuple[int, int]]:
    """The sentences of the message that say something neutral (``markers.neutral``)."""
    rx = mk.neutral
    if rx is None:
        return []
    return [(a, b) for a, b in norm.sentences if rx.fullmatch(norm.text, a, b)]


def _neutral_tail(text: str, a: int, b: int, rx: re.Pattern[str]) -> int | None:
    """Where a neutral ending of the sentence ``a``–``b`` starts (after some other words), or None. Not after "thì"
    ("con co giật thì em phải làm sao": if it happens, what to do, a question)."""
    for start in (a + m.end() for m in re.finditer(" ", text[a:b])):
        if text[start] != ";" and not text.endswith("thi ", a, start) and rx.fullmatch(text, start, b):
            return start
    return None


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with ``spans`` left out, the pieces kept apart as clauses."""
    pieces, pos = [], 0
    for a, b in sorted(spans):
        pieces.append(text[pos:a])
        pos = max(pos, b)
    pieces.append(text[pos:])
    return " ; ".join(p.strip(" ;") for p in pieces if p.strip(" ;"))


def _question(text: str, neutral: list[tuple[int, int]], rules: RuleSet) -> bool:
    """Whether the message asks ("?"), not counting a "?" that only ends a neutral sentence ("…, giờ em phải làm
    sao?"): each sentence of the raw text is normalised alone and asked about."""
    if "?" not in text:
        return False
    if not neutral:
        return True
    rx = rules.markers.neutral
    assert rx is not None
    parts = _SENTENCE_SPLIT.split(text)
    for piece, stop in zip(parts[::2], [*parts[1::2], ""], strict=True):
        if "?" in stop:
            said = normalize(piece, rules.words).text
            if not said or not (rx.fullmatch(said) or _neutral_tail(said, 0, len(said), rx) is not None):
                return True
    return False


def _fragment_hits(rx: re.Pattern[str], msg: _Message, cat: Category, short: bool) -> tuple[Found, Found]:
    """A category's fragment signs that count: all of them in a short fragment, else only those right after a
    word that says the sign is still there or worse ("làm theo rồi mà mẹ vẫn co giật", "still seizing")."""
    found, topical = _hits(rx, msg, cat, kind="alone")
    if short or not found:
        return found, topical
    persists = msg.markers.persists
    text = msg.norm.text
    no_better = msg.markers.no_better
    kept = [
        (p, s)
        for p, s in found
        if s is not None
        and (
            (persists is not None and persists.search(text[msg.clause(s[0])[0] : s[0]]))
            # first aid "did not help" shortly before the sign ("vẫn không đỡ, giờ con lơ mơ"), not a sentence
            # about something else far earlier in a long message
            or (
                no_better is not None
                and no_better.search(text, max(0, s[0] - _NO_BETTER_REACH), s[0]) is not None
            )
        )
    ]
    return kept, topical


def _said_now(found: Found, msg: _Message) -> bool:
    """Whether a phrase that counts has a present-tense word before it in its own clause ("vừa ngất", "giờ thở
    co kéo", "she just fainted"), not merely no time word."""
    for _, span in found:
        if span is None:
            continue
        cs, _ = msg.clause(span[0])
        # the present word is at most three words before the sign ("vừa ngất", "she just fainted"), not the
        # "vừa xem" of a cartoon seven words earlier
        words = msg.norm.text[cs : span[0]].split(" ")
        start = max(cs, span[0] - len(" ".join(words[-4:])))
        if msg.markers.said_now is not None and msg.markers.said_now.search(msg.norm.text, start, span[1]):
            return True
    return False


def _last_start(rx: re.Pattern[str], text: str) -> int:
    """Where the last match of ``rx`` in ``text`` starts, or -1."""
    return max((m.start() for m in rx.finditer(text)), default=-1)


def _story_marker(
    text: str, mk: Markers, a: int, b: int, neutral: list[tuple[int, int]]
) -> re.Match[str] | None:
    """The first story marker between ``a`` and ``b`` that is not a likeness ("giống y như trong phim") and does
    not start in a neutral sentence ("…đám giỗ ông nội. bà cụ…" is no "nói" starting a story)."""
    if mk.story is None:
        return None
    return next(
        (
            m
            for m in mk.story.finditer(text, a, b)
            if not _LIKENED.search(text, a, m.start()) and not _inside(m.start(), neutral)
        ),
        None,
    )


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _story_sentences(norm: Normalized, mk: Markers, neutral: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The spans that tell someone else's story: from the first sentence with a story marker ("em xem video…",
    "đọc trên mạng…") to the end of the message, except a later sentence that speaks of now ("Giờ bố em đang…").
    What was said before the story is not part of it, down to the clause ("Bé thở rất nhanh… Em có xem video
    thấy giống y hệt"; "con em vừa nuốt một viên pin, em đọc trên mạng thấy bảo…").
    A sentence where the writer turns from the story to someone real ("đang xem phim thì bố em ngã ra méo
    miệng") is story only up to the turn, and the story ends there.
    A headline or a warning to everyone (``markers.headline``) makes its whole sentence a story, from its start
    ("Người đàn ông bị rắn cắn, được cứu sống…"), up to a turn like any other."""
    text = norm.text
    first = _story_marker(text, mk, 0, len(text), neutral)
    headlines = {(a, b): _headline(text, mk, a, b) for a, b in norm.sentences}
    first_head = next((h for h in headlines.values() if h is not None), None)
    if first is None and first_head is None:
        return set()
    start = min(norm.sentence_at(m.start())[0] for m in (first, first_head) if m is not None)
    spans: set[tuple[int, int]] = set()
    for a, b in norm.sentences:
        if a < start:
            continue
        marker = _story_marker(text, mk, a, b, neutral)
        headline = headlines[(a, b)]
        # a sentence that speaks of now, or that pleads for help to be called now (round 40), is no story
        if (
            not marker
            and not headline
            and (
                mk.present.search(text, a, b)
                or (mk.help_asked is not None and mk.help_asked.search(text, a, b))
            )
        ):
            continue
        # the story starts at the clause of its marker: what the sentence said before it is not part of it
        begin = a if headline or not marker else norm.clause_at(marker.start())[0]
        found = min((m.start() for m in (marker, headline) if m is not None), default=a)
        turn = mk.story_turn.search(text, found, b) if (marker or headline) and mk.story_turn else None
        if (
            turn is not None
            and _story_marker(text, mk, turn.start(), b, neutral) is None
            and (mk.headline is None or mk.headline.search(text, turn.start(), b) is None)
        ):
            spans.add((begin, turn.start()))
            break
        spans.add((begin, b))
    return spans


def _headline(text: str, mk: Markers, a: int, b: int) -> re.Match[str] | None:
    """The headline or warning marker of the sentence ``a``–``b``, unless the sentence asks something: a parent
    asking "bé sốt cao, li bì, có phải là dấu hiệu nguy hiểm không" is no warning to everyone."""
    if mk.headline is None:
        return None
    found = mk.headline.search(text, a, b)
    if found is None or _ASKS.search(text, a, b):
        return None
    return found


def _outside(
    alone: Found, symptoms: Found, severity: Found, norm: Normalized, story: set[tuple[int, int]]
) -> bool:
    """Whether a category's find stands (at least in part) outside the story. A pair may have one half in a
    story sentence when the other half stands in a sentence with no story in it ("Bé thở rất nhanh. Em có xem
    video thấy giống y hệt"); in a sentence the story only begins in, both halves must stand before it."""
    touched = {norm.sentence_at(a) for a, _ in story}

    def out(found: Found) -> Found:
        return [(p, s) for p, s in found if s is None or not any(a <= s[0] < b for a, b in story)]

    def away(found: Found) -> Found:
        return [(p, s) for p, s in found if s is None or norm.sentence_at(s[0]) not in touched]

    return (
        bool(out(alone))
        or _pair(out(symptoms), out(severity)) is not None
        or _pair(away(symptoms), severity) is not None
        or _pair(symptoms, away(severity)) is not None
    )


def _beside_frame(alone: Found, symptoms: Found, severity: Found, frames: list[tuple[int, int]]) -> bool:
    """Whether two independent signs of a category that fired stand outside every learning marker's span (round 37):
    a frame or an idiom may hold one sign ("cãi nhau … thì đau ngực"), not two more told beside it ("vã mồ hôi, ngồi
    không vững"). Two signs are independent when their words do not overlap."""
    signs: list[tuple[int, int]] = []
    for _, span in [*alone, *symptoms, *severity]:
        if span is None or any(span[0] < b and a < span[1] for a, b in frames):
            continue
        if all(span[1] <= s[0] or s[1] <= span[0] for s in signs):
            signs.append(span)
    return len(signs) >= 2


def _word_index(text: str, pos: int) -> int:
    return len(text[:pos].replace(" ; ", " ").split())


def _about_animal(norm: Normalized, mk: Markers, no_animal: list[tuple[int, int]]) -> bool:
    """The message speaks of a pet or farm animal and of no person hurt. "X bị (con chó) cắn" is a person
    bitten unless an animal was named before it ("con bò nhà chú em bị rắn cắn"). Not an animal read inside
    ``no_animal``: a neutral sentence ("…nói ngọng Nhà em không có xe" is no goose, "ngỗng nhà em"), or a word that
    names a food, a place or a thing ("hot dog", "chuồng heo"): the signs told then are a person's (round 38)."""
    firsts = [
        _word_index(norm.text, m.start())
        for m in mk.animal.finditer(norm.text)
        if not any(m.start() < b and a < m.end() for a, b in no_animal)
    ]
    if mk.animal_accented is not None:
        words = [(_word_index(norm.text, a), _word_index(norm.text, b)) for a, b in no_animal]
        for m in mk.animal_accented.finditer(norm.accented):
            first, last = _word_index(norm.accented, m.start()), _word_index(norm.accented, m.end())
            if not any(first < b and a < last for a, b in words):
                firsts.append(first)
    if not firsts or mk.human_hurt.search(norm.text):
        return False
    first = min(firsts)
    return not any(_word_index(norm.text, m.start()) < first for m in mk.bitten.finditer(norm.text))


def _pair_spans(symptoms: Found, severity: Found) -> Found:
    """The symptom phrases that make a pair with a severity phrase (``_pair``), each with its place, and the severity
    phrases they pair with (round 40: "sudden explosive headache while lifting a dog …, now my neck is stiff": the
    severity is told of the writer, so the pair is the writer's)."""
    paired = [
        (p, s)
        for p, s in symptoms
        if s is not None and any(v is None or v[1] <= s[0] or s[1] <= v[0] for _, v in severity)
    ]
    return paired + [
        (p, v)
        for p, v in severity
        if v is not None and any(s is None or v[1] <= s[0] or s[1] <= v[0] for _, s in paired)
    ]


# Who a sign is told of, beside an animal word (round 39). A person: kinship and role words, the writer, an age; an
# animal's name swallows the possessive after it ("con chó nhà em", "con mèo của bố em"); a pronoun ("nó", "he",
# "she", "it") is the last third-person subject named before it; an animal after a preposition or a verb ("chơi với
# con mèo", "walking the dog", "stung while moving the goats") is no subject. The word lists are markers in the rules
# file (``subject_person``, ``subject_person_english``, ``writer_state``, ``animal_object_after``, ``animal_owner``:
# round 40); what stays here is how they are read.
_WRITER = {"toi", "tui", "tao", "em", "i", "me", "my"}
# a body part before the writer ("mặt em sưng", "môi tôi tím"): the writer is told of
_BODY_BEFORE = re.compile(r"(?:^| )(?:mat|moi|mieng|co|hong|tay|chan|nguoi|dau|bung|nguc|luoi|da|tim|mui) $")
# "her" as an object, not a possessive ("licked her and …", not "her face")
_HER_OBJECT = re.compile(
    r"(?: ;|$| (?:and|now|then|on|in|at|badly|hard|twice|again|while|so|but|when)(?![a-z]))"
)
_PRONOUN = re.compile(r"(?<![a-z0-9])(?:no|he|she|it|him|her|they)(?![a-z0-9])")
# the writer only looking on ("em thấy nó …", "I saw her …"): no subject of the sign
_LOOKING = re.compile(
    r" (?:thay|nghe|phat hien|bao|noi|ke|hoi|goi bao|goi dien|nhan tin|saw|see|found|noticed|heard|think|thought|says?|said|told"
    r"|asks?|asked|called|rang|texted|messaged|phoned)(?![a-z])"
)
# a person after a preposition ("the dog I walk for my neighbours", "con chó của bạn em"): no subject
_PERSON_OBJECT = re.compile(
    r"(?:^| )(?:for|to|with|of|by|from|at|voi|cua|giup|ho|walk|walking|feed|feeding) $"
)


def _subjects(norm: Normalized, mk: Markers, no_animal: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The subjects named in an animal message, by word: (first word, word after the last, "animal" or "person"),
    in order; a pronoun is given the kind of the last third-person subject before it. No animal is read inside
    ``no_animal`` (as in ``_about_animal``)."""
    text = norm.text
    found: list[tuple[int, int, str]] = []
    person_rx = mk.subject_person_english if norm.english else mk.subject_person
    state_rx, object_rx, possessed_rx = mk.writer_state, mk.animal_object, mk.animal_possessed
    assert person_rx and state_rx and object_rx and possessed_rx  # required by parse_rules

    def add_animal(first: int, last: int, start: int) -> None:
        # the words before it (in the folded text, from the character ``start``) make it an object
        kind = "object" if object_rx.search(text, max(0, start - 20), start) else "animal"
        found.append((first, last, kind))

    for m in mk.animal.finditer(text):
        if any(m.start() < b and a < m.end() for a, b in no_animal):
            continue
        own = possessed_rx.match(text, m.end())
        end = own.end() if own else m.end()
        add_animal(_word_index(text, m.start()), _word_index(text, end), m.start())
    if mk.animal_accented is not None:
        words = [(_word_index(text, a), _word_index(text, b)) for a, b in no_animal]
        starts = [m.start() for m in re.finditer(r"[^ ;]+", text)]
        for m in mk.animal_accented.finditer(norm.accented):
            first, last = _word_index(norm.accented, m.start()), _word_index(norm.accented, m.end())
            if any(first < b and a < last for a, b in words) or first >= len(starts):
                continue
            at = starts[last] if last < len(starts) else len(text)
            own = possessed_rx.match(text, at - 1) if at > 0 else None
            end = _word_index(text, own.end()) if own and own.end() > at - 1 else last
            add_animal(first, max(last, end), starts[first])
    animals = [(a, b) for a, b, _ in found]
    for m in person_rx.finditer(text):
        first = _word_index(text, m.start())
        if any(a <= first < b for a, b in animals):
            continue
        if _LOOKING.match(text, m.end()) or _PERSON_OBJECT.search(text, max(0, m.start() - 12), m.start()):
            continue
        word = m.group(0)
        if (
            _is_writer(word, norm.english)
            and not state_rx.match(text, m.end())
            and not _BODY_BEFORE.search(text, max(0, m.start() - 8), m.start())
        ):
            continue  # the writer acting ("em cho con chó ăn …"), not told of
        found.append((first, _word_index(text, m.end()), "person"))
    # an animal inside a person's name is no subject ("chủ con mèo", "the dog's owner": the owner is; round 40)
    persons = [(a, b) for a, b, k in found if k == "person"]
    found = [x for x in found if x[2] == "person" or not any(a < x[0] < b for a, b in persons)]
    if not norm.english:
        pronouns = [m for m in _PRONOUN.finditer(text) if m.group(0) == "no"]
    else:
        pronouns = [m for m in _PRONOUN.finditer(text) if m.group(0) != "no"]
    out: list[tuple[int, int, str]] = []
    named = sorted(found)
    words = text.replace(" ; ", " ").split()
    # each word's clause, to tell a pronoun that is a person's object ("bố em ôm nó", "my husband tried to get it out")
    clause_of = [i for i, c in enumerate(text.split(CLAUSE_JOIN)) for _ in c.split()]
    its: set[tuple[int, int]] = set()  # "it" is no person, and names no subject for a later "he" or "she"
    for m in pronouns:
        first = _word_index(text, m.start())
        if any(a <= first < b for a, b, _ in named):
            continue
        word = m.group(0)
        if (
            norm.english
            and (word == "him" or (word == "her" and _HER_OBJECT.match(text, m.end())))
            and any(k == "animal" and b < first and clause_of[a] == clause_of[first] for a, b, k in named)
        ):
            # the animal's object: "the puppy licked her", "it bit him"
            out.append((first, first + 1, "person"))
            continue
        before = [
            (a, b, k)
            for a, b, k in sorted(named + out)
            if b <= first
            and (a, b) not in its
            and not (k == "person" and _is_writer(" ".join(words[a:b]), norm.english))
            and not (k == "person" and b < first and clause_of[a] == clause_of[first] and not norm.english)
        ]
        told = [k for _, _, k in before if k != "object"] or ["animal" for _, _, k in before if k == "object"]
        if word == "it":
            its.add((first, first + 1))
            told = [k for k in told if k == "animal"] or (
                ["animal"] if any(k == "object" for *_, k in before) else []
            )
        if told:
            out.append((first, first + 1, told[-1]))
    return sorted(x for x in named + out if x[2] != "object")


def _is_writer(word: str, english: bool) -> bool:
    return word in _WRITER and (english or word != "me")


def _persons_sign(
    alone: Found, paired: Found, subjects: list[tuple[int, int, str]], norm: Normalized
) -> bool:
    """Whether a sign that counted is told of a person: the nearest subject named before it is one (round 39), or
    the phrase starts with that person ("đồng nghiệp bị con vẹt mổ trúng mắt"); a sign told before any subject is
    the first one's named after it ("sudden explosive headache while lifting a dog …, now my neck is stiff": round
    40)."""
    for _, span in [*alone, *paired]:
        if span is None:
            continue
        at = _word_index(norm.text, span[0])
        before = [k for a, _, k in subjects if a <= at]
        if not before:
            before = [k for a, _, k in subjects if a > at][:1]
        if before and before[-1] == "person":
            return True
    return False


def _drop_yielding(result: Match, rules: RuleSet) -> Match:
    """ "Tiểu đường, hạ đường huyết, lơ mơ" is a low, not also a high: a category that yields to another one
    found in the same message is left out of the answer (it stays a topic)."""
    found = set(result.categories)
    by_id = {c.id: c for c in rules.categories}
    drop = {c for c in found if found.intersection(by_id[c].yields_to)}
    if drop:
        result.categories = [c for c in result.categories if c not in drop]
        result.hits = [h for h in result.hits if h.category not in drop]
    return result
