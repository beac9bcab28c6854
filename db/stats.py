"""Usage statistics for admins (``/stats``) and the questions that need a doctor (``/unanswered``).

Definitions: a *message* is an incoming user message; *answered* means the bot's reply to a medical
question cited at least one KB entry; *clarified* means it cited none (the bot asked to clarify or offered
topics). Top topics count the topics of the cited KB entries.

Staff's trials on the console ("try it": users of channel :data:`TRIAL_CHANNEL`, one per staff member) are
not patients: every number here and in the digest (``db.digest``) leaves them out. Nor do they count a staff
handoff's messages (``db.conversations.not_handoff``): the patient's messages relayed to the staff and the
staff's replies are the clinic's conversation, not the bot's traffic (the console shows them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from db.conversations import not_handoff
from db.types import Executor

# The channel of the console's "try it" users (``bot.web.console.quality``): never counted as patients.
TRIAL_CHANNEL = "console_try"
# ``<user id column> NOT_TRIAL``: the row is a patient's, not a staff trial's.
NOT_TRIAL = f"NOT IN (SELECT id FROM users WHERE channel = '{TRIAL_CHANNEL}')"


@dataclass(slots=True)
class Window:
    days: int
    users: int
    new_users: int
    messages: int
    answered: int
    clarified: int
    thumbs_up: int
    thumbs_down: int
    top_topics: list[tuple[str, int]]


async def window(db: Executor, days: int, top: int = 5) -> Window:
    row = await db.fetchrow(
        f"""
        WITH since AS (SELECT now() - make_interval(days => $1) AS t),
        m AS (SELECT * FROM messages, since
              WHERE created_at >= since.t AND user_id {NOT_TRIAL} AND {not_handoff("messages")})
        SELECT
          (SELECT count(DISTINCT user_id) FROM m WHERE direction = 'in') AS users,
          (SELECT count(*) FROM users, since WHERE created_at >= since.t AND channel <> '{TRIAL_CHANNEL}')
              AS new_users,
          (SELECT count(*) FROM m WHERE direction = 'in') AS messages,
          (SELECT count(*) FROM m WHERE direction = 'out'
              AND input_type = 'medical_question' AND cardinality(citations) > 0) AS answered,
          (SELECT count(*) FROM m WHERE direction = 'out'
              AND input_type = 'medical_question' AND cardinality(citations) = 0) AS clarified,
          (SELECT count(*) FROM feedback, since WHERE rating = 1 AND created_at >= since.t
              AND user_id {NOT_TRIAL}) AS up,
          (SELECT count(*) FROM feedback, since WHERE rating = -1 AND created_at >= since.t
              AND user_id {NOT_TRIAL}) AS down
        """,
        days,
    )
    topics = await db.fetch(
        f"""
        SELECT COALESCE(NULLIF(k.topic, ''), 'Khác') AS topic, count(*) AS n
        FROM messages m
        JOIN conversations c ON c.id = m.conversation_id
        CROSS JOIN LATERAL unnest(m.citations) AS cited(code)
        JOIN kb_entries k ON k.code = cited.code AND k.role = c.role
        WHERE m.direction = 'out' AND m.created_at >= now() - make_interval(days => $1)
          AND m.user_id {NOT_TRIAL}
        GROUP BY 1 ORDER BY n DESC, topic LIMIT $2
        """,
        days,
        top,
    )
    return Window(
        days=days,
        users=row["users"],
        new_users=row["new_users"],
        messages=row["messages"],
        answered=row["answered"],
        clarified=row["clarified"],
        thumbs_up=row["up"],
        thumbs_down=row["down"],
        top_topics=[(r["topic"], r["n"]) for r in topics],
    )


async def daily_messages(db: Executor, days: int = 30) -> list[tuple[date, int]]:
    """Incoming messages per day over the last ``days`` days, zero-filled, oldest first."""
    rows = await db.fetch(
        f"""
        SELECT d::date AS day, count(m.id) AS n
        FROM generate_series(current_date - ($1 - 1), current_date, interval '1 day') AS d
        LEFT JOIN messages m ON m.direction = 'in' AND m.created_at::date = d::date AND m.user_id {NOT_TRIAL}
            AND {not_handoff("m")}
        GROUP BY 1 ORDER BY 1
        """,
        days,
    )
    return [(r["day"], r["n"]) for r in rows]


@dataclass(slots=True)
class Unanswered:
    message_id: int  # the user's incoming message
    text: str
    role: str | None
    score: float | None
    thumbs_down: bool
    at: datetime | None = None  # when the question came


async def unanswered(db: Executor, threshold: float, days: int = 30, limit: int = 10) -> list[Unanswered]:
    """Recent user questions whose reply scored under ``threshold``, cited nothing, or got a 👎."""
    rows = await db.fetch(
        f"""
        SELECT i.id, i.text, c.role, o.retrieval_score, i.created_at,
               EXISTS (SELECT 1 FROM feedback f WHERE f.message_id = o.id AND f.rating = -1) AS down
        FROM messages i
        JOIN conversations c ON c.id = i.conversation_id
        CROSS JOIN LATERAL (
            SELECT id, retrieval_score, citations, input_type FROM messages o
            WHERE o.conversation_id = i.conversation_id AND o.direction = 'out' AND o.id > i.id
              AND {not_handoff("o")}
            ORDER BY o.id LIMIT 1
        ) o
        WHERE i.direction = 'in' AND i.created_at >= now() - make_interval(days => $2)
          AND i.user_id {NOT_TRIAL} AND {not_handoff("i")}
          AND (
            EXISTS (SELECT 1 FROM feedback f WHERE f.message_id = o.id AND f.rating = -1)
            OR (o.input_type = 'medical_question'
                AND (COALESCE(o.retrieval_score, 0) < $1 OR cardinality(o.citations) = 0))
          )
        ORDER BY i.id DESC LIMIT $3
        """,
        threshold,
        days,
        limit,
    )
    return [
        Unanswered(r["id"], r["text"], r["role"], r["retrieval_score"], r["down"], r["created_at"])
        for r in rows
    ]


@dataclass(slots=True)
class RoleNumbers:
    role: str
    questions: int  # replies to a medical question
    answered: int  # of which cited a KB entry
    thumbs_up: int
    thumbs_down: int

    @property
    def answered_share(self) -> float | None:
        return self.answered / self.questions if self.questions else None


async def by_role(db: Executor, days: int) -> list[RoleNumbers]:
    """Per conversation role over the last ``days`` days: medical questions, answered ones, 👍 and 👎 (patients
    only), roles with the most questions first."""
    rows = await db.fetch(
        f"""
        SELECT c.role,
               count(*) FILTER (WHERE m.input_type = 'medical_question') AS questions,
               count(*) FILTER (WHERE m.input_type = 'medical_question' AND cardinality(m.citations) > 0)
                   AS answered,
               count(f.id) FILTER (WHERE f.rating = 1) AS up,
               count(f.id) FILTER (WHERE f.rating = -1) AS down
        FROM messages m
        JOIN conversations c ON c.id = m.conversation_id
        LEFT JOIN feedback f ON f.message_id = m.id
        WHERE m.direction = 'out' AND m.created_at >= now() - make_interval(days => $1)
          AND m.user_id {NOT_TRIAL} AND c.role IS NOT NULL AND {not_handoff("m")}
        GROUP BY c.role ORDER BY questions DESC, c.role
        """,
        days,
    )
    return [RoleNumbers(r["role"], r["questions"], r["answered"], r["up"], r["down"]) for r in rows]


async def incoming_message(db: Executor, message_id: int) -> tuple[str, str | None] | None:
    """(text, conversation role) of an incoming message."""
    row = await db.fetchrow(
        """
        SELECT m.text, c.role FROM messages m JOIN conversations c ON c.id = m.conversation_id
        WHERE m.id = $1 AND m.direction = 'in'
        """,
        message_id,
    )
    return (row["text"], row["role"]) if row else None
