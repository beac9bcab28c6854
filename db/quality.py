"""The console's quality pages' reads (``bot.web.console.quality``): a staff member's "try it" conversation,
as stored by ``ChatService`` (each reply with its trace), and the start of a new one.

A trial speaks as a user of channel ``db.stats.TRIAL_CHANNEL`` (one per staff member), so statistics and the
unanswered list (``db.stats``, ``db.digest``) never count it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from db.types import Executor

# The newest messages of a trial conversation shown on the page.
SHOWN_MESSAGES = 40


@dataclass(slots=True)
class TrialMessage:
    id: int
    direction: str  # "in" (what the staff member typed) or "out" (the bot's reply)
    text: str
    input_type: str | None
    retrieval_score: float | None
    citations: list[str]
    red_flag: bool
    trace: list[dict[str, Any]]
    created_at: datetime


@dataclass(slots=True)
class TrialConversation:
    id: int
    role: str | None
    messages: list[TrialMessage] = field(default_factory=list)  # oldest first
    suggestions: list[str] = field(default_factory=list)  # the buttons under the last reply


async def latest_trial(db: Executor, user_id: int, role: str) -> TrialConversation | None:
    """The user's latest conversation in ``role`` (the one ``ChatService`` continues with "keep"), with its
    newest messages and the last reply's suggestions; None when there is none."""
    conversation_id = await db.fetchval(
        """
        SELECT id FROM conversations WHERE user_id = $1 AND role IS NOT DISTINCT FROM $2
        ORDER BY last_activity_at DESC, id DESC LIMIT 1
        """,
        user_id,
        role,
    )
    if conversation_id is None:
        return None
    rows = await db.fetch(
        """
        SELECT * FROM (
            SELECT id, direction, text, input_type, retrieval_score, citations, red_flag, trace, created_at
            FROM messages WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2
        ) newest ORDER BY id
        """,
        conversation_id,
        SHOWN_MESSAGES,
    )
    last_out = max((r["id"] for r in rows if r["direction"] == "out"), default=None)
    # A reply's set is written by the statement that writes the reply: they share created_at.
    questions = await db.fetchval(
        """
        SELECT s.questions FROM suggestion_sets s JOIN messages o ON o.id = $2
        WHERE s.conversation_id = $1 AND s.created_at = o.created_at
        ORDER BY s.id DESC LIMIT 1
        """,
        conversation_id,
        last_out,
    )
    messages = [
        TrialMessage(
            id=r["id"],
            direction=r["direction"],
            text=r["text"],
            input_type=r["input_type"],
            retrieval_score=r["retrieval_score"],
            citations=list(r["citations"] or []),
            red_flag=r["red_flag"],
            trace=[t for t in (r["trace"] or []) if isinstance(t, dict)],
            created_at=r["created_at"],
        )
        for r in rows
    ]
    return TrialConversation(conversation_id, role, messages, list(questions or []))


async def start_trial(db: Executor, user_id: int, role: str) -> int:
    """A new, empty conversation in ``role``: the next trial message goes there with nothing to remember."""
    return int(
        await db.fetchval(
            "INSERT INTO conversations (user_id, role) VALUES ($1, $2) RETURNING id", user_id, role
        )
    )
