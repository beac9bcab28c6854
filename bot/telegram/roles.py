"""Vietnamese labels of the roles (specialities) a user can pick.

The engine owns the role definitions (``engine/data/roles.toml``); when that file is present its labels
win, otherwise these defaults are used so the channel works on its own.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

DEFAULT_LABELS: dict[str, str] = {
    "patient_dental": "🦷 Nha khoa (bệnh nhân)",
    "patient_diabetes": "🩸 Tiểu đường (bệnh nhân)",
    "doctor_dental": "👨‍⚕️ Bác sĩ nha khoa",
    "doctor_endocrine": "👩‍⚕️ Bác sĩ nội tiết",
}
ROLES_TOML = Path(__file__).resolve().parents[2] / "engine" / "data" / "roles.toml"


def _label_of(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("label", "label_vi", "name_vi", "name", "title"):
            if isinstance(value.get(key), str) and value[key].strip():
                return str(value[key]).strip()
    return None


@lru_cache(maxsize=1)
def role_labels() -> dict[str, str]:
    """Role name → label, engine's roles.toml first (tables ``[role]`` or ``[roles.role]``)."""
    labels = dict(DEFAULT_LABELS)
    try:
        data = tomllib.loads(ROLES_TOML.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return labels
    tables = data.get("roles", data)
    if isinstance(tables, dict):
        for name, value in tables.items():
            label = _label_of(value)
            if label:
                labels[name] = label
    return labels


def role_label(role: str | None) -> str:
    if not role:
        return "chưa chọn"
    return role_labels().get(role, role)
