"""Conversations and their messages: the active conversation, storing turns, memory for the engine.

A staff handoff's messages (``bot.handoff``) are stored in the patient's conversation too (``store_relayed``),
so retention, erasure and the console cover them like any message: a patient message relayed to the staff
(direction "in", input type ``TO_STAFF``) and a staff reply relayed to the patient ("out", ``STAFF_REPLY``).
They are not the bot's exchanges: the bot's memory (``memory``, ``open_with_memory``) leaves them out, and
statistics skip them (``not_handoff``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from db.types import Executor

# A conversation idle for longer than this is closed; the next message starts a new one.
IDLE_MINUTES = 60
# Input types of a staff handoff's messages (``store_relayed``).
TO_STAFF = "to_staff"  # a patient's message relayed to the staff topic (direction "in")
STAFF_REPLY = "staff_reply"  # a staff member's reply relayed to the patient (direction "out")
HANDOFF_TYPES = (TO_STAFF, STAFF_REPLY)


def not_handoff(alias: str = "") -> str:
    """An SQL condition true for a message that is not a staff handoff's (``alias``: the messages table's)."""
    column = f"{alias}.input_type" if alias else "input_type"
    return f"coalesce({column}, '') NOT IN ('{TO_STAFF}', '{STAFF_REPLY}')"


@dataclass(slots=True)
class StoredTurn:
    """What the channel stores after the engine answered one message."""

    user_text: str
    bot_text: str
    input_type: str | None = None
    confidence: float | None = None
    retrieval_score: float | None = None
    citations: list[str] = field(default_factory=list)
    red_flag: bool = False
    latency_ms: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    trace: Any = None


async def active_conversation(db: Executor, user_id: int, role: str | None) -> int:
    """The user's current conversation for this role, or a new one after an idle gap or a role change."""
    row = await db.fetchrow(
        """
        SELECT id FROM conversations
        WHERE user_id = $1 AND role IS NOT DISTINCT FROM $2
          AND last_activity_at > now() - make_interval(mins => $3)
        ORDER BY last_activity_at DESC LIMIT 1
        """,
        user_id,
        role,
        IDLE_MINUTES,
    )
    if row:
        return int(row["id"])
    return int(
        await db.fetchval(
            "INSERT INTO conversations (user_id, role) VALUES ($1, $2) RETURNING id", user_id, role
        )
    )


async def new_conversation(db: Executor, user_id: int, role: str | None) -> int:
    """A new conversation of the user for this role (what came before is not its memory)."""
    return int(
        await db.fetchval(
            "INSERT INTO conversations (user_id, role) VALUES ($1, $2) RETURNING id", user_id, role
        )
    )


async def latest_conversation(db: Executor, user_id: int, role: str | None) -> int:
    """The user's most recent conversation for this role however long ago, or a new one."""
    found = await db.fetchval(
        """
        SELECT id FROM conversations WHERE user_id = $1 AND role IS NOT DISTINCT FROM $2
        ORDER BY last_activity_at DESC LIMIT 1
        """,
        user_id,
        role,
    )
    return int(found) if found is not None else await new_conversation(db, user_id, role)


_STORE_EXCHANGE = """
WITH msgs AS (
    INSERT INTO messages (conversation_id, user_id, direction, text, input_type, confidence,
                          retrieval_score, citations, red_flag, latency_ms, tokens_in, tokens_out, trace)
    VALUES ($1, $2, 'in', $3, $5, DEFAULT, DEFAULT, DEFAULT, $9, DEFAULT, DEFAULT, DEFAULT, DEFAULT),
           ($1, $2, 'out', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
    RETURNING id, direction
), touched AS (
    UPDATE conversations SET last_activity_at = now() WHERE id = $1
), suggested AS (
    INSERT INTO suggestion_sets (user_id, conversation_id, questions)
    SELECT $2, $1, $14::text[] WHERE cardinality($14::text[]) > 0
    RETURNING id
)
SELECT (SELECT id FROM msgs WHERE direction = 'in') AS in_id,
       (SELECT id FROM msgs WHERE direction = 'out') AS out_id,
       (SELECT id FROM suggested) AS set_id
"""


async def store_exchange(
    db: Executor, conversation_id: int, user_id: int, turn: StoredTurn, suggestions: list[str] | None = None
) -> tuple[int, int, int | None]:
    """Store the user's message, the bot's reply, the conversation's activity time and (when there are
    follow-up questions) their suggestion set in one statement, so one round trip and atomic by itself.
    Returns (in id, out id, suggestion set id or None). The two messages are one multi-row VALUES, inserted
    in order, so the question's id is below the answer's (memory pairs them by id)."""
    row = await db.fetchrow(
        _STORE_EXCHANGE,
        conversation_id,
        user_id,
        turn.user_text,
        turn.bot_text,
        turn.input_type,
        turn.confidence,
        turn.retrieval_score,
        turn.citations,
        turn.red_flag,
        turn.latency_ms,
        turn.tokens_in,
        turn.tokens_out,
        turn.trace,
        list(suggestions or []),
    )
    assert row is not None
    set_id = row["set_id"]
    return int(row["in_id"]), int(row["out_id"]), None if set_id is None else int(set_id)


