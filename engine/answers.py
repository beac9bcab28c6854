"""How an answer from the KB is framed for the reader: intro, the entries, a closing line that fits, a source.

- The intro says whose material it is (``Role.answer_intro``, or ``sample_intro`` for MedBot's unreviewed
  sample entries).
- A two-part question answered from two entries gets both, each under its own question.
- The closing line comes from the role's rule table (``Role.closing_for``: the entry's topic and the patient's
  message decide; none after an urgent entry), with the clinic's booking link or phone for ``{booking}``.
- The source line: KB codes for clinicians (they look entries up by code); a patient reads a plain line
  naming the clinic's material (or MedBot's sample material) and the topic.
"""

from __future__ import annotations

from engine import texts
from engine.clinic import ClinicProfile
from engine.roles import Role
from engine.types import KBEntry


def source_line(role: Role, entries: list[KBEntry]) -> str:
    if not entries:
        return ""
    if role.clinician:
        return texts.SOURCE_CODES.format(codes=", ".join(dict.fromkeys(e.code for e in entries)))
    topics = [t for t in dict.fromkeys(e.topic.strip() for e in entries) if t]
    where = texts.SOURCE_SAMPLE if any(e.sample for e in entries) else texts.SOURCE_CLINIC
    if topics:
        where += texts.SOURCE_TOPICS.format(
            topics=", ".join(texts.TOPIC_QUOTED.format(topic=t) for t in topics)
        )
    return texts.SOURCE.format(where=where)


def closing_line(role: Role, entries: list[KBEntry], message: str, clinic: ClinicProfile) -> str:
    """The first fitting closing line over the entries; none when any entry is urgent."""
    if any(e.urgent for e in entries):
        return ""
    for e in entries:
        line = role.closing_for(e.topic, e.question, message)
        if line:
            return line.replace("{booking}", clinic.booking_hint())
    return ""


def intro_for(role: Role, entries: list[KBEntry]) -> str:
    return role.sample_intro if any(e.sample for e in entries) else role.answer_intro


def curated_answer(role: Role, entries: list[KBEntry], message: str, clinic: ClinicProfile) -> str:
    """One entry, or the two entries of a two-part question, framed for the reader."""
    parts = [intro_for(role, entries)]
    for e in entries:
        parts += [f"❓ {e.question}".strip() if e.question else "", e.answer.strip(), e.explanation.strip()]
    parts += [closing_line(role, entries, message, clinic), source_line(role, entries)]
    return "\n\n".join(p for p in parts if p)
