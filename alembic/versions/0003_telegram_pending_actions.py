"""Telegram: pending admin actions (an import awaiting "Nhập"/"Huỷ"), shared by every webhook worker.

Revision ID: 0003_telegram
Revises: 0005
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003_telegram"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE telegram_pending_actions (
            id          bigserial PRIMARY KEY,
            chat_id     text NOT NULL,
            kind        text NOT NULL,
            payload     jsonb NOT NULL DEFAULT '{}',
            created_at  timestamptz NOT NULL DEFAULT now(),
            expires_at  timestamptz NOT NULL DEFAULT now() + interval '1 day'
        )
        """
    )
    op.execute("CREATE INDEX telegram_pending_actions_expires_idx ON telegram_pending_actions (expires_at)")


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS telegram_pending_actions")
