"""Fair use: one row per sender (channel + the channel's user id) counting their messages and LLM calls.

``bot/fair_use.py`` decides with one statement per message (``db.rate_limits.count_message``): messages in
the current minute window (``minute_start`` + 1 minute, every message counts, refused ones too), messages
admitted today (``day``, the calendar day in Vietnam) and the messages refused today for the daily limit,
plus the verdict on the latest message (``admitted``). ``llm_day`` / ``llm_calls``: the LLM requests made
for the sender's messages that day. The row holds no words; the worker's clean-up deletes it once its day
is over. It is keyed by the channel id rather than ``users.id`` so that erasing one's data does not reset
the day's limits.

Every message updates its sender's row without touching the key, so the table leaves room on each page
(fillfactor) for PostgreSQL to update in place (HOT) without index writes.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE rate_counters (
            channel      text        NOT NULL,
            external_id  text        NOT NULL,
            minute_start timestamptz NOT NULL,
            minute_count integer     NOT NULL DEFAULT 0,
            day          date        NOT NULL,
            day_count    integer     NOT NULL DEFAULT 0,
            day_refused  integer     NOT NULL DEFAULT 0,
            admitted     boolean     NOT NULL DEFAULT true,
            llm_day      date,
            llm_calls    integer     NOT NULL DEFAULT 0,
            PRIMARY KEY (channel, external_id)
        ) WITH (fillfactor = 70)
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE rate_counters")
