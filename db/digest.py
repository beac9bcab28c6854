"""Numbers for the admins' daily digest over a time window ``[start, end)``, and the erasure of the patients'
words the digest quoted.

"Unanswered" means a bot reply to a medical question that cited no KB entry or whose retrieval score was below
the threshold (the answer was a clarification or a fallback rather than a curated answer). The question shown
is the user's message just before that reply in the same conversation (``question_id`` is that message).

A digest queued in the outbox quotes patients' questions (and 👎 comments), so it names where each quote came
from: ``payload["quotes"]`` is a list of ``{"message_id": int, "text": str}`` (the quote exactly as it appears
in ``payload["text"]``, between “ and ”) and ``payload["erased_quote"]`` the text that replaces a quote whose
message is gone. :func:`scrub_quotes` does the replacing; it runs with every erasure (``db.users.erase``) and
after the retention purge, so a quote in the outbox never outlives the message it came from.

Staff's trials on the console (``db.stats.TRIAL_CHANNEL``) are not patients: no number here counts them; nor
a staff handoff's messages (``db.conversations.not_handoff``), which are not the bot's traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from db.conversations import not_handoff
from db.stats import NOT_TRIAL, TRIAL_CHANNEL
from db.types import Executor

_UNANSWERED = """
    o.direction = 'out' AND o.input_type = 'medical_question'
    AND (cardinality(o.citations) = 0 OR o.retrieval_score IS NULL OR o.retrieval_score < $3)
"""

# The user's message just before reply ``o`` (join as ``q``: ``q.id``, ``q.text``).
_QUESTION = """
    LEFT JOIN LATERAL (
        SELECT i.id, i.text FROM messages i
        WHERE i.conversation_id = o.conversation_id AND i.direction = 'in' AND i.id < o.id
        ORDER BY i.id DESC LIMIT 1
    ) q ON true
