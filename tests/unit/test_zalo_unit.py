"""Zalo pieces without I/O: message splitting, the signing rule, button limits, event parsing."""

from __future__ import annotations

import hashlib
import json

from bot.zalo.bot import command_of, dedupe_key, parse_event
from bot.zalo.client import TEXT_LIMIT, Button, split_text
from bot.zalo.webhook import sign, verify
from db.settings import load_settings


def test_split_keeps_short_text_and_cuts_on_paragraphs() -> None:
    assert split_text("Xin chào") == ["Xin chào"]
    paragraphs = [f"Đoạn {i}. " + "a" * 600 for i in range(5)]
    chunks = split_text("\n\n".join(paragraphs))
    assert all(len(c) <= TEXT_LIMIT for c in chunks)
    assert chunks[0] == "\n\n".join(paragraphs[:3]) and chunks[1] == "\n\n".join(paragraphs[3:])


def test_split_long_paragraph_on_sentences_then_words_then_hard() -> None:
    sentences = " ".join(f"Câu số {i} nói về răng miệng." for i in range(200))  # one 6,000-char paragraph
    chunks = split_text(sentences)
    assert all(len(c) <= TEXT_LIMIT for c in chunks) and len(chunks) >= 3
    assert all(c.endswith(".") for c in chunks)
    assert " ".join(chunks) == sentences
    blob = "x" * 4500
    assert [len(c) for c in split_text(blob)] == [2000, 2000, 500]


def test_signature_is_plain_sha256_of_app_id_body_timestamp_secret() -> None:
    body = json.dumps({"event_name": "user_send_text", "timestamp": "1700000000000"}).encode()
    expected = hashlib.sha256(b"app" + body + b"1700000000000" + b"secret").hexdigest()
    assert sign("app", body, "1700000000000", "secret") == "mac=" + expected
    settings = load_settings(zalo_app_id="app", zalo_oa_secret="secret")
    assert verify(settings, body, "mac=" + expected) is not None
    assert verify(settings, body, expected) is None
    assert verify(load_settings(zalo_app_id="app"), body, "mac=" + expected) is None  # no OA secret


def test_button_title_is_capped_at_100_characters() -> None:
    zalo = Button("ê" * 150, "#sq:1:0").as_zalo()
    assert len(zalo["title"]) == 100 and zalo["title"].endswith("…") and zalo["type"] == "oa.query.hide"


def test_parse_events_and_dedupe_keys() -> None:
    text = {"event_name": "user_send_text", "sender": {"id": "42"}, "message": {"msg_id": "m1", "text": "hi"}}
    incoming = parse_event(text)
    assert incoming and incoming.recipient == {"user_id": "42"} and dedupe_key(incoming, text) == "m1"
    anon = {
        "event_name": "anonymous_send_text",
        "sender": {"id": "an1"},
        "message": {"msg_id": "m2", "text": "hi", "conversation_id": "c9"},
    }
    incoming = parse_event(anon)
    assert incoming and incoming.external_id == "anon:an1"
    assert incoming.recipient == {"anonymous_id": "an1", "conversation_id": "c9"}
    follow = {"event_name": "follow", "follower": {"id": "7"}, "timestamp": "5"}
    incoming = parse_event(follow)
    assert incoming and dedupe_key(incoming, follow) == "follow:7:5"
    assert parse_event({"event_name": "oa_send_text", "sender": {"id": "oa"}}) is None
    assert parse_event({"event_name": "user_send_text"}) is None


def test_commands_fold_diacritics_and_slashes() -> None:
    assert command_of("Xoá dữ liệu!") == command_of("xóa dữ liệu") == "xoa du lieu"
    assert command_of("/chuyenkhoa") == "chuyenkhoa"
