"""What staff may decide after an import's dry run, whichever channel shows it (the Telegram admin flow, the
clinic console): the plain import, the separate confirmation to hide a large share of a role, or adding and
updating only.

An import that would hide a large share of a role (``ImportReport.needs_confirmation``,
``kb_import.limits.large_hide``) is never offered the plain "import": only the explicit confirmation
(``force``) and "add and update only" (``keep_missing``). ``force`` takes effect only when the confirmation
was offered for that file, so a forged "force" on an ordinary file is an ordinary import (which the job
refuses if, meanwhile, it would hide a large share).
"""

from __future__ import annotations

IMPORT = "ok"  # import the file as checked
FORCE = "force"  # import it, confirming that it hides a large share of a role
KEEP = "keep"  # add and update only: hide nothing
DECISIONS = (IMPORT, FORCE, KEEP)


def choices(*, needs_confirmation: bool, hidden: int) -> list[str]:
    """The decisions to offer after a dry run that passed, in the order to show them."""
    if needs_confirmation:
        return [FORCE, KEEP]
    return [IMPORT, KEEP] if hidden else [IMPORT]


def import_flags(decision: str, *, confirm_offered: bool) -> tuple[bool, bool] | None:
    """``(force, keep_missing)`` for ``decision``; None when it is no import decision (cancel, unknown)."""
    if decision not in DECISIONS:
        return None
    return decision == FORCE and confirm_offered, decision == KEEP
