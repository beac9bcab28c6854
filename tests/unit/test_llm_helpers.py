"""LLM helpers with no I/O: JSON extraction from model text, Retry-After parsing, prompt templates."""

import pytest

from engine.llm import extract_json, parse_retry_after
from engine.prompts import render


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('Here:\n```json\n{"a": [1, 2,]}\n```\nDone.', {"a": [1, 2]}),
        ('prefix {"a": {"b": "}"}} trailing prose {"c": 2}', {"a": {"b": "}"}}),
        ("```\n[1, 2]\n```", [1, 2]),
        ('Kết quả: {bad} rồi {"ok": true}', {"ok": True}),
    ],
)
def test_extract_json(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "{unclosed"])
def test_extract_json_rejects(text):
    with pytest.raises(ValueError):
        extract_json(text)


def test_retry_after_parsing_and_render():
    assert (
        parse_retry_after("3") == 3.0 and parse_retry_after(None) is None and parse_retry_after("x") is None
    )
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    ctx = {"role": {"persona": "nha sĩ"}, "items": ["a", "b"], "n": 3}
    assert render("{{ role.persona }}|{{items}}|{{ n }}|{{ missing }}", ctx) == "nha sĩ|a\nb|3|"
