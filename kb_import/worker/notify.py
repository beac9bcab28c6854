"""Who the worker reports to (admins) and the small text helpers its Vietnamese messages share."""

from __future__ import annotations

from db import users
from db.settings import Settings
from db.types import Executor


async def admin_chat_ids(db: Executor, settings: Settings) -> list[str]:
    """Telegram chats of the admins: ``ADMIN_IDS`` plus users flagged admin in the database (a private
    chat's id is the user's id)."""
    ids = [str(i) for i in settings.admin_ids]
    for external_id in await users.admin_external_ids(db, "telegram"):
        if external_id not in ids:
            ids.append(external_id)
    return ids


def clip(text: str | None, limit: int) -> str:
    """One line, at most ``limit`` characters (an ellipsis marks a cut)."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def fit(text: str, limit: int, note: str = "\n…(đã rút gọn)") -> str:
    """``text`` cut at a line boundary to fit in ``limit`` characters, with a note when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - len(note)]
    if "\n" in cut:
        cut = cut[: cut.rfind("\n")]
    return cut + note
