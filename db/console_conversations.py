"""The console's reads of patients' conversations: the recent ones with what a reviewer looks for (messages,
requests for a person, 👎), one conversation's messages in order, and who viewed it (``console_audit`` rows
``view_conversation``, written by ``db.staff.audit``).

A patient is never named here: the list carries the internal user id (the page shows a pseudonymous label),
never the channel's id or display name, and no message text (only the audited conversation page shows it). A patient who asked to be erased is gone: ``users.erase`` deletes
the rows, and a deferred erasure (``retention.ERASE_REASON``) is hidden until housekeeping deletes it.
Staff's "try it" trials (``db.stats.TRIAL_CHANNEL``) are not patients' conversations: never listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from db.retention import ERASE_REASON
from db.stats import TRIAL_CHANNEL
from db.types import Executor

VIEW_ACTION = "view_conversation"
# Messages a patient sends to reach a person: what the staff handoff takes over (engine.intents).
STAFF_INTENTS = ("human", "complaint")


@dataclass(frozen=True, slots=True)
class ConversationRow:
    id: int
    patient: int  # users.id: internal, shown only as a pseudonymous label
    channel: str
    role: str | None
    started_at: datetime
    last_activity_at: datetime
    messages: int
    asked_staff: bool
    downs: int


@dataclass(frozen=True, slots=True)
class MessageRow:
    id: int
    direction: str  # "in" (the patient) or "out" (the bot)
    text: str
    input_type: str | None
    confidence: float | None
    retrieval_score: float | None
    citations: list[str]
    red_flag: bool
    rating: int | None  # the patient's 👍 (1) / 👎 (-1) on a bot message
    created_at: datetime


@dataclass(frozen=True, slots=True)
class View:
    email: str | None  # None: the account was deleted
    at: datetime


_VISIBLE = (
    f"(u.active OR u.inactive_reason IS DISTINCT FROM '{ERASE_REASON}') AND u.channel <> '{TRIAL_CHANNEL}'"
)

_RECENT = f"""
SELECT c.id, c.user_id AS patient, u.channel, c.role, c.started_at, c.last_activity_at,
       count(m.id) AS messages,
       bool_or(m.direction = 'in' AND m.input_type = ANY($5::text[])) AS asked_staff,
       (SELECT count(*) FROM feedback f JOIN messages fm ON fm.id = f.message_id
        WHERE fm.conversation_id = c.id AND f.rating = -1) AS downs
FROM conversations c
JOIN users u ON u.id = c.user_id
JOIN messages m ON m.conversation_id = c.id
WHERE {_VISIBLE} AND ($1::text IS NULL OR c.role = $1)
GROUP BY c.id, u.channel
HAVING (NOT $2 OR bool_or(m.direction = 'in' AND m.input_type = ANY($5::text[])))
   AND (NOT $3 OR EXISTS (SELECT 1 FROM feedback f JOIN messages fm ON fm.id = f.message_id
                          WHERE fm.conversation_id = c.id AND f.rating = -1))
ORDER BY c.last_activity_at DESC, c.id DESC
LIMIT $4
"""


async def recent(
    db: Executor,
    *,
    role: str | None = None,
    asked_staff: bool = False,
    with_down: bool = False,
    limit: int = 100,
) -> list[ConversationRow]:
    """Conversations with at least one message, the most recently active first; ``role`` keeps one role's,
    ``asked_staff`` those where the patient asked for a person (or complained), ``with_down`` those with a 👎."""
    rows = await db.fetch(_RECENT, role, asked_staff, with_down, limit, list(STAFF_INTENTS))
    return [ConversationRow(**{**dict(r), "asked_staff": bool(r["asked_staff"])}) for r in rows]


async def get(db: Executor, conversation_id: int) -> ConversationRow | None:
    """One conversation's list row (None when it does not exist, has no message or its patient is erased)."""
    row = await db.fetchrow(
        _RECENT.replace("WHERE " + _VISIBLE, f"WHERE c.id = $6 AND {_VISIBLE}"),
        None,
        False,
        False,
        1,
        list(STAFF_INTENTS),
        conversation_id,
    )
    return ConversationRow(**{**dict(row), "asked_staff": bool(row["asked_staff"])}) if row else None


async def messages(db: Executor, conversation_id: int) -> list[MessageRow]:
    """The conversation's messages in order, each bot message with the patient's rating."""
    rows = await db.fetch(
        """
        SELECT m.id, m.direction, m.text, m.input_type, m.confidence, m.retrieval_score, m.citations,
               m.red_flag, f.rating, m.created_at
        FROM messages m
        LEFT JOIN LATERAL (SELECT rating FROM feedback WHERE message_id = m.id ORDER BY id DESC LIMIT 1) f
            ON true
        WHERE m.conversation_id = $1
        ORDER BY m.created_at, m.id
        """,
        conversation_id,
    )
    return [MessageRow(**dict(r)) for r in rows]


async def views(db: Executor, conversation_id: int) -> list[View]:
    """Every recorded view of the conversation in the console, oldest first."""
    rows = await db.fetch(
        """
        SELECT a.email, c.at FROM console_audit c LEFT JOIN staff_accounts a ON a.id = c.staff_id
        WHERE c.action = $1 AND c.subject = $2 ORDER BY c.at, c.id
        """,
        VIEW_ACTION,
        str(conversation_id),
    )
    return [View(**dict(r)) for r in rows]
