"""KB curation by the clinic's doctors (the console's edit, new-entry, hide/restore and history pages),
channel-free: each change is validated like a spreadsheet row (``kb_import.validate.validate_entry``),
stored as an import stores it (folded search text, content hash, a vector when the question or answer
changed — embedded BEFORE the transaction, so a failing embedder changes nothing), and in ONE transaction
the version it replaces goes into ``kb_entry_history`` and the role's KB version is bumped, so the bot
answers with the new text at once.

An edit names the entry's ``updated_at`` as its form showed it; when the entry changed since (someone else
saved in between) the edit is refused (:class:`Conflict`), never written over the other change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg
import numpy as np

from db import kb, kb_edit
from db.kb_edit import StoredEntry
from engine import Embedder, passage_text
from kb_import.texts import content_hash, search_text
from kb_import.validate import Row, validate_entry

# The fields a doctor edits (the code and role are fixed once the entry exists).
CONTENT_FIELDS = ("topic", "subtopic", "question", "answer", "keywords", "explanation", "urgent")


class Conflict(Exception):
    """The entry changed since the form was opened."""


class NotFound(Exception):
    """No such entry (or history version)."""


@dataclass(slots=True)
class Invalid(Exception):
    """What is wrong with the typed entry, a Vietnamese message per field."""

    errors: dict[str, str] = field(default_factory=dict)


def form_values(fields: dict[str, Any]) -> dict[str, str]:
    """Stored (or snapshot) fields as the form shows them: keywords joined with ``; ``, urgent as ``x``."""
    return {
        "topic": fields.get("topic", ""),
        "subtopic": fields.get("subtopic", ""),
        "question": fields.get("question", ""),
        "answer": fields.get("answer", ""),
        "keywords": "; ".join(fields.get("keywords", [])),
        "explanation": fields.get("explanation", ""),
        "urgent": "x" if fields.get("urgent") else "",
    }


def check(values: dict[str, str], role: str, code: str) -> Row:
    """The typed entry as a clean row, or :class:`Invalid` with the message of each wrong field."""
    row, errors = validate_entry({**values, "code": code}, role)
    if row is None:
        raise Invalid(errors)
    return row


def content(source: Row | StoredEntry | dict[str, Any]) -> dict[str, Any]:
    """The content fields of a validated row, a stored entry or a history snapshot, comparable with ``==``."""
    fields = source if isinstance(source, dict) else {name: getattr(source, name) for name in CONTENT_FIELDS}
    return {
        name: list(fields[name])
        if name == "keywords"
        else bool(fields[name])
        if name == "urgent"
        else fields[name]
        for name in CONTENT_FIELDS
    }


class EmbeddingFailed(Exception):
    """The embedder could not embed the new text; nothing was written."""


async def _vector(embedder: Embedder, question: str, answer: str) -> np.ndarray:
    try:
        return (await embedder.embed_passages([passage_text(question, answer)]))[0]
    except Exception as exc:  # a server down, a model that failed to load: the KB stays as it was
        raise EmbeddingFailed(str(exc)) from exc


async def _store(
    conn: Any, embedder: Embedder, entry_id: int, fields: dict[str, Any], vector: np.ndarray | None
) -> None:
    row = _Fields(fields)
    await kb_edit.update_content(
        conn,
        entry_id,
        fields,
        search_text=search_text(row),
        content_hash=content_hash(row),
        embedding=vector,
        embedding_model=embedder.name if vector is not None else None,
    )


class _Fields:
    """A dict of content fields read as ``kb_import.texts.EntryFields``."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.topic: str = fields["topic"]
        self.subtopic: str = fields["subtopic"]
        self.question: str = fields["question"]
        self.answer: str = fields["answer"]
        self.explanation: str = fields["explanation"]
        self.keywords: list[str] = list(fields["keywords"])
        self.urgent: bool = bool(fields["urgent"])


async def _after(conn: Any, entry_id: int) -> StoredEntry:
    """The entry as the change being made left it (read in the change's transaction)."""
    after = await kb_edit.read_entry(conn, entry_id)
    assert after is not None  # locked by this transaction
    return after


