"""Input validation (the emergency check has its own tests: test_triage*.py)."""

import pytest

from engine.safety import InvalidInput, validate_input
from engine.text import fold_alnum as fold_text


def test_validate_input_normalises():
    raw = "  Re\u0300ng  bi\u0323\x00 \u200b\n\n đau\t "  # NFD, control chars, odd spaces
    assert validate_input(raw) == "Rèng bị đau"


@pytest.mark.parametrize("raw", ["", "   ", "\x00\x01", "a" * 1001])
def test_validate_input_rejects_with_vietnamese_message(raw):
    with pytest.raises(InvalidInput) as exc:
        validate_input(raw)
    assert "ký tự" in str(exc.value)


def test_fold_keeps_length():
    s = "Đau ngực, khó thở! Tự tử?"
    assert len(fold_text(s)) == len(s) and fold_text(s).split() == "dau nguc kho tho tu tu".split()
