"""Input validation: what a message must be before the flow reads it (the emergency check, which runs
before it on any input, is ``engine.triage``).

Folding for the classifier's rules (one character in, one character out) is ``engine.text.fold_alnum``.
"""

from __future__ import annotations

import re
import unicodedata

from engine import texts

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
