"""LLM helpers with no network: JSON extraction from model text, Retry-After parsing, prompt templates, when
the self-check is due and what /stats says about switched-off steps."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr

from bot.llm_selfcheck import check_due, check_file, stats_note
from bot.wiring import llm_steps
from db.settings import load_settings
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


def _settings(tmp_path, **kw):
    base = {"openai_api_key": SecretStr("k"), "openai_model": "m1", "medbot_data_dir": tmp_path}
    return load_settings(**(base | kw))


def _write_check(settings, **kw):
    report = {
        "role": "patient_dental",
        "n": 10,
        "offline_right": 9,
        "model": "m1",
        "base_url": None,
        "checked_at": "2026-11-20T08:30:00+00:00",
        "steps": {
            "classify": {"verdict": "hurts"},
            "expand": {"verdict": "neutral"},
            "prune": {"verdict": "neutral"},
            "compose": {"verdict": "breaks"},
        },
    } | kw
    check_file(settings).write_text(json.dumps(report), encoding="utf-8")


def test_check_due_when_missing_stale_or_for_another_model(tmp_path):
    settings = _settings(tmp_path)
    now = datetime(2026, 11, 22, tzinfo=UTC)
    assert check_due(settings, now)  # no check yet
    _write_check(settings)
    assert not check_due(settings, now)
    assert check_due(settings, now + timedelta(days=7))  # older than a week
    assert check_due(_settings(tmp_path, openai_model="m2"), now)  # the model changed
    assert check_due(_settings(tmp_path, openai_base_url="http://llm.local/v1"), now)  # the endpoint changed
    assert not check_due(_settings(tmp_path, openai_api_key=None), now)  # offline: nothing to check


def test_stats_note_names_the_steps_off_and_why(tmp_path):
    settings = _settings(tmp_path)
    assert stats_note(settings) is None  # no check: every step on
    _write_check(settings)
    note = stats_note(settings)
    assert note is not None and note.startswith("🤖 Mô hình AI m1: đã tắt 2 bước — ")
    assert "phân loại tin nhắn (làm câu trả lời kém chính xác hơn)" in note
    assert "soạn câu trả lời (thường bị lỗi, quá chậm hoặc trả lời không dùng được)" in note
    assert "08:30 ngày 20/11/2026" in note
    # The admin's override wins: compose back on, prune off by hand.
    note = stats_note(_settings(tmp_path, llm_steps="compose=on, prune=off"))
    assert note is not None and "đã tắt 2 bước" in note
    assert "chọn lọc tài liệu (tắt theo cài đặt LLM_STEPS)" in note and "soạn câu trả lời" not in note
    assert stats_note(_settings(tmp_path, llm_steps="classify=on,compose=on")) is None


def test_a_check_of_another_model_switches_nothing_off(tmp_path):
    """The verdicts belong to the model and endpoint they were measured on: after the clinic changes model,
    the engine runs every step again and /stats says nothing until the new model is checked."""
    _write_check(_settings(tmp_path))
    for changed in ({"openai_model": "m2"}, {"openai_base_url": "http://llm.local/v1"}):
        settings = _settings(tmp_path, **changed)
        assert all(llm_steps(settings).values())
        assert stats_note(settings) is None
    assert llm_steps(_settings(tmp_path)) == {
        "classify": False,
        "expand": True,
        "prune": True,
        "compose": False,
    }
