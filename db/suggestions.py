"""Suggestion sets: the follow-up questions behind buttons, referenced by a short id in callback data."""

from __future__ import annotations

from db.types import Executor


async def create(db: Executor, user_id: int, conversation_id: int | None, questions: list[str]) -> int:
    return int(
        await db.fetchval(
            "INSERT INTO suggestion_sets (user_id, conversation_id, questions) VALUES ($1, $2, $3) RETURNING id",
            user_id,
            conversation_id,
            questions,
        )
    )


async def question(db: Executor, set_id: int, index: int, user_id: int) -> str | None:
    """The question at ``index`` of the user's set, or None when unknown, expired or out of range."""
    questions = await db.fetchval(
        "SELECT questions FROM suggestion_sets WHERE id = $1 AND user_id = $2 AND expires_at > now()",
        set_id,
        user_id,
    )
    if questions is None or not 0 <= index < len(questions):
        return None
    return str(questions[index])


async def questions(db: Executor, set_id: int, user_id: int) -> list[str] | None:
    """Every question of the user's set, or None when unknown or expired."""
    found = await db.fetchval(
        "SELECT questions FROM suggestion_sets WHERE id = $1 AND user_id = $2 AND expires_at > now()",
        set_id,
        user_id,
    )
    return None if found is None else [str(q) for q in found]


async def delete_expired(db: Executor) -> int:
    status = await db.execute("DELETE FROM suggestion_sets WHERE expires_at < now()")
    return int(status.split()[-1])
