"""The staff handoff answered from the clinic console, and who answered.

* ``handoffs.staff_chat_id`` may be NULL: a handoff with no Telegram staff group, answered only from the
  console (``CONSOLE_HANDOFF``); such a handoff never has a topic.
* ``messages.staff_by``: on a staff reply (``input_type = 'staff_reply'``), the staff member who wrote it —
  ``staff:<Telegram user id>:<first name>`` from the staff group's topic, ``console:<account email>`` from the
  console (``db.handoffs.by_telegram`` / ``by_console``); ``handoffs.closed_by`` takes the same forms (or
  ``patient``). NULL on every other message, and on staff replies stored before this migration.
* ``messages_user_time_idx``: a patient's messages by time, for the console's count of handoffs waiting for a
  reply (``db.handoffs.waiting``: read on every console page) without scanning every message.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE handoffs ALTER COLUMN staff_chat_id DROP NOT NULL")
    op.execute("ALTER TABLE messages ADD COLUMN staff_by text")
    op.execute("CREATE INDEX messages_user_time_idx ON messages (user_id, created_at)")


def downgrade() -> None:
    op.execute("DROP INDEX messages_user_time_idx")
    op.execute("ALTER TABLE messages DROP COLUMN staff_by")
    op.execute("DELETE FROM handoffs WHERE staff_chat_id IS NULL")
    op.execute("ALTER TABLE handoffs ALTER COLUMN staff_chat_id SET NOT NULL")
