"""The derived text of a KB entry: what is embedded, the folded search text, and the content hash.

* Embedding text: the question alone (the dense leg matches a patient's message against the doctor's
  question; E5 does best question-to-question, and keywords full of no-diacritic variants only blur the
  vector, the sparse leg already uses them). When the question is blank, the first 2,000
  characters of the answer, so the entry is still found by its answer.
* Search text: the folded (lowercase, no diacritics) question, keywords, topic, subtopic and answer, in that
  order — a convenience column for SQL-side search and debugging; the in-memory TF-IDF index of the
  retrieval code weighs the fields itself.
* Content hash: sha256 over every stored field except role and code; equal hashes mean "unchanged". The
  urgent flag joins the hashed fields only when set, so the hashes of entries stored before it existed (all
  not urgent) did not change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Protocol

from engine.embedding import passage_text
from engine.text import fold_spaced


class EntryFields(Protocol):
    """The stored fields of an entry, read-only: a validated spreadsheet row or an entry added by hand."""

    @property
    def topic(self) -> str: ...
    @property
    def subtopic(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def answer(self) -> str: ...
    @property
    def explanation(self) -> str: ...
    @property
    def keywords(self) -> Sequence[str]: ...
    @property
    def urgent(self) -> bool: ...


def embedding_text(question: str, answer: str) -> str:
    return passage_text(question, answer)


def search_text(row: EntryFields) -> str:
    parts = [row.question, " ; ".join(row.keywords), row.topic, row.subtopic, row.answer]
    return fold_spaced(" \n ".join(p for p in parts if p))


def content_hash(row: EntryFields) -> str:
    keywords = list(row.keywords)  # a tuple would hash like the list it equals
    fields: list[object] = [row.topic, row.subtopic, row.question, row.answer, row.explanation, keywords]
    if row.urgent:
        fields.append("urgent")
    payload = json.dumps(fields, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
