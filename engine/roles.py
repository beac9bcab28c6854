"""Roles and personas, from configuration (``engine/data/roles.toml`` or a file given by the caller).

A role selects a KB (``kb_role``) and a persona: who the bot speaks as, to whom, in which tone, the greeting,
how an answer is framed, and optionally its own score threshold. Adding a role is a TOML edit, no code.

``section`` (optional) is the specialty's short name used in a sentence ("Câu hỏi này có vẻ thuộc mục Tiểu
đường"); by default the label without its emoji and its bracketed audience.

How an answer is framed: ``answer_intro`` before an entry the clinic has made its own, ``sample_intro``
before an entry of MedBot's shipped sample KB that the clinic's doctors have not reviewed (it must not claim
to come from them; defaults to a patient or a clinician wording), then a closing line chosen by the entry and
the patient's situation (never after an urgent entry).

Closing lines are a rule table per role (``[[roles.<key>.closing]]``): the first rule that fits gives the line.
A rule fits when the entry's topic (ĐỀ MỤC) is one of its ``topics`` (or it names none) and the entry's
question, topic or the patient's message mention one of its ``words`` (or it names none), and none of its
``unless`` words; everything is compared without diacritics. ``{booking}`` in a line becomes the clinic's
booking link or phone in brackets (nothing when neither is set). No rule fits: no closing line. A role with no
rules falls back to ``answer_outro`` after every routine entry (how roles were written before the table).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.text import fold_plain

ROLES_FILE = Path(__file__).parent / "data" / "roles.toml"

SAMPLE_INTRO = (
    "Thông tin dưới đây lấy từ bộ tài liệu mẫu của MedBot, chưa được bác sĩ của phòng khám duyệt lại:"
)
CLINICIAN_SAMPLE_INTRO = (
    "Thông tin chuyên môn dành cho nhân viên y tế, theo bộ tài liệu mẫu của MedBot (chưa được phòng khám "
    "thẩm định):"
)


@dataclass(frozen=True, slots=True)
class Closing:
    """One row of a role's closing-line table."""

    text: str
    topics: tuple[str, ...] = ()  # folded ĐỀ MỤC names; empty: any topic
    words: tuple[str, ...] = ()  # folded words, one of which the entry or the message must mention
    unless: tuple[str, ...] = ()  # folded words that rule the line out

    def fits(self, topic: str, text: str) -> bool:
        """``topic`` and ``text`` folded (no diacritics, lowercase, single spaces)."""
        padded = f" {text} "
        if self.topics and topic not in self.topics:
            return False
        if self.words and not any(f" {w} " in padded for w in self.words):
            return False
        return not any(f" {w} " in padded for w in self.unless)


@dataclass(frozen=True, slots=True)
class Role:
    key: str
    label: str
    persona: str
    audience: str
    tone: str
    greeting: str
    answer_intro: str = ""
    answer_outro: str = ""
    score_threshold: float | None = None
    kb_role: str = ""
    clinician: bool = False  # a role for clinic staff: clinical answers first, the emergency card after them
    sample_intro: str = SAMPLE_INTRO  # before an answer from unreviewed sample material
    closings: tuple[Closing, ...] = ()
    section: str = ""  # the specialty's short name in a sentence ("Tiểu đường"); default: from the label

    @property
    def name(self) -> str:
        """The specialty as a sentence names it: ``section``, else the label without its emoji and its
        bracketed audience ("🩸 Tiểu đường (bệnh nhân)" → "Tiểu đường")."""
        if self.section:
            return self.section
        words = [w for w in self.label.split("(")[0].split() if any(c.isalnum() for c in w)]
        return " ".join(words) or self.key

    def closing_for(self, topic: str, question: str, message: str) -> str:
        """The closing line for an answer from an entry of ``topic`` to ``message`` (may hold ``{booking}``)."""
        if not self.closings:
            return self.answer_outro
        text = fold_plain(f"{question} {topic} {message}")
        folded_topic = fold_plain(topic)
        return next((c.text for c in self.closings if c.fits(folded_topic, text)), "")

    @property
    def kb(self) -> str:
        return self.kb_role or self.key


GENERIC_ROLE = Role(
    key="generic",
    label="Hỏi đáp sức khỏe",
    persona="trợ lý sức khỏe của phòng khám",
    audience="người bệnh",
    tone="thân thiện, dễ hiểu",
    greeting="Chào bạn! Mình là trợ lý sức khỏe của phòng khám. Bạn cần hỏi gì ạ?",
    answer_intro="Mình xin chia sẻ thông tin từ tài liệu của phòng khám:",
)


def parse_roles(text: str) -> dict[str, Role]:
    data = tomllib.loads(text)
    roles: dict[str, Role] = {}
    for key, spec in data.get("roles", {}).items():
        missing = [f for f in ("label", "persona", "audience", "tone", "greeting") if not spec.get(f)]
        if missing:
            raise ValueError(f"role {key}: missing {', '.join(missing)}")
        threshold = spec.get("score_threshold")
        clinician = bool(spec.get("clinician", False))
        if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
            raise ValueError(f"role {key}: score_threshold must be between 0 and 1")
        closings = tuple(
            Closing(
                text=str(rule["text"]).strip(),
                topics=tuple(fold_plain(t) for t in rule.get("topics", [])),
                words=tuple(fold_plain(w) for w in rule.get("words", [])),
                unless=tuple(fold_plain(w) for w in rule.get("unless", [])),
            )
            for rule in spec.get("closing", [])
        )
        if any(not c.text for c in closings):
            raise ValueError(f"role {key}: every closing rule needs a text")
        roles[key] = Role(
            key=key,
            label=spec["label"],
            persona=spec["persona"],
            audience=spec["audience"],
            tone=spec["tone"],
            greeting=spec["greeting"],
            answer_intro=spec.get("answer_intro", ""),
            answer_outro=spec.get("answer_outro", ""),
            score_threshold=float(threshold) if threshold is not None else None,
            kb_role=spec.get("kb_role", ""),
            clinician=clinician,
            sample_intro=spec.get("sample_intro") or (CLINICIAN_SAMPLE_INTRO if clinician else SAMPLE_INTRO),
            closings=closings,
            section=str(spec.get("section", "")).strip(),
        )
    return roles


@lru_cache(maxsize=8)
def load_roles(path: Path = ROLES_FILE) -> dict[str, Role]:
    """All roles of a TOML file (cached per path)."""
    return parse_roles(Path(path).read_text(encoding="utf-8"))


def unknown_role_message(key: str, roles: Iterable[str]) -> str:
    """What an operator reads (Vietnamese) when a command names ``key`` and it is none of ``roles``: the roles
    there are, so the next try can be right."""
    return f"không có chuyên khoa '{key}'; các chuyên khoa: {', '.join(roles)}"


def get_role(key: str, roles: dict[str, Role] | None = None) -> Role:
    """The role ``key``; an unknown key gets a generic persona reading the KB of that name."""
    roles = load_roles() if roles is None else roles
    role = roles.get(key)
    if role is None:
        return Role(**{**{f: getattr(GENERIC_ROLE, f) for f in GENERIC_ROLE.__slots__}, "key": key})
    return role
