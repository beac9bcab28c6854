"""Emergency triage: the first thing every inbound text goes through, on every channel and in every chat state.

It needs nothing but the text: no database, no LLM, no role. ``triage(text)`` says whether the message
describes an emergency (and which), ``answer(result)`` is the message to send first. The knowledge is data:
``emergencies.toml`` (presentations of recognised triage systems and the roles' own emergencies, with
Vietnamese phrasings, severity words and exclusions, first-aid steps with their sources); ``rules.py`` reads
and matches it, ``numbers.py`` reads blood-glucose values, ``answer.py`` writes the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.triage import answer as _answer
from engine.triage.numbers import glucose_hits
from engine.triage.rules import Hit, RuleSet, default_rules, match, parse_rules

__all__ = ["Hit", "RuleSet", "Triage", "answer", "default_rules", "parse_rules", "triage"]


@dataclass(frozen=True, slots=True)
class Triage:
    """The verdict on one message. ``categories``: emergencies found, most time-critical first; ``topics``:
    categories the message speaks of, even in general (a clinician's question about managing one)."""

    categories: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    hits: tuple[Hit, ...] = ()

    @property
    def is_emergency(self) -> bool:
        return bool(self.categories)

    def as_trace(self) -> dict[str, object]:
        return {
            "categories": list(self.categories),
            "topics": list(self.topics),
            "hits": [f"{h.category}:{h.kind}:{h.phrase}" for h in self.hits],
        }


NOT_EMERGENCY = Triage()


def triage(text: str, rules: RuleSet | None = None) -> Triage:
    """Check one message (any length, any characters). Never raises for odd input.

    With the product's rules the verdict is cached per text: the channel's guard and the flow's own check
    read the same message one after the other."""
    if rules is None:
        return _triage_default(text or "")
    return _triage(text or "", rules)


@lru_cache(maxsize=1024)
def _triage_default(text: str) -> Triage:
    return _triage(text, default_rules())


def _triage(text: str, rules: RuleSet) -> Triage:
    found = match(text or "", rules, glucose_hits(text or "", rules.glucose))
    by_id = {c.id: c for c in rules.categories}
    return Triage(
        categories=tuple(found.categories),
        names=tuple(by_id[c].name for c in found.categories),
        topics=tuple(found.topics),
        hits=tuple(found.hits),
    )


def answer(
    result: Triage, *, clinic_phone: str | None = None, clinician: bool = False, rules: RuleSet | None = None
) -> str:
    """The emergency answer for ``result`` (which must be an emergency, or a clinician's emergency topic)."""
    rules = rules or default_rules()
    by_id = {c.id: c for c in rules.categories}
    ids = result.categories or result.topics
    cats = [by_id[c] for c in ids]
    if not cats:
        raise ValueError("not an emergency")
    if clinician:
        return _answer.clinician_card(cats)
    return _answer.patient_answer(cats, rules, clinic_phone=clinic_phone)
