"""Retention and housekeeping deletes: old messages (with their traces), emptied conversations, old suggestion
sets and article checks, deferred erasures, old outbox rows. (Digest quotes of deleted messages:
``db.digest.scrub_quotes``.)

Deletes run in batches (``BATCH`` rows per statement) so a first run over a large history never holds long
locks on ``messages``. Feedback on deleted messages goes with them (ON DELETE CASCADE).
"""

from __future__ import annotations

from datetime import datetime

from db.types import Executor

BATCH = 5000
ERASE_REASON = "erase_requested"


def _count(status: str) -> int:
    return int(status.split()[-1])


async def cutoff(db: Executor, days: int) -> datetime:
    return await db.fetchval("SELECT now() - make_interval(days => $1)", days)


async def delete_messages_before(db: Executor, before: datetime, batch: int = BATCH) -> int:
    """Delete every message created before ``before`` (its trace is a column of the row); returns the count."""
    total = 0
    while True:
        deleted = _count(
            await db.execute(
                """
                DELETE FROM messages WHERE id IN (
                    SELECT id FROM messages WHERE created_at < $1 ORDER BY created_at LIMIT $2)
                """,
                before,
                batch,
            )
        )
        total += deleted
        if deleted < batch:
            return total


async def delete_empty_conversations_before(db: Executor, before: datetime) -> int:
    """Conversations without messages whose last activity is before ``before`` (never a fresh, empty one)."""
    return _count(
        await db.execute(
            """
            DELETE FROM conversations c
            WHERE c.last_activity_at < $1 AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id)
            """,
            before,
        )
    )


async def delete_suggestion_sets_before(db: Executor, before: datetime) -> int:
    """Suggestion sets (the buttons offered after an answer, which an LLM may word after the patient's
    message) created before ``before``, even in a conversation still in use."""
    return _count(await db.execute("DELETE FROM suggestion_sets WHERE created_at < $1", before))


async def delete_verification_sessions_before(db: Executor, before: datetime) -> int:
    """Article checks (the article's sentences, evidence, verdicts) last touched before ``before``."""
    return _count(await db.execute("DELETE FROM verification_sessions WHERE updated_at < $1", before))


async def complete_erasures(db: Executor) -> int:
    """Delete users a channel marked for erasure (``inactive_reason = 'erase_requested'``), with their data."""
    return _count(
        await db.execute("DELETE FROM users WHERE NOT active AND inactive_reason = $1", ERASE_REASON)
    )


async def delete_outbox_done_older_than(db: Executor, days: int) -> int:
    """Outbox rows no longer pending (sent, failed, …) created more than ``days`` days ago."""
    return _count(
        await db.execute(
            "DELETE FROM outbox WHERE status <> 'pending' AND created_at < now() - make_interval(days => $1)",
            days,
        )
    )
