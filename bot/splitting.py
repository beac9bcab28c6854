"""Splitting a long message into parts a chat platform accepts: the one splitter every channel uses.

A part is cut at the coarsest boundary that makes it fit (paragraphs, then what the channel lists next:
lines, sentences, words), the pieces of one level packed greedily, and a piece with no boundary left is cut
hard where the channel says (``hard_split``: Telegram on a line or a space, never inside an HTML entity).
Lengths are the channel's own (``measure``: Telegram counts UTF-16 code units). Parts are stripped and never
empty. Zalo (``bot.zalo.client.split_text``) and Telegram (``bot.telegram.render.split_html``) both split here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# (text, limit) -> (a first part that fits, the rest): how a piece with no separator left is cut
Splitter = Callable[[str, int], tuple[str, str]]

PARAGRAPH = "\n\n"


def _hard_pieces(text: str, limit: int, measure: Callable[[str], int], hard_split: Splitter) -> list[str]:
    out: list[str] = []
    while measure(text) > limit:
        head, text = hard_split(text, limit)
        out.append(head)
    return [*out, text] if text else out


def _cut_at_limit(text: str, limit: int) -> tuple[str, str]:
    return text[:limit], text[limit:]


def _pieces(
    text: str,
    limit: int,
    separators: list[str],
    measure: Callable[[str], int],
    hard_split: Splitter,
    merge: bool,
) -> list[str]:
    """Cut ``text`` into pieces ≤ limit at the coarsest separator possible (hard cut as the last resort)."""
    if measure(text) <= limit:
        return [text]
    if not separators:
        return _hard_pieces(text, limit, measure, hard_split)
    sep, rest = separators[0], separators[1:]
    parts = text.split(PARAGRAPH) if sep == PARAGRAPH else re.split(f"(?<={sep})", text)
    joiner = PARAGRAPH if sep == PARAGRAPH else ""
    out: list[str] = []
    current = ""
    for part in parts:
        candidate = current + joiner + part if current else part
        if measure(candidate) <= limit:
            current = candidate
            continue
        if measure(part) <= limit:
            if current:
                out.append(current)
            current = part
            continue
        sub = _pieces(part, limit, rest, measure, hard_split, False)
        if not (
            merge and sep == PARAGRAPH
        ):  # the part's pieces stand alone; its last one may take the next parts
            if current:
                out.append(current)
            out.extend(sub[:-1])
            current = sub[-1] if sub else ""
            continue
        for piece in (p.strip() for p in sub):  # each piece packs with its neighbours like a part
            if not piece:
                continue
            candidate = current + joiner + piece if current else piece
            if measure(candidate) <= limit:
                current = candidate
            else:
                if current:
                    out.append(current)
                current = piece
    if current:
        out.append(current)
    return out


def split_message(
    text: str,
    limit: int,
    separators: list[str],
    *,
    measure: Callable[[str], int] = len,
    hard_split: Splitter = _cut_at_limit,
    merge: bool = False,
) -> list[str]:
    """``text`` in parts of at most ``limit`` (by ``measure``), cut at ``separators`` (regular expressions
    a part may end with, coarsest first; ``PARAGRAPH`` splits on blank lines), stripped, none empty; ``[]``
    for blank text. ``hard_split(text, limit)``: a piece with no separator left, cut in two (default: at ``limit``). ``merge``: the
    pieces of a paragraph cut finer are packed with the paragraphs around it (Telegram: fewer messages); without it
    (Zalo) a cut part's pieces go out alone, only its last one shares a message with what follows."""
    chunks = _pieces(text.strip(), limit, separators, measure, hard_split, merge)
    return [c.strip() for c in chunks if c.strip()]
