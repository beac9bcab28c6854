"""Vietnamese labels of the roles (specialities) a user can pick, from the engine's role configuration."""

from __future__ import annotations

from functools import lru_cache

from engine import load_roles


@lru_cache(maxsize=1)
def role_labels() -> dict[str, str]:
    """Role key → label, in the order of ``engine/data/roles.toml``."""
    return {key: role.label for key, role in load_roles().items()}


def role_label(role: str | None) -> str:
    if not role:
        return "chưa chọn"
    return role_labels().get(role, role)
