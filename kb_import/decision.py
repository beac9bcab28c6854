"""What staff may decide after an import's dry run, whichever channel shows it (the Telegram admin flow, the
clinic console): the plain import, the separate confirmation to hide a large share of a role, adding and
updating only, or importing only the entries nobody changed in the clinic console.

An import that would hide a large share of a role (``ImportReport.needs_confirmation``,
``kb_import.limits.large_hide``) is never offered the plain "import": only the explicit confirmation
(``force``) and "add and update only" (``keep_missing``). ``force`` takes effect only when the confirmation
was offered for that file, so a forged "force" on an ordinary file is an ordinary import (which the job
refuses if, meanwhile, it would hide a large share).

A dry run that would undo changes made in the console (``ImportReport.console_changes``: overwrite a doctor's
edit, hide an entry a doctor created, …) offers first "import only the entries not changed in the console"
(``keep_console_edits``: the file is applied, those entries stay as they are), then the plain import, which
the channels label as undoing them. It is not offered beside the large-hide confirmation: there the choices
stay the two explicit ones (the list of console changes is still shown), so that no button combines
"hide many" with "keep some" in one label. Choosing it is honoured on any file: it only ever writes less.
"""

from __future__ import annotations

from typing import NamedTuple

IMPORT = "ok"  # import the file as checked
FORCE = "force"  # import it, confirming that it hides a large share of a role
KEEP = "keep"  # add and update only: hide nothing
KEEP_EDITS = "edits"  # import it, leaving the entries changed in the console as they are
DECISIONS = (IMPORT, FORCE, KEEP, KEEP_EDITS)


class Flags(NamedTuple):
    """The import options a decision sets."""

    force: bool
    keep_missing: bool
    keep_console_edits: bool


def choices(*, needs_confirmation: bool, hidden: int, console_changes: int = 0) -> list[str]:
    """The decisions to offer after a dry run that passed, in the order to show them (the safest first)."""
    if needs_confirmation:
        return [FORCE, KEEP]
    edits = [KEEP_EDITS] if console_changes else []
    return [*edits, IMPORT, KEEP] if hidden else [*edits, IMPORT]


def import_flags(decision: str, *, confirm_offered: bool) -> Flags | None:
    """The options for ``decision``; None when it is no import decision (cancel, unknown)."""
    if decision not in DECISIONS:
        return None
    return Flags(decision == FORCE and confirm_offered, decision == KEEP, decision == KEEP_EDITS)