async def store_turn(db: Executor, conversation_id: int, user_id: int, turn: StoredTurn) -> tuple[int, int]:
    """Store the user's message and the bot's reply; returns their ids (one statement)."""
    in_id, out_id, _ = await store_exchange(db, conversation_id, user_id, turn)
    return in_id, out_id


_STORE_RELAYED = """
WITH found AS (
    SELECT id FROM conversations WHERE user_id = $1 ORDER BY last_activity_at DESC, id DESC LIMIT 1
), created AS (
    INSERT INTO conversations (user_id, role)
    SELECT $1, (SELECT role FROM users WHERE id = $1) WHERE NOT EXISTS (SELECT 1 FROM found)
    RETURNING id
), conv AS (
    SELECT id FROM found UNION ALL SELECT id FROM created
), msg AS (
    INSERT INTO messages (conversation_id, user_id, direction, text, input_type, red_flag, staff_by)
    SELECT id, $1, $2, $3, $4, $5, $6 FROM conv
    RETURNING id
), touched AS (
    UPDATE conversations SET last_activity_at = now() WHERE id = (SELECT id FROM conv)
)
SELECT id FROM msg
"""


async def store_relayed(
    db: Executor,
    user_id: int,
    direction: str,
    text: str,
    *,
    red_flag: bool = False,
    staff_by: str | None = None,
) -> int:
    """Store a staff handoff's message in the patient's latest conversation (the one the handoff was opened
    in, kept active by these messages; a new one in the user's role if they have none) and touch it: a patient
    message relayed to the staff (``direction`` "in", ``TO_STAFF``) or a staff reply ("out", ``STAFF_REPLY``,
    with ``staff_by``: who wrote it, ``db.handoffs.by_telegram`` / ``by_console``). Returns the message's id."""
    input_type = TO_STAFF if direction == "in" else STAFF_REPLY
    return int(await db.fetchval(_STORE_RELAYED, user_id, direction, text, input_type, red_flag, staff_by))


async def latest_of(db: Executor, user_id: int) -> int | None:
    """The patient's latest conversation, whatever its role and however long idle (where a staff handoff's
    messages are stored), None when they have none."""
    found = await db.fetchval(
        "SELECT id FROM conversations WHERE user_id = $1 ORDER BY last_activity_at DESC, id DESC LIMIT 1",
        user_id,
    )
    return None if found is None else int(found)


async def handoff_conversation(db: Executor, user_id: int) -> int:
    """The conversation a staff handoff's messages go to (as ``store_relayed`` picks it): the patient's latest
    (``latest_of``), or a new one in their role."""
    found = await latest_of(db, user_id)
    if found is not None:
        return found
    return int(
        await db.fetchval(
            "INSERT INTO conversations (user_id, role) SELECT $1, role FROM users WHERE id = $1 RETURNING id",
            user_id,
        )
    )


async def recent_messages(
    db: Executor, conversation_id: int, limit: int, *, handoff: bool = True
) -> list[dict[str, Any]]:
    """The last ``limit`` messages, oldest first; ``handoff=False`` leaves a staff handoff's out (the bot's
    exchanges alone)."""
    rows = await db.fetch(
        f"""
        SELECT direction, text, input_type, citations FROM (
            SELECT id, direction, text, input_type, citations FROM messages
            WHERE conversation_id = $1 AND ($3 OR {not_handoff()}) ORDER BY created_at DESC, id DESC LIMIT $2
        ) last ORDER BY id
        """,
        conversation_id,
        limit,
        handoff,
    )
    return [dict(r) for r in rows]


# The memory of a conversation ``{conv}``: its summary, the last ``{limit}`` messages (each bot message with the
# suggestions shown under it; a staff handoff's messages left out: the bot did not say them, nor was it asked
# them) and whether it already had an answer from the KB. One fragment for ``memory`` and
# ``open_with_memory``, so both read the same thing.
_MEMORY_SELECT = """
SELECT {conv}.id AS conversation_id, {conv}.summary,
       last.direction, last.text, last.input_type, last.citations,
       CASE WHEN last.direction = 'out' THEN (
           SELECT s.questions FROM suggestion_sets s
           WHERE s.conversation_id = {conv}.id AND s.created_at = last.created_at
           ORDER BY s.id DESC LIMIT 1
       ) END AS suggestions,
       EXISTS (
           SELECT 1 FROM messages m
           WHERE m.conversation_id = {conv}.id AND m.direction = 'out' AND cardinality(m.citations) > 0
       ) AS answered
FROM {source}
LEFT JOIN LATERAL (
    SELECT id, direction, text, input_type, citations, created_at FROM messages
    WHERE conversation_id = {conv}.id AND {not_handoff} ORDER BY created_at DESC, id DESC LIMIT {limit}
) last ON true
{where}
ORDER BY last.id
"""
_MEMORY_SELECT = _MEMORY_SELECT.replace("{not_handoff}", not_handoff())
_MEMORY = _MEMORY_SELECT.format(conv="c", source="conversations c", limit="$2", where="WHERE c.id = $1")
_MEMORY_KEYS = ("direction", "text", "input_type", "citations", "suggestions")


