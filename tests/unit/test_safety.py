"""Input validation and the red-flag detector on the labelled set."""

import json
from pathlib import Path

import pytest

from engine.safety import InvalidInput, detect_red_flags, emergency_message, fold_text, validate_input

DATA = Path(__file__).parents[1] / "data" / "red_flags.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


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


def test_labelled_set_size():
    assert sum(r["emergency"] for r in ROWS) >= 60
    assert sum(not r["emergency"] for r in ROWS) >= 60


def test_red_flag_recall_and_false_alarms():
    missed = [r["text"] for r in ROWS if r["emergency"] and not detect_red_flags(r["text"]).is_emergency]
    ordinary = [r for r in ROWS if not r["emergency"]]
    alarms = [r["text"] for r in ordinary if detect_red_flags(r["text"]).is_emergency]
    assert missed == [], missed
    assert len(alarms) / len(ordinary) <= 0.05, alarms


def test_negation_and_ambiguous_folding():
    assert not detect_red_flags("Tôi không bị khó thở, chỉ ho nhẹ").is_emergency
    assert not detect_red_flags("giảm cân từ từ có tốt không").is_emergency
    assert detect_red_flags("tôi muốn tự tử").is_emergency
    assert detect_red_flags("em dinh tu tu").is_emergency


def test_emergency_message_mentions_115_and_emergency_room():
    msg = emergency_message(detect_red_flags("bố tôi méo miệng, yếu nửa người"))
    assert "115" in msg and "phòng cấp cứu" in msg and "đột quỵ" in msg


def test_red_flags_checked_on_long_text():
    text = "a " * 800 + "đau ngực lan ra cánh tay trái"
    assert detect_red_flags(text).is_emergency
