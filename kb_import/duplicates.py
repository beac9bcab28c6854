"""Entries that may say the same thing, after an applied import: for each role the import changed, the pairs of
its active entries whose stored vectors are nearly the same (``db.kb_duplicates``), in the Vietnamese every
import report shows (``medbot import``, the watched folder's report, the Telegram admin reply, the console's
import page); the console's KB page lists a role's pairs through ``of_role`` too.

It is a hint for the clinic's doctors to review and merge, never a problem: it never blocks or fails an import.
The search is capped (``TIMEOUT_S``); a role it cannot finish in time, or any database error, is logged and left
out of the report.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import asyncpg

from db.kb_duplicates import MAX_PAIRS, DuplicatePair, NearDuplicates, near_duplicates
from kb_import.roles import role_label

log = logging.getLogger("medbot.kb_import.duplicates")

# Work an import may spend on this per role: faq-val's 12.5k-entry KB takes 3.8 s (bench/bench_kb_duplicates.py),
# a clinic's few hundred entries well under a second.
TIMEOUT_S = 15.0
SHOWN = 5  # pairs named per role in a text report; the rest are counted
QUESTION_CHARS = 60
CONSOLE_HINT_VI = "Xem tất cả và sửa hoặc ẩn từng mục trên trang quản trị, mục Kho kiến thức."


async def of_role(
    pool: asyncpg.Pool, role: str, model: str, *, limit: int = MAX_PAIRS, timeout_s: float = TIMEOUT_S
) -> NearDuplicates | None:
    """The near-duplicate pairs of ``role`` among vectors of ``model``, the ``limit`` most similar (and how
    many in all); None when the search did not finish within ``timeout_s`` or failed (logged)."""
    started = time.perf_counter()
    try:
        found = await near_duplicates(pool, role, model=model, limit=limit, timeout_s=timeout_s)
    except (asyncpg.PostgresError, OSError) as exc:
        log.warning("kb.duplicates_skipped role=%s error=%s: %s", role, type(exc).__name__, exc)
        return None
    log.info("kb.duplicates role=%s pairs=%d in %.2fs", role, found.total, time.perf_counter() - started)
    return found


async def find(pool: asyncpg.Pool, roles: Sequence[str], model: str) -> dict[str, NearDuplicates]:
    """The near-duplicate pairs of each of ``roles`` (roles with none, or not searched in time, are absent)."""
    found = {role: await of_role(pool, role, model) for role in roles}
    return {role: pairs for role, pairs in found.items() if pairs is not None and pairs.total}


def short_question(question: str, chars: int = QUESTION_CHARS) -> str:
    """The start of an entry's question for a one-line listing ("(không có câu hỏi)" when blank)."""
    question = " ".join(question.split())
    if not question:
        return "(không có câu hỏi)"
    return question if len(question) <= chars else question[: chars - 1].rstrip() + "…"


def pair_line_vi(pair: DuplicatePair, chars: int = QUESTION_CHARS) -> str:
    """``NK-003 «Răng khôn mọc lệch có cần nhổ…» ↔ NK-017 «Có nên nhổ răng khôn mọc lệch…»``."""
    return (
        f"{pair.a_code} «{short_question(pair.a_question, chars)}» ↔ "
        f"{pair.b_code} «{short_question(pair.b_question, chars)}»"
    )


def head_vi(role: str, found: NearDuplicates) -> str:
    """The heading of a role's pairs: how many, what to do, and that the import is done regardless."""
    return (
        f"Có thể trùng nội dung (nên xem lại và gộp) — {role_label(role)}: {found.total} cặp mục gần như hỏi "
        "cùng một điều. Đây chỉ là gợi ý, lần nhập vẫn hoàn tất."
    )


def more_vi(found: NearDuplicates, shown: int = SHOWN) -> str:
    """``… và N cặp khác`` when a role has more pairs than are shown, else ""."""
    return f"… và {found.total - shown} cặp khác" if found.total > shown else ""


def role_blocks(
    duplicates: dict[str, NearDuplicates], *, shown: int = SHOWN, chars: int = QUESTION_CHARS
) -> list[tuple[str, list[str], str]]:
    """Per role, in order: its heading, its first ``shown`` pair lines and the "… và N cặp khác" line ("" when
    every pair is shown). Every rendering (plain text, the terminal report) lays these out its own way."""
    return [
        (
            head_vi(role, duplicates[role]),
            [pair_line_vi(p, chars) for p in duplicates[role].pairs[:shown]],
            more_vi(duplicates[role], shown),
        )
        for role in sorted(duplicates)
    ]


def lines_vi(
    duplicates: dict[str, NearDuplicates], *, shown: int = SHOWN, chars: int = QUESTION_CHARS
) -> list[str]:
    """Plain lines: every role's heading and its first ``shown`` pairs, then where to see them all."""
    lines: list[str] = []
    for head, pairs, more in role_blocks(duplicates, shown=shown, chars=chars):
        lines += [head, *(f"– {line}" for line in pairs), *([more] if more else [])]
    if lines:
        lines.append(CONSOLE_HINT_VI)
    return lines