def _memory_messages(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: r[k] for k in _MEMORY_KEYS} for r in rows if r["direction"]]


async def memory(db: Executor, conversation_id: int, limit: int) -> tuple[list[dict[str, Any]], str, bool]:
    """``recent_messages`` (each bot message with the suggestions shown under it), the summary, and whether
    the conversation already had an answer from the KB (a bot message citing entries), in one round trip."""
    rows = await db.fetch(_MEMORY, conversation_id, limit)
    if not rows:
        return [], "", False
    return _memory_messages(rows), rows[0]["summary"] or "", bool(rows[0]["answered"])


_OPEN_WITH_MEMORY = """
WITH found AS (
    SELECT id FROM conversations
    WHERE user_id = $1 AND role IS NOT DISTINCT FROM $2{recent}
    ORDER BY last_activity_at DESC LIMIT 1
), created AS (
    INSERT INTO conversations (user_id, role)
    SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM found)
    RETURNING id, summary
), conv AS (
    SELECT c.id, c.summary FROM found JOIN conversations c ON c.id = found.id
    UNION ALL
    SELECT id, summary FROM created
)""" + _MEMORY_SELECT.format(conv="conv", source="conv", limit="$3", where="")
_OPEN_ACTIVE = _OPEN_WITH_MEMORY.format(
    recent="\n      AND last_activity_at > now() - make_interval(mins => $4)"
)
_OPEN_LATEST = _OPEN_WITH_MEMORY.format(recent="")


@dataclass(slots=True)
class OpenedConversation:
    """A conversation opened for a message, with its memory as ``memory`` reads it."""

    conversation_id: int
    messages: list[dict[str, Any]]  # the last ones, oldest first, each bot message with its suggestions
    summary: str
    answered: bool  # the conversation already had an answer from the KB


async def open_with_memory(
    db: Executor, user_id: int, role: str | None, mode: str, limit: int
) -> OpenedConversation:
    """The conversation a message goes to and its memory (``memory``), in one round trip.

    ``mode``: "active" (``active_conversation``: the current one, a new one after ``IDLE_MINUTES``), "keep"
    (``latest_conversation``: the latest however old) or "new" (``new_conversation``: nothing to remember)."""
    if mode == "new":
        return OpenedConversation(await new_conversation(db, user_id, role), [], "", False)
    if mode == "active":
        rows = await db.fetch(_OPEN_ACTIVE, user_id, role, limit, IDLE_MINUTES)
    elif mode == "keep":
        rows = await db.fetch(_OPEN_LATEST, user_id, role, limit)
    else:
        raise ValueError(f"mode must be active, keep or new, not {mode!r}")
    return OpenedConversation(
        int(rows[0]["conversation_id"]),
        _memory_messages(rows),
        rows[0]["summary"] or "",
        bool(rows[0]["answered"]),
    )


async def get_summary(db: Executor, conversation_id: int) -> str:
    return await db.fetchval("SELECT summary FROM conversations WHERE id = $1", conversation_id) or ""


async def set_summary(db: Executor, conversation_id: int, summary: str) -> None:
    await db.execute("UPDATE conversations SET summary = $2 WHERE id = $1", conversation_id, summary)


async def get_message(db: Executor, message_id: int) -> dict[str, Any] | None:
    row = await db.fetchrow("SELECT * FROM messages WHERE id = $1", message_id)
    return dict(row) if row else None


async def role_offer(db: Executor, message_id: int, user_id: int) -> tuple[str, str] | None:
    """The role a bot reply of ``user_id`` offered to switch to (its trace's ``cross_role`` check) and the
    user's message it answered; None when the message is not theirs, offered nothing, or is gone."""
    row = await db.fetchrow(
        """
        SELECT (SELECT r->'cross_role'->>'offer' FROM jsonb_array_elements(o.trace) r
                WHERE jsonb_typeof(r) = 'object' AND r ? 'cross_role' LIMIT 1) AS offer,
               (SELECT i.text FROM messages i
                WHERE i.conversation_id = o.conversation_id AND i.direction = 'in' AND i.id < o.id
                ORDER BY i.id DESC LIMIT 1) AS question
        FROM messages o
        WHERE o.id = $1 AND o.user_id = $2 AND o.direction = 'out' AND jsonb_typeof(o.trace) = 'array'
        """,
        message_id,
        user_id,
    )
    if row is None or not row["offer"] or not row["question"]:
        return None
    return str(row["offer"]), str(row["question"])
