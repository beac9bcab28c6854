"""The console's reads of patients' conversations: the recent ones with what a reviewer looks for (messages,
requests for a person, 👎), one conversation's messages in order, and who viewed it (``console_audit`` rows
``view_conversation``, written by ``db.staff.audit``).

A patient is never named here: the list carries the internal user id (the page shows a pseudonymous label),
never the channel's id or display name, and no message text (only the audited conversation page shows it). A patient who asked to be erased is gone: ``users.erase`` deletes
the rows, and a deferred erasure (``retention.ERASE_REASON``) is hidden until housekeeping deletes it.
Staff's "try it" trials (``db.stats.TRIAL_CHANNEL``) are not patients' conversations: never listed.

A conversation's staff handoffs are the patient's handoffs (``db.handoffs``) whose time overlaps the
conversation's (opened before its last activity, not closed before it started): its ``handoff`` state is
"open" when one of them is still open, "closed" when there were only closed ones, "none" otherwise. The
handoff's relayed messages are messages of the conversation (``db.conversations.store_relayed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from db.conversations import STAFF_REPLY, TO_STAFF
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
    handoff: str  # "none", "open" or "closed": the staff handoffs overlapping the conversation


@dataclass(frozen=True, slots=True)
class MessageRow:
    id: int
    direction: str  # "in" (the patient) or "out" (the bot, or a staff member: ``staff``)
    text: str
    input_type: str | None
    confidence: float | None
    retrieval_score: float | None
    citations: list[str]
    red_flag: bool
    rating: int | None  # the patient's 👍 (1) / 👎 (-1) on a bot message
    created_at: datetime
    staff_by: str | None = None  # on a staff reply: who wrote it (``db.handoffs.Staff.parse``)

    @property
    def staff(self) -> bool:
        """A staff member's reply relayed to the patient during a handoff, not the bot's."""
        return self.input_type == STAFF_REPLY

    @property
    def relayed(self) -> bool:
        """A patient's message relayed to the staff during a handoff (the bot did not answer it)."""
        return self.input_type == TO_STAFF


@dataclass(frozen=True, slots=True)
class HandoffRow:
    id: int
    reason: str  # human, complaint, unanswered
    status: str  # open, closed
    opened_at: datetime
    staff_answered_at: datetime | None
    closed_at: datetime | None
    closed_by: str | None  # "patient" or a staff member (``db.handoffs.Staff.parse``)


@dataclass(frozen=True, slots=True)
class View:
    email: str | None  # None: the account was deleted
    at: datetime


_VISIBLE = (
    f"(u.active OR u.inactive_reason IS DISTINCT FROM '{ERASE_REASON}') AND u.channel <> '{TRIAL_CHANNEL}'"
)

# The patient's handoffs overlapping conversation ``c``.
_HANDOFFS = """
FROM handoffs h WHERE h.user_id = c.user_id AND h.opened_at <= c.last_activity_at
  AND (h.closed_at IS NULL OR h.closed_at >= c.started_at)
"""

_RECENT = f"""
SELECT c.id, c.user_id AS patient, u.channel, c.role, c.started_at, c.last_activity_at,
       count(m.id) AS messages,
       bool_or(m.direction = 'in' AND m.input_type = ANY($5::text[])) AS asked_staff,
       (SELECT count(*) FROM feedback f JOIN messages fm ON fm.id = f.message_id
        WHERE fm.conversation_id = c.id AND f.rating = -1) AS downs,
       (SELECT CASE WHEN bool_or(h.status = 'open') THEN 'open' WHEN count(*) > 0 THEN 'closed' ELSE 'none' END
        {_HANDOFFS}) AS handoff
FROM conversations c
JOIN users u ON u.id = c.user_id
JOIN messages m ON m.conversation_id = c.id
WHERE {_VISIBLE} AND ($1::text IS NULL OR c.role = $1)
GROUP BY c.id, u.channel
HAVING (NOT $2 OR bool_or(m.direction = 'in' AND m.input_type = ANY($5::text[])))
   AND (NOT $3 OR EXISTS (SELECT 1 FROM feedback f JOIN messages fm ON fm.id = f.message_id
                          WHERE fm.conversation_id = c.id AND f.rating = -1))
   AND (NOT $6 OR EXISTS (SELECT 1 {_HANDOFFS}))
ORDER BY c.last_activity_at DESC, c.id DESC
LIMIT $4
"""


async def recent(
    db: Executor,
    *,
    role: str | None = None,
    asked_staff: bool = False,
    with_down: bool = False,
    handed_off: bool = False,
    limit: int = 100,
) -> list[ConversationRow]:
    """Conversations with at least one message, the most recently active first; ``role`` keeps one role's,
    ``asked_staff`` those where the patient asked for a person (or complained), ``with_down`` those with a 👎,
    ``handed_off`` those with a staff handoff (open or closed)."""
    rows = await db.fetch(_RECENT, role, asked_staff, with_down, limit, list(STAFF_INTENTS), handed_off)
    return [ConversationRow(**{**dict(r), "asked_staff": bool(r["asked_staff"])}) for r in rows]


async def get(db: Executor, conversation_id: int) -> ConversationRow | None:
    """One conversation's list row (None when it does not exist, has no message or its patient is erased)."""
    row = await db.fetchrow(
        _RECENT.replace("WHERE " + _VISIBLE, f"WHERE c.id = $7 AND {_VISIBLE}"),
        None,
        False,
        False,
        1,
        list(STAFF_INTENTS),
        False,
        conversation_id,
    )
    return ConversationRow(**{**dict(row), "asked_staff": bool(row["asked_staff"])}) if row else None


async def messages(db: Executor, conversation_id: int, *, last: int | None = None) -> list[MessageRow]:
    """The conversation's messages in order (``last``: only the last so many), each bot message with the
    patient's rating."""
    rows = await db.fetch(
        """
        SELECT * FROM (
            SELECT m.id, m.direction, m.text, m.input_type, m.confidence, m.retrieval_score, m.citations,
                   m.red_flag, f.rating, m.created_at, m.staff_by
            FROM messages m
            LEFT JOIN LATERAL (SELECT rating FROM feedback WHERE message_id = m.id ORDER BY id DESC LIMIT 1) f
                ON true
            WHERE m.conversation_id = $1
            ORDER BY m.created_at DESC, m.id DESC LIMIT $2
        ) last ORDER BY created_at, id
        """,
        conversation_id,
        last,
    )
    return [MessageRow(**dict(r)) for r in rows]


async def handoffs(db: Executor, conversation_id: int) -> list[HandoffRow]:
    """The staff handoffs overlapping the conversation, oldest first."""
    rows = await db.fetch(
        f"""
        SELECT h.id, h.reason, h.status, h.opened_at, h.staff_answered_at, h.closed_at, h.closed_by
        FROM conversations c CROSS JOIN LATERAL (SELECT h.* {_HANDOFFS}) h
        WHERE c.id = $1 ORDER BY h.opened_at, h.id
        """,
        conversation_id,
    )
    return [HandoffRow(**dict(r)) for r in rows]


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
