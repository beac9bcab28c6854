"""A patient's words never reach the INFO log, not even their first letters (issue 16 §4)."""

from __future__ import annotations

from bot.logs import redact


def test_redact_keeps_no_words_but_tells_messages_apart() -> None:
    private = "Con tôi 3 tuổi bị sốt cao co giật"
    shown = redact(private)
    assert not any(word.lower() in shown.lower() for word in private.split() if len(word) > 1)
    assert "len=33" in shown
    assert redact("  Con tôi 3 tuổi bị sốt cao   co giật ") == shown  # same message, same line
    assert redact("Con tôi 4 tuổi bị sốt cao co giật") != shown
