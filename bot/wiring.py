"""Builds the ChatService every channel uses from a Runtime.

INTERIM: the real engine (the medical flow) is being built in parallel; the lead replaces
``_interim_answer`` with it at merge. Until then the answer function is a plain word-overlap lookup over
the role's active KB entries — enough for the channel to be developed and tested end to end, nothing more:
no classification, no red flags, no persona. Channel tests only assert behaviour any real engine keeps.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from bot.runtime import Runtime
from bot.service import AnswerFn, ChatService
from bot.telegram.roles import role_labels
from db import kb

_WORD = re.compile(r"\w+")


def _fold_tokens(text: str) -> set[str]:
    text = unicodedata.normalize("NFD", text.replace("đ", "d").replace("Đ", "D"))
    text = "".join(c for c in text if unicodedata.category(c) != "Mn").lower()
    return set(_WORD.findall(text))


def _interim_answer(runtime: Runtime) -> AnswerFn:
    pool = runtime.pool

    async def answer(shared: dict[str, Any]) -> dict[str, Any]:
        entries = await kb.active_entries(pool, shared["role"])
        words = _fold_tokens(shared["input"])
        scored = sorted(
            ((len(words & _fold_tokens(e.question)), -i, e) for i, e in enumerate(entries)),
            key=lambda t: (t[0], t[1]),
            reverse=True,
        )
        base = {"confidence": 0.0, "red_flag": False, "trace": [{"node": "InterimLookup"}], "tokens": {}}
        if not scored or scored[0][0] == 0:
            return base | {
                "input_type": "medical_question",
                "explain": "Xin lỗi, mình chưa tìm thấy thông tin phù hợp. Bạn có thể hỏi một trong các câu sau:",
                "suggestion_questions": [e.question for e in entries[:5] if e.question],
                "citations": [],
                "retrieval_score": 0.0,
            }
        overlap, _, best = scored[0]
        score = overlap / max(1, len(_fold_tokens(best.question)))
        return base | {
            "input_type": "medical_question",
            "explain": best.answer,
            "suggestion_questions": [e.question for _, _, e in scored[1:4] if e.question],
            "citations": [best.code],
            "retrieval_score": score,
            "confidence": score,
        }

    return answer


async def build_service(runtime: Runtime) -> ChatService:
    """The ChatService on the runtime's pool. INTERIM answer function — see the module docstring."""
    settings = runtime.settings
    return ChatService(
        runtime.pool, _interim_answer(runtime), default_role=settings.default_role, roles=list(role_labels())
    )
