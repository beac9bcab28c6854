"""KB versions from one global sequence, so a role's version never repeats (even after it is deleted and
re-created), and a process's cached search index can never be mistaken for current.

Revision ID: 0006
Revises: 0003_telegram
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0003_telegram"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE SEQUENCE kb_version_seq")
    op.execute("SELECT setval('kb_version_seq', GREATEST((SELECT max(version) FROM kb_versions), 0) + 1)")


def downgrade() -> None:
    op.execute("DROP SEQUENCE kb_version_seq")
