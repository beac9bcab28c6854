"""Verification: article name, channel state and one open session per user; verdict source per item.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UPGRADE = [
    "ALTER TABLE verification_sessions ADD COLUMN article_name text NOT NULL DEFAULT ''",
    "ALTER TABLE verification_sessions ADD COLUMN channel text NOT NULL DEFAULT ''",
    "ALTER TABLE verification_sessions ADD COLUMN meta jsonb NOT NULL DEFAULT '{}'",
    "ALTER TABLE verification_items ADD COLUMN verdict_source text",
    "ALTER TABLE verification_items ADD COLUMN searches jsonb NOT NULL DEFAULT '[]'",
    # At most one open session per user: starting a new one stops the old one first (same transaction).
    """CREATE UNIQUE INDEX verification_sessions_one_open ON verification_sessions (user_id)
       WHERE status = 'open' AND user_id IS NOT NULL""",
]

DOWNGRADE = [
    "DROP INDEX IF EXISTS verification_sessions_one_open",
    "ALTER TABLE verification_items DROP COLUMN IF EXISTS searches",
    "ALTER TABLE verification_items DROP COLUMN IF EXISTS verdict_source",
    "ALTER TABLE verification_sessions DROP COLUMN IF EXISTS meta",
    "ALTER TABLE verification_sessions DROP COLUMN IF EXISTS channel",
    "ALTER TABLE verification_sessions DROP COLUMN IF EXISTS article_name",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
