"""The flow's shared store, read and written the same way by every node: the engine's dependencies, the
role, the reply being built (``say``), the LLM usage, and the small list helpers the reply nodes share.

Framework helpers only: no node and no medical decision lives here (those are ``engine.nodes``,
``engine.reply_nodes`` and ``engine.clinic_nodes``; the typed LLM step is ``engine.structured``).
"""

from __future__ import annotations

from typing import Any

from engine.deps import EngineDeps
from engine.llm import Usage
from engine.roles import Role, get_role
from engine.text import fold_plain
from engine.types import Hit, KBEntry, Turn


def deps_of(shared: dict[str, Any]) -> EngineDeps:
    return shared["deps"]


def role_of(shared: dict[str, Any]) -> Role:
    return get_role(shared.get("role") or "", deps_of(shared).roles)


def say(shared: dict[str, Any], text: str) -> None:
    if text:
        shared.setdefault("answer_parts", []).append(text)


def usage_of(shared: dict[str, Any]) -> Usage:
    return shared.setdefault("usage", Usage())


def history_text(turns: list[Turn]) -> str:
    if not turns:
        return "(none)"
    return "\n".join(f"User: {t.user_text}\nBot: {t.bot_text[:300]}" for t in turns)


def unique_questions(entries: list[KBEntry], exclude: set[str] = frozenset(), limit: int = 10) -> list[str]:
    out: list[str] = []
    seen = {fold_plain(q) for q in exclude}
    for e in entries:
        q = (e.question or "").strip()
        if q and fold_plain(q) not in seen:
            seen.add(fold_plain(q))
            out.append(q)
        if len(out) >= limit:
            break
    return out


def dedup_hits(hits: list[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out = []
    for h in hits:
        if h.entry.code not in seen:
            seen.add(h.entry.code)
            out.append(h)
    return out
