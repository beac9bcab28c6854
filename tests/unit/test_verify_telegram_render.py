"""The Telegram verify router's pure parts: message rendering within limits and compact callback data.

The end-to-end flow on the fake Bot API is written after merge (see bot/telegram/routers/verify.py).
"""

from __future__ import annotations

from bot.telegram.callbacks import VerifyCb
from bot.telegram.routers.verify import keyboard, render_item
from bot.verify_service import ItemView
from engine.verify.types import Evidence


def _view(evidence_text: str) -> ItemView:
    ev = [Evidence(i, "Hướng dẫn <ĐTĐ>", "Metformin", evidence_text, 0.8, 0.9, 0.4) for i in range(3)]
    return ItemView(
        7,
        12,
        3,
        40,
        "Liều 1000 mg & uống <sau> ăn.",
        "Thuốc",
        "FLAGGED",
        0.6,
        "Sai liều.",
        ev,
        "offline",
        ["liều metformin"],
    )


def test_render_escapes_and_fits_telegram_limit() -> None:
    text = render_item(_view("Liều khởi đầu 500 mg. " * 600))
    assert len(text) <= 4096
    assert "&lt;sau&gt;" in text and "Hướng dẫn &lt;ĐTĐ&gt;" in text
    assert "Câu 3/40" in text and "FLAGGED" in text and "liều metformin" in text


def test_buttons_carry_short_ids() -> None:
    markup = keyboard(_view("x"))
    datas = [b.callback_data for row in markup.inline_keyboard for b in row]
    assert len(datas) == 4 and all(d and len(d.encode()) <= 64 for d in datas)
    assert VerifyCb.unpack(datas[0]) == VerifyCb(action="a", sid=7, idx=12)
