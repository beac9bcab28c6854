"""Rendering replies for Telegram: HTML escaping of KB/engine text, splitting under the 4096 limit on
paragraph boundaries, and the inline keyboards (suggestions, 👍/👎, role picker). A list longer than
``PAGE_SIZE`` (every topic of a role, one topic's questions) is shown a page at a time with ◀ / ▶ buttons
that edit the keyboard in place. The answer's source line is the engine's (KB codes for clinicians only).

Lengths are measured in UTF-16 code units, as Telegram counts them, on the HTML source (which is never
shorter than what Telegram shows), so every part is accepted.
"""

from __future__ import annotations

import html

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.handoff import END_BUTTON
from bot.service import Reply
from bot.splitting import PARAGRAPH, split_message
from bot.telegram import texts
from bot.telegram.callbacks import FeedbackCb, HandoffEndCb, RoleCb, SuggestCb, SuggestPageCb, SwitchCb
from bot.telegram.roles import role_label

LIMIT = 4000  # a margin under Telegram's 4096
BUTTON_TEXT = 60
PAGE_SIZE = 6


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _cut(text: str, limit: int) -> int:
    """Largest index i such that text[:i] fits in ``limit`` UTF-16 units, not inside an HTML entity."""
    total = 0
    for i, ch in enumerate(text):
        total += 2 if ord(ch) > 0xFFFF else 1
        if total > limit:
            amp = text.rfind("&", 0, i)
            if amp != -1 and ";" not in text[amp:i]:
                return amp
            return i
    return len(text)


def _hard_split(piece: str, limit: int) -> tuple[str, str]:
    """An over-long escaped paragraph in two: on the last line break or space that fits, else anywhere but
    inside an entity."""
    window = piece[: _cut(piece, limit)]
    at = max(window.rfind("\n"), window.rfind(" "))
    if at <= 0:
        at = len(window)
    return piece[:at].rstrip(), piece[at:].lstrip()


def split_html(text: str, limit: int = LIMIT) -> list[str]:
    """Split escaped text (no open tags across paragraphs) into parts ≤ ``limit``, on blank lines first
    (``bot.splitting``); the pieces of a paragraph too long for one part pack with the paragraphs around it."""
    paragraphs = PARAGRAPH.join(p.strip() for p in text.split(PARAGRAPH) if p.strip())
    parts = split_message(
        paragraphs, limit, [PARAGRAPH], measure=utf16_len, hard_split=_hard_split, merge=True
    )
    return parts or [html.escape(texts.EMPTY_ANSWER)]


def answer_html(reply: Reply, *, asked: str | None = None) -> str:
    """The whole answer as HTML: optional tapped question, escaped body (its own source line included)."""
    chunks = []
    if asked:
        chunks.append(f"❓ <b>{html.escape(asked)}</b>")
    body = (reply.text or "").strip() or texts.EMPTY_ANSWER
    # Escape each paragraph on its own so no tag ever spans a split point.
    chunks.extend(html.escape(p.strip()) for p in body.replace("\r\n", "\n").split("\n\n") if p.strip())
    return "\n\n".join(chunks)


def short(text: str, limit: int = BUTTON_TEXT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def answer_keyboard(reply: Reply) -> InlineKeyboardMarkup | None:
    """The switch to another section first when the reply offers one (`xr:<message>`), one button per
    suggestion (`sq:<set>:<i>`), a page at a time, then the 👍/👎 row (`fb:<message>:±1`)."""
    lead = None
    if reply.switch_role and reply.switch_label and reply.message_id is not None:
        lead = InlineKeyboardButton(
            text=f"➡️ {reply.switch_label}", callback_data=SwitchCb(m=reply.message_id).pack()
        )
    return suggestion_keyboard(reply.suggestion_set_id, reply.suggestions, reply.message_id, lead=lead)


def switch_button(markup: InlineKeyboardMarkup | None) -> InlineKeyboardButton | None:
    """The "Chuyển sang mục …" button of a keyboard, if it has one (kept when the page changes)."""
    if markup is None or not markup.inline_keyboard:
        return None
    first = markup.inline_keyboard[0][0]
    data = first.callback_data or ""
    return first if data.startswith(f"{SwitchCb.__prefix__}:") else None


def suggestion_keyboard(
    set_id: int | None,
    questions: list[str],
    message_id: int | None,
    page: int = 0,
    *,
    lead: InlineKeyboardButton | None = None,
) -> InlineKeyboardMarkup | None:
    """``lead`` (a button of its own row) first, then page ``page`` of the suggestions (``PAGE_SIZE`` a page;
    ◀ / ▶ as `sp:<set>:<page>:<message>`) and the 👍/👎 row of the stored answer ``message_id``."""
    kb = InlineKeyboardBuilder()
    if lead is not None:
        kb.row(lead)
    if set_id is not None and questions:
        pages = (len(questions) + PAGE_SIZE - 1) // PAGE_SIZE
        page = min(max(page, 0), pages - 1)
        first = page * PAGE_SIZE
        for i, question in enumerate(questions[first : first + PAGE_SIZE], start=first):
            kb.row(
                InlineKeyboardButton(text=short(question), callback_data=SuggestCb(set_id=set_id, i=i).pack())
            )
        if pages > 1:
            nav = []
            if page > 0:
                nav.append(
                    InlineKeyboardButton(
                        text=texts.PAGE_PREV, callback_data=_page(set_id, page - 1, message_id)
                    )
                )
            nav.append(
                InlineKeyboardButton(
                    text=f"{page + 1}/{pages}", callback_data=_page(set_id, page, message_id)
                )
            )
            if page < pages - 1:
                nav.append(
                    InlineKeyboardButton(
                        text=texts.PAGE_NEXT, callback_data=_page(set_id, page + 1, message_id)
                    )
                )
            kb.row(*nav)
    if message_id is not None:
        kb.row(
            InlineKeyboardButton(text="👍", callback_data=FeedbackCb(message_id=message_id, rating=1).pack()),
            InlineKeyboardButton(
                text="👎", callback_data=FeedbackCb(message_id=message_id, rating=-1).pack()
            ),
        )
    markup = kb.as_markup()
    return markup if markup.inline_keyboard else None


def _page(set_id: int, page: int, message_id: int | None) -> str:
    return SuggestPageCb(set_id=set_id, page=page, m=message_id or 0).pack()


def role_keyboard(roles: list[str]) -> InlineKeyboardMarkup:
    kb = InlineKeyboardBuilder()
    for role in roles:
        kb.row(InlineKeyboardButton(text=role_label(role), callback_data=RoleCb(role=role).pack()))
    return kb.as_markup()


def end_handoff_keyboard() -> InlineKeyboardMarkup:
    """The patient's "Kết thúc hỗ trợ" under the message that says a staff member answers."""
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text=END_BUTTON, callback_data=HandoffEndCb().pack())]]
    )
