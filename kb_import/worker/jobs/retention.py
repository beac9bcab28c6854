"""Retention: messages (and the traces stored on them) older than ``RETENTION_DAYS`` are deleted, then the
conversations left empty, suggestion sets and article checks as old, users whose erasure a channel deferred,
and last the digests' quotes of every message now gone (``db.digest.scrub_quotes``).

The cut-off is ``now() - RETENTION_DAYS`` on the database clock; a message exactly at the cut-off is kept.
"""

from __future__ import annotations

from db import digest
from db import retention as retention_db
from kb_import.worker.context import Counts, JobContext


async def run(ctx: JobContext) -> Counts:
    days = ctx.settings.retention_days
    before = await retention_db.cutoff(ctx.pool, days)
    messages = await retention_db.delete_messages_before(ctx.pool, before)
    conversations = await retention_db.delete_empty_conversations_before(ctx.pool, before)
    suggestion_sets = await retention_db.delete_suggestion_sets_before(ctx.pool, before)
    verification_sessions = await retention_db.delete_verification_sessions_before(ctx.pool, before)
    erased = await retention_db.complete_erasures(ctx.pool)
    quotes = await digest.scrub_quotes(ctx.pool)
    return {
        "retention_days": days,
        "cutoff": before.isoformat(),
        "messages": messages,
        "conversations": conversations,
        "suggestion_sets": suggestion_sets,
        "verification_sessions": verification_sessions,
        "users_erased": erased,
        "digests_scrubbed": quotes,
    }
