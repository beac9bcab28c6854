"""Staff handoffs: a patient handed to the clinic's staff, who answer in a topic of the Telegram staff group.

* ``handoffs``: one row per handoff — the patient (``user_id``, deleted with the user: ``/xoadulieu`` and the
  retention job erase it by cascade), their ``channel``, the staff group (``staff_chat_id``) and the topic
  (``topic_id``, the forum topic's ``message_thread_id``; NULL only while the topic is being created),
  ``status`` open/closed, ``reason`` (human, complaint, unanswered), ``opened_at``, ``closed_at`` and
  ``closed_by`` (``staff:<Telegram user id>`` or ``patient``), ``staff_answered_at`` (the first staff
  message relayed), ``reminded_at`` (when the worker reminded the topic that nobody had answered yet).
* At most one open handoff per patient (a partial unique index); a topic leads to one handoff.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE handoffs (
            id                bigserial   PRIMARY KEY,
            user_id           bigint      NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            channel           text        NOT NULL,
            staff_chat_id     bigint      NOT NULL,
            topic_id          bigint,
            status            text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
            reason            text        NOT NULL,
            opened_at         timestamptz NOT NULL DEFAULT now(),
            staff_answered_at timestamptz,
            reminded_at       timestamptz,
            closed_at         timestamptz,
            closed_by         text
        )
        """
    )
    op.execute("CREATE UNIQUE INDEX handoffs_one_open ON handoffs (user_id) WHERE status = 'open'")
    op.execute(
        "CREATE UNIQUE INDEX handoffs_topic ON handoffs (staff_chat_id, topic_id) WHERE topic_id IS NOT NULL"
    )


def downgrade() -> None:
    op.execute("DROP TABLE handoffs")