"""


@dataclass
class DigestNumbers:
    start: datetime
    end: datetime
    messages_in: int = 0
    messages_out: int = 0
    active_users: int = 0
    new_users: int = 0
    medical_questions: int = 0
    unanswered: int = 0
    red_flags: int = 0
    thumbs_up: int = 0
    thumbs_down: int = 0
    latency_avg_ms: float | None = None
    latency_p95_ms: float | None = None
    by_role: dict[str, int] = field(default_factory=dict)
    by_input_type: dict[str, int] = field(default_factory=dict)
    hourly_in: list[int] = field(default_factory=lambda: [0] * 24)
    hourly_unanswered: list[int] = field(default_factory=lambda: [0] * 24)
    unanswered_questions: list[dict[str, Any]] = field(default_factory=list)
    disliked: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        return {
            "messages_in": self.messages_in,
            "messages_out": self.messages_out,
            "active_users": self.active_users,
            "new_users": self.new_users,
            "medical_questions": self.medical_questions,
            "unanswered": self.unanswered,
            "red_flags": self.red_flags,
            "thumbs_up": self.thumbs_up,
            "thumbs_down": self.thumbs_down,
        }


async def numbers(
    db: Executor, start: datetime, end: datetime, *, threshold: float, tz: str, top: int = 10
) -> DigestNumbers:
    """Everything the digest shows for ``[start, end)``; hours are local hours in time zone ``tz``."""
    out = DigestNumbers(start, end)
    row = await db.fetchrow(
        f"""
        SELECT
            count(*) FILTER (WHERE o.direction = 'in') AS messages_in,
            count(*) FILTER (WHERE o.direction = 'out') AS messages_out,
            count(DISTINCT o.user_id) FILTER (WHERE o.direction = 'in') AS active_users,
            count(*) FILTER (WHERE o.direction = 'out' AND o.input_type = 'medical_question') AS medical_questions,
            count(*) FILTER (WHERE {_UNANSWERED}) AS unanswered,
            count(*) FILTER (WHERE o.direction = 'in' AND o.red_flag) AS red_flags,
            avg(o.latency_ms) FILTER (WHERE o.direction = 'out') AS latency_avg,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY o.latency_ms)
                FILTER (WHERE o.direction = 'out' AND o.latency_ms IS NOT NULL) AS latency_p95
        FROM messages o
        WHERE o.created_at >= $1 AND o.created_at < $2 AND o.user_id {NOT_TRIAL} AND {not_handoff("o")}
        """,
        start,
        end,
        threshold,
    )
    out.messages_in = row["messages_in"]
    out.messages_out = row["messages_out"]
    out.active_users = row["active_users"]
    out.medical_questions = row["medical_questions"]
    out.unanswered = row["unanswered"]
    out.red_flags = row["red_flags"]
    out.latency_avg_ms = float(row["latency_avg"]) if row["latency_avg"] is not None else None
    out.latency_p95_ms = float(row["latency_p95"]) if row["latency_p95"] is not None else None
    out.new_users = int(
        await db.fetchval(
            f"SELECT count(*) FROM users WHERE created_at >= $1 AND created_at < $2 AND channel <> '{TRIAL_CHANNEL}'",
            start,
            end,
        )
    )
    fb = await db.fetchrow(
        f"""
        SELECT count(*) FILTER (WHERE rating = 1) AS up, count(*) FILTER (WHERE rating = -1) AS down
        FROM feedback WHERE created_at >= $1 AND created_at < $2 AND user_id {NOT_TRIAL}
        """,
        start,
        end,
    )
    out.thumbs_up, out.thumbs_down = fb["up"], fb["down"]
    for r in await db.fetch(
        f"""
        SELECT COALESCE(c.role, '?') AS role, count(*) AS n FROM messages o
        JOIN conversations c ON c.id = o.conversation_id
        WHERE o.direction = 'in' AND o.created_at >= $1 AND o.created_at < $2 AND o.user_id {NOT_TRIAL}
          AND {not_handoff("o")} GROUP BY 1 ORDER BY 2 DESC, 1
        """,
        start,
        end,
    ):
        out.by_role[r["role"]] = r["n"]
    for r in await db.fetch(
        f"""
        SELECT COALESCE(input_type, '?') AS t, count(*) AS n FROM messages
        WHERE direction = 'out' AND created_at >= $1 AND created_at < $2 AND user_id {NOT_TRIAL}
          AND {not_handoff()} GROUP BY 1 ORDER BY 2 DESC, 1
        """,
        start,
        end,
    ):
        out.by_input_type[r["t"]] = r["n"]
    for r in await db.fetch(
        f"""
        SELECT extract(hour FROM o.created_at AT TIME ZONE $4)::int AS h,
               count(*) FILTER (WHERE o.direction = 'in') AS n_in,
               count(*) FILTER (WHERE {_UNANSWERED}) AS n_un
        FROM messages o WHERE o.created_at >= $1 AND o.created_at < $2 AND {not_handoff("o")} GROUP BY 1
        """,
        start,
        end,
        threshold,
        tz,
    ):
        out.hourly_in[r["h"]] = r["n_in"]
        out.hourly_unanswered[r["h"]] = r["n_un"]
    out.unanswered_questions = [
        dict(r)
        for r in await db.fetch(
            f"""
            SELECT o.id, o.retrieval_score, o.created_at, COALESCE(c.role, '?') AS role,
                   q.id AS question_id, q.text AS question
            FROM messages o JOIN conversations c ON c.id = o.conversation_id {_QUESTION}
            WHERE o.created_at >= $1 AND o.created_at < $2 AND o.user_id {NOT_TRIAL} AND {_UNANSWERED}
            ORDER BY o.retrieval_score ASC NULLS FIRST, o.id LIMIT $4
            """,
            start,
            end,
            threshold,
            top,
        )
    ]
    out.disliked = [
        dict(r)
        for r in await db.fetch(
            f"""
            SELECT o.id, o.citations, COALESCE(c.role, '?') AS role, q.id AS question_id, q.text AS question,
                   f.comment
            FROM feedback f JOIN messages o ON o.id = f.message_id
            JOIN conversations c ON c.id = o.conversation_id {_QUESTION}
            WHERE f.rating = -1 AND f.created_at >= $1 AND f.created_at < $2 AND f.user_id {NOT_TRIAL}
            ORDER BY f.created_at, f.id LIMIT $3
            """,
            start,
            end,
            top,
        )
    ]
    return out


async def scrub_quotes(db: Executor, attempts: int = 5) -> int:
    """Replace, in every outbox row, each quote whose source message no longer exists (erased by its author,
    or deleted by retention) with the row's ``erased_quote``, and drop it from ``quotes``. Returns the number
    of rows changed. Sent rows are scrubbed as well as pending ones: the table keeps both for weeks.

    Each row is rewritten only if unchanged since it was read; a row another erasure rewrote meanwhile is
    read again (up to ``attempts`` passes)."""
    changed = 0
    for _ in range(attempts):
        missed = 0
        for row in await db.fetch(_QUOTED_GONE):
            payload = _scrubbed(dict(row["payload"]), set(row["gone"]))
            status = await db.execute(
                "UPDATE outbox SET payload = $2 WHERE id = $1 AND payload = $3",
                row["id"],
                payload,
                row["payload"],
            )
            done = int(status.split()[-1])
            changed += done
            missed += 1 - done
        if not missed:
            break
    return changed


# Outbox rows quoting a message that no longer exists, with the ids of those messages.
_QUOTED_GONE = """
    SELECT o.id, o.payload, gone.ids AS gone
    FROM outbox o
    CROSS JOIN LATERAL (
        SELECT array_agg((q->>'message_id')::bigint) AS ids
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(o.payload->'quotes') = 'array'
                                       THEN o.payload->'quotes' ELSE '[]' END) q
        WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = (q->>'message_id')::bigint)
    ) gone
    WHERE o.payload ? 'quotes' AND gone.ids IS NOT NULL
"""


def _scrubbed(payload: dict[str, Any], gone: set[int]) -> dict[str, Any]:
    text = str(payload.get("text") or "")
    placeholder = str(payload.get("erased_quote") or "…")
    kept = []
    for quote in payload["quotes"]:
        if int(quote["message_id"]) in gone:
            text = text.replace(f"“{quote['text']}”", f"“{placeholder}”")
        else:
            kept.append(quote)
    return {**payload, "text": text, "quotes": kept}
