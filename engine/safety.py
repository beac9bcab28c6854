"""Input validation: what a message must be before the flow reads it (the emergency check, which runs
before it on any input, is ``engine.triage``).

``fold_text`` (one character in, one character out: lowercase, no diacritics, đ→d, every other character a
space) serves the intent classifier's rules, whose spans must line up with the original text.
"""

from __future__ import annotations

import re
import unicodedata

from engine import texts
from engine.text import CharTable

MAX_INPUT_CHARS = 1000

_CONTROL = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\ufeff]")
_SPACES = re.compile(r"\s+")


class InvalidInput(ValueError):
    """The message cannot be processed; ``str(exc)`` is a message for the user, in Vietnamese."""


def normalize_input(text: str | None) -> str:
    """NFC, control characters removed, whitespace collapsed, stripped. Never raises."""
    text = unicodedata.normalize("NFC", text or "")
    text = _CONTROL.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def validate_input(text: str | None, max_chars: int = MAX_INPUT_CHARS) -> str:
    """The normalised message, or ``InvalidInput`` with a clear Vietnamese message."""
    clean = normalize_input(text)
    if not clean:
        raise InvalidInput(texts.EMPTY_INPUT)
    if len(clean) > max_chars:
        raise InvalidInput(texts.TOO_LONG.format(length=len(clean), limit=max_chars))
    return clean


def _fold_char(ch: str) -> str:
    if ch in "đĐ":
        return "d"
    base = unicodedata.normalize("NFD", ch)[0].lower()
    if len(base) != 1:
        return " "
    return base if base.isalnum() else " "


_FOLD_TABLE = CharTable(_fold_char)


def fold_text(text: str) -> str:
    """Lowercase, no diacritics, đ→d, every non-alphanumeric character a space; same length as NFC input."""
    return unicodedata.normalize("NFC", text).translate(_FOLD_TABLE)
