"""Suggestion sets found by conversation: conversation memory reads the suggestions of the previous reply
(the buttons a patient saw), which are candidates when the next message is a follow-up.

The set and the bot's message are written by one statement (``db.conversations.store_exchange``), so they
share ``created_at``; the index finds a conversation's set at a given time without scanning the table.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX suggestion_sets_conversation_idx ON suggestion_sets (conversation_id, created_at)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS suggestion_sets_conversation_idx")