async def edit(
    pool: asyncpg.Pool,
    embedder: Embedder,
    entry_id: int,
    values: dict[str, str],
    *,
    seen: datetime | None,
    staff_id: int,
) -> list[str]:
    """Save a doctor's edit of the entry; the names of the fields it changed (none: nothing is written).
    Raises :class:`NotFound`, :class:`Invalid` or :class:`Conflict` (changed since ``seen``)."""
    before = await kb_edit.read_entry(pool, entry_id)
    if before is None:
        raise NotFound
    new = content(check(values, before.role, before.code))
    if seen != before.updated_at:
        raise Conflict
    old = content(before)
    changed = [name for name in CONTENT_FIELDS if new[name] != old[name]]
    if not changed:
        return []
    changed_text = (new["question"], new["answer"]) != (before.question, before.answer)
    vector = await _vector(embedder, new["question"], new["answer"]) if changed_text else None
    await _apply(pool, embedder, entry_id, new, vector, "edit", staff_id, seen=seen)
    return changed


async def _apply(
    pool: asyncpg.Pool,
    embedder: Embedder,
    entry_id: int,
    new: dict[str, Any],
    vector: np.ndarray | None,
    kind: str,
    staff_id: int,
    *,
    seen: datetime | None = None,
) -> None:
    async with pool.acquire() as conn, conn.transaction():
        locked = await kb_edit.lock_entry(conn, entry_id)
        if locked is None:
            raise NotFound
        if seen is not None and locked.updated_at != seen:
            raise Conflict  # saved by someone else while the text was being embedded
        await _store(conn, embedder, entry_id, new, vector)
        await kb_edit.record(conn, locked, await _after(conn, entry_id), kind, staff_id)
        await kb.bump_version(conn, locked.role)


async def create(
    pool: asyncpg.Pool, embedder: Embedder, role: str, code: str, values: dict[str, str], *, staff_id: int
) -> int:
    """A new entry of ``role``; its id. Raises :class:`Invalid` (also when ``code`` is taken in the role)."""
    row = check(values, role, code)
    if await kb_edit.code_taken(pool, role, row.code):
        raise Invalid({"code": f"Mã số “{row.code}” đã có trong kho kiến thức này; hãy chọn mã khác."})
    new = content(row)
    vector = await _vector(embedder, row.question, row.answer)
    async with pool.acquire() as conn, conn.transaction():
        entry_id = await kb_edit.insert_entry(
            conn,
            role,
            row.code,
            new,
            search_text=search_text(row),
            content_hash=content_hash(row),
            embedding=vector,
            embedding_model=embedder.name,
        )
        if entry_id is None:  # added by someone else a moment ago
            raise Invalid({"code": f"Mã số “{row.code}” đã có trong kho kiến thức này; hãy chọn mã khác."})
        created = await _after(conn, entry_id)
        await kb_edit.record(conn, created, created, "create", staff_id)
        await kb.bump_version(conn, role)
    return entry_id


async def set_hidden(pool: asyncpg.Pool, entry_id: int, hidden: bool, *, staff_id: int) -> StoredEntry | None:
    """Hide the entry from the bot (or show it again); the entry as it was, None when it already was so.
    Raises :class:`NotFound`."""
    async with pool.acquire() as conn, conn.transaction():
        locked = await kb_edit.lock_entry(conn, entry_id)
        if locked is None:
            raise NotFound
        if locked.active != hidden:
            return None
        await kb_edit.set_active(conn, entry_id, not hidden)
        await kb_edit.record(
            conn, locked, await _after(conn, entry_id), "hide" if hidden else "restore", staff_id
        )
        await kb.bump_version(conn, locked.role)
    return locked


async def revert(
    pool: asyncpg.Pool, embedder: Embedder, entry_id: int, history_id: int, *, staff_id: int
) -> bool:
    """Put the text of an older version (a history row) back; False when the entry already reads so.
    Raises :class:`NotFound`."""
    version = await kb_edit.history_row(pool, entry_id, history_id)
    current = await kb_edit.read_entry(pool, entry_id)
    if version is None or current is None:
        raise NotFound
    old = content(version.snapshot)
    if old == content(current):
        return False
    changed_text = (old["question"], old["answer"]) != (current.question, current.answer)
    vector = await _vector(embedder, old["question"], old["answer"]) if changed_text else None
    await _apply(pool, embedder, entry_id, old, vector, "revert", staff_id, seen=current.updated_at)
    return True
