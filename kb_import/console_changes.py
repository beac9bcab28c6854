"""Which of the clinic console's changes an import would undo, in plain Vietnamese.

Doctors edit, create, hide and show again KB entries in the console (``kb_import.curate``, recorded in
``kb_entry_history``). A spreadsheet is the whole KB of each role it holds, so importing an older file would
silently put back what a doctor corrected. For each entry the console changed since an import last wrote it
(``db.kb_console_changes``), the net change is what the console made of the entry compared with what the
last import left (an edit undone by a later revert, or a hide followed by "show again", is no change), and
the import would undo it when:

- ``overwrite``: the file holds the entry with other content than the console's current one (a
  console-created entry counts as changed content);
- ``show``: the console hid the entry and the file holds it, so the import shows it again (and writes the
  file's content);
- ``hide``: the file lacks the entry, which is active and whose content the console changed (or created):
  the import hides it;
- ``hide_again``: the file lacks the entry, which the console showed again: the import hides it again.

An entry the file holds with exactly the console's current content (and that stays shown or hidden as it
is) is not listed. ``keep_missing`` imports hide nothing, so they only ever ``overwrite`` or ``show``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from db.kb_console_changes import ChangedEntry
from kb_import.curate import content

OVERWRITE, SHOW, HIDE, HIDE_AGAIN = "overwrite", "show", "hide", "hide_again"

KIND_VI = {
    "edit": "sửa",
    "create": "tạo",
    "hide": "ẩn",
    "restore": "hiện lại",
    "revert": "khôi phục bản cũ",
}


@dataclass(frozen=True, slots=True)
class UndoneChange:
    """A console change the import would undo (a dry run) or did undo (an applied import)."""

    role: str
    code: str
    question: str
    kind: str  # the console's latest change: edit | create | hide | restore | revert
    changed_by: str | None
    changed_at: datetime
    action: str  # overwrite | show | hide | hide_again
    content_changed: bool  # the console's content is lost (overwritten, or hidden with the entry)

    def what_vi(self) -> str:
        """What the import does to it, e.g. "file này sẽ ghi đè nội dung đã sửa"."""
        edited = "nội dung mục tạo trên trang quản trị" if self.kind == "create" else "nội dung đã sửa"
        if self.action == OVERWRITE:
            return f"file này sẽ ghi đè {edited}"
        if self.action == SHOW:
            extra = f" và ghi đè {edited}" if self.content_changed else ""
            return f"file này sẽ hiện lại mục đã bị ẩn{extra}"
        if self.action == HIDE_AGAIN:
            return "file này không có mã này nên sẽ ẩn lại mục đã được hiện lại"
        return "file này không có mã này nên sẽ ẩn mục"

    def line_vi(self, *, question_chars: int = 0) -> str:
        """``NK-003 “Câu hỏi…” — sửa trên trang quản trị bởi lan@… lúc 28/11 14:05: file này sẽ ghi đè nội
        dung đã sửa``; the question cut to ``question_chars`` (0: whole)."""
        who = self.changed_by or "(tài khoản đã xoá)"
        at = self.changed_at.astimezone().strftime("%d/%m %H:%M")
        question = self.question
        if question_chars and len(question) > question_chars:
            question = question[: question_chars - 1].rstrip() + "…"
        return (
            f"{self.code} “{question}” — {KIND_VI.get(self.kind, self.kind)} trên trang quản trị bởi {who} "
            f"lúc {at}: {self.what_vi()}"
        )


def undone_changes(
    changed: list[ChangedEntry],
    file_hashes: Mapping[tuple[str, str], str],
    keep_codes: Mapping[str, set[str]],
    *,
    keep_missing: bool,
) -> list[UndoneChange]:
    """The changes of ``changed`` an import would undo. ``file_hashes``: (role, code) → content hash of the
    file's rows; ``keep_codes``: per role, codes the import leaves alone although the file lacks a row for
    them (skipped invalid rows, the template's example); ``keep_missing``: the import hides nothing."""
    undone: list[UndoneChange] = []
    for entry in changed:
        base_active = bool(entry.baseline.get("active", True))
        active = bool(entry.current["active"])
        content_changed = entry.created or content(entry.baseline) != content(entry.current)
        if not content_changed and base_active == active:
            continue  # the console's changes cancel out: nothing of theirs to lose
        file_hash = file_hashes.get((entry.role, entry.code))
        if file_hash is not None:
            overwrites = content_changed and file_hash != entry.content_hash
            if base_active and not active:
                action = SHOW  # hidden in the console; the file's row shows it again
            elif overwrites:
                action = OVERWRITE
            else:
                continue  # the file holds the console's own content
            content_changed = overwrites
        elif keep_missing or not active or entry.code in keep_codes.get(entry.role, set()):
            continue  # the import leaves the entry as it is
        else:
            action = HIDE if content_changed else HIDE_AGAIN
        undone.append(
            UndoneChange(
                entry.role,
                entry.code,
                str(entry.current["question"]),
                entry.kind,
                entry.changed_by,
                entry.changed_at,
                action,
                content_changed,
            )
        )
    return undone
