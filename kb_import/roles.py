"""The roles a KB file can target, and how a sheet name or a cell names one.

A role is named by its id (``patient_dental``) or its Vietnamese label (``Bệnh nhân nha khoa``), compared
folded (case, spaces, diacritics ignored). The four built-in roles are always known; callers add the roles
already present in the database. An explicit ``--role`` may create a new role if it is a well-formed id.
"""

from __future__ import annotations

import re

from kb_import.headers import fold_key

BUILTIN_ROLES: dict[str, str] = {
    "patient_dental": "Bệnh nhân nha khoa",
    "patient_diabetes": "Bệnh nhân đái tháo đường",
    "doctor_dental": "Bác sĩ nha khoa",
    "doctor_endocrine": "Bác sĩ nội tiết",
}

ROLE_ID = re.compile(r"^[a-z][a-z0-9_]{1,62}$")


def resolve_role(name: str, known: set[str] | frozenset[str]) -> str | None:
    """The role id a sheet name or cell means, or None when it names no known role."""
    key = fold_key(name)
    if not key:
        return None
    for role in known:
        if key == fold_key(role) or key == fold_key(BUILTIN_ROLES.get(role, "\0")):
            return role
    return None


def known_roles(extra: list[str] | set[str] | tuple[str, ...] = ()) -> frozenset[str]:
    return frozenset(BUILTIN_ROLES) | frozenset(extra)


def role_label(role: str) -> str:
    """A role as staff read it in messages: ``patient_dental (Bệnh nhân nha khoa)``, or the id alone."""
    label = BUILTIN_ROLES.get(role)
    return f"{role} ({label})" if label else role
