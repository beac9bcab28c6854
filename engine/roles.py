"""Roles and personas, from configuration (``engine/data/roles.toml`` or a file given by the caller).

A role selects a KB (``kb_role``) and a persona: who the bot speaks as, to whom, in which tone, the greeting,
how an answer is framed, and optionally its own score threshold. Adding a role is a TOML edit, no code.

How an answer is framed: ``answer_intro`` before an entry the clinic has made its own, ``sample_intro``
before an entry of MedBot's shipped sample KB that the clinic's doctors have not reviewed (it must not claim
to come from them; defaults to a patient or a clinician wording), ``answer_outro`` after a routine entry
(never after an urgent one).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROLES_FILE = Path(__file__).parent / "data" / "roles.toml"

SAMPLE_INTRO = "Thông tin dưới đây lấy từ bộ tài liệu mẫu của MedBot, chưa được bác sĩ của phòng khám duyệt lại:"
CLINICIAN_SAMPLE_INTRO = (
    "Thông tin chuyên môn dành cho nhân viên y tế, theo bộ tài liệu mẫu của MedBot (chưa được phòng khám "
    "thẩm định):"
)


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
        )
    return roles


@lru_cache(maxsize=8)
def load_roles(path: Path = ROLES_FILE) -> dict[str, Role]:
    """All roles of a TOML file (cached per path)."""
    return parse_roles(Path(path).read_text(encoding="utf-8"))


def get_role(key: str, roles: dict[str, Role] | None = None) -> Role:
    """The role ``key``; an unknown key gets a generic persona reading the KB of that name."""
    roles = load_roles() if roles is None else roles
    role = roles.get(key)
    if role is None:
        return Role(**{**{f: getattr(GENERIC_ROLE, f) for f in GENERIC_ROLE.__slots__}, "key": key})
    return role
