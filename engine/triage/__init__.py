"""Emergency triage: the first thing every inbound text goes through, on every channel and in every chat state.

It needs nothing but the text: no database, no LLM, no role. ``triage(text)`` says whether the message
describes an emergency (and which), ``answer(result)`` is the message to send first. The knowledge is data:
``emergencies.toml`` (presentations of recognised triage systems and the roles' own emergencies, with
Vietnamese phrasings, severity words and exclusions, first-aid steps with their sources); ``rules.py`` reads
and matches it, ``numbers.py`` reads blood-glucose values, ``model.py`` is a trained second opinion OR-ed with
the rules, ``answer.py`` writes the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

from engine.triage import answer as _answer
from engine.triage.model import DOUBT, THRESHOLD, LazyModel
from engine.triage.normalize import strip_invisible
from engine.triage.numbers import glucose_hits
from engine.triage.rules import Hit, Match, RuleSet, default_rules, match, parse_rules

__all__ = [
    "Hit",
    "LazyModel",
    "RuleSet",
    "Triage",
    "answer",
    "default_model",
    "default_rules",
    "parse_rules",
    "triage",
]

MODEL_CATEGORY = "possible_emergency"  # the model's finds when the rules name no category
# Never doubted by the model: suicidal thoughts told as a question can read to it like the ordinary questions it
# learnt from (faq-val's val-00865, "am I depressed? when idle I think first of suicide", is at P 0.002; with C 1 a
# method asked as a dosage question was at 0.014), and suicide's answer is the crisis text itself. Nor a pregnancy's
# danger signs: a woman who says her baby moves less is never a case to set aside, and the model trained with
# neutral surroundings (model.AUGMENT) put faq-val's val-00777 (22 weeks, dengue, the baby moving little since the
# afternoon) at P 0.009, under the doubt; backtest: no emergency more or less, 5 more false alarms of 22,100 without
# the augmentation (docs/triage.md, "Augmenting the model with surroundings").
# Nor a young child's danger signs (round 35): faq-val's val-00398, a 17-month-old vomiting everything (a WHO general
# danger sign), fell under the doubt at each retrain on new sets (rounds 30, 33, 34, 35), and the rows that brought it
# back cost more each time: in round 35 three rows of that family made the model lose two dev emergencies and four
# real faq-val ones. The backtest (33 freezes, 66 blind sets, after round 35's merge) gives the same 24,560/24,906
# emergencies with and without it and one false alarm more of 26,060; its cost on the labelled sets is two dev false
# alarms and one faq-val flag (val-01029, labelled false).
NEVER_DOUBTED = frozenset({"suicide", "pregnancy", "child_danger"})
# Nor a message shorter than this many words: a flag on a few words ("tía uống thuốc cỏ") leaves the model almost
# nothing to read, and its P there is noise (chosen by the backtest; docs/triage.md, "The doubt on short messages").
DOUBT_MIN_WORDS = 5
# The model reads a message again without its neutral or background sentences only when it is chat-length: one added
# sentence weighs on the TF-IDF vector of a short message, barely on a long one, and in a long account the sentences
# the rules call background (a stay in hospital, the tests done, the writer's worry) are context the model rightly
# weighs (faq-val's val-00205 and val-00207 rose from P 0.81 to 0.93 and 0.98 without them). 99.9 % of the dev
# emergencies have at most 60 words, none more than 80.
READ_AGAIN_WORDS = 60


@dataclass(frozen=True, slots=True)
class Triage:
    """The verdict on one message. ``categories``: emergencies found, most time-critical first; ``topics``:
    categories the message speaks of, even in general (a clinician's question about managing one); ``doubted``:
    categories the rules found but the model judged very unlikely (P < ``model.DOUBT``: "what if the bleeding
    won't stop?"), not an emergency: the message is answered, with a conditional 115 line after it."""

    categories: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    hits: tuple[Hit, ...] = ()
    doubted: tuple[str, ...] = ()

    @property
    def is_emergency(self) -> bool:
        return bool(self.categories)

    def as_trace(self) -> dict[str, object]:
        return {
            "categories": list(self.categories),
            "topics": list(self.topics),
            "hits": [f"{h.category}:{h.kind}:{h.phrase}" for h in self.hits],
            "doubted": list(self.doubted),
        }


NOT_EMERGENCY = Triage()


def triage(text: str, rules: RuleSet | None = None, *, model: LazyModel | None = None) -> Triage:
    """Check one message (any length, any characters). Never raises for odd input.

    The rules decide; when they find nothing, the trained model (``model.py``) may still flag the message
    (P ≥ ``model.THRESHOLD``), under the category the rules spoke of if any, else ``possible_emergency``. When
    they find an emergency from words alone (no glucose reading) and the model puts it under ``model.DOUBT``, it
    is doubted instead (``Triage.doubted``). While the model is not ready, the rules decide alone.
    With the product's rules and model the verdict is cached per text: the channel's guard and the flow's own
    check read the same message one after the other. Invisible characters (soft hyphens, zero-width and bidi
    marks) are dropped at the door, so a message with them is the same message, cached once."""
    text = strip_invisible(text)
    if rules is None:
        if default_model().ready:
            return _triage_cached(text)
        return _triage(text, default_rules(), default_model())
    return _triage(text, rules, model)


@cache
def default_model() -> LazyModel:
    """The product's model, fitted once per process (``warm_up`` starts it in the background)."""
    return LazyModel(default_rules())


# A few thousand verdicts: a guard and a flow reading the same message, and the clinic's busiest hour (a few MB).
@lru_cache(maxsize=4096)
def _triage_cached(text: str) -> Triage:
    return _triage(text, default_rules(), default_model())


def _triage(text: str, rules: RuleSet, model: LazyModel | None) -> Triage:
    readings = glucose_hits(text, rules.glucose)
    found = match(text, rules, readings)
    by_id = {c.id: c for c in rules.categories}
    categories = tuple(found.categories)
    hits = tuple(found.hits)
    topics = tuple(found.topics)
    doubted: tuple[str, ...] = ()
    # a dangerous glucose reading is never doubted
    if (
        categories
        and model is not None
        and not readings
        and not NEVER_DOUBTED & set(categories)
        and len(text.split()) >= DOUBT_MIN_WORDS
    ):
        p = _probability(text, found, rules, model)
        if p is not None and p < DOUBT:
            doubted, categories = categories, ()
            topics = (*topics, *(c for c in doubted if c not in topics))
            hits = (*hits, Hit(doubted[0], "doubt", f"p={p:.3f}"))
    elif not categories and model is not None and not found.general_question:
        p = _probability(text, found, rules, model)
        if p is not None and p >= THRESHOLD:
            spoken_of = [c for c in found.topics if c in by_id]
            categories = (spoken_of[0] if spoken_of else MODEL_CATEGORY,)
            hits = (Hit(categories[0], "model", f"p={p:.2f}"),)
    return Triage(
        categories=categories,
        names=tuple(by_id[c].name for c in categories),
        topics=topics,
        hits=hits,
        doubted=doubted,
    )


def _probability(text: str, found: Match, rules: RuleSet, model: LazyModel) -> float | None:
    """The model's P(emergency) for the message, or for it without its neutral sentences (``Match.told``: "Cảm ơn
    bác sĩ.", "Nhà em không có xe.") when that is higher: a sentence that changes nothing for a nurse does not
    lower the model's verdict either (the context probe); in a chat-length message only (``READ_AGAIN_WORDS``)."""
    told = found.told
    # the rules have normalised the message already; the model's own rules read it the same when their word table
    # is the one the rules used (the product's), so it is not normalised twice
    same_reading = found.read and model.rules.words is rules.words
    p = model.probability_of(found.read) if same_reading else model.probability(text)
    if p is None or not told or len(text.split()) > READ_AGAIN_WORDS:
        return p
    q = model.probability_of(told)
    return p if q is None else max(p, q)


def answer(
    result: Triage,
    *,
    clinic_phone: str | None = None,
    clinic_name: str | None = None,
    clinician: bool = False,
    rules: RuleSet | None = None,
) -> str:
    """The emergency answer for ``result`` (which must be an emergency, or a clinician's emergency topic; when it
    is only doubted, a patient's answer is the conditional line ``answer.doubt_line``)."""
    rules = rules or default_rules()
    by_id = {c.id: c for c in rules.categories}
    if not result.categories and result.doubted and not clinician:
        return _answer.doubt_line([by_id[c] for c in result.doubted])
    ids = result.categories or result.topics
    cats = [by_id[c] for c in ids]
    if not cats:
        raise ValueError("not an emergency")
    if clinician:
        return _answer.clinician_card(cats)
    return _answer.patient_answer(cats, rules, clinic_phone=clinic_phone, clinic_name=clinic_name)
