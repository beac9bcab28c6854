"""Worker: record which worker process ran each job (``job_runs.worker``).

Revision ID: 0004
Revises: 0001
Create Date: 2026-11-24

"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE job_runs ADD COLUMN IF NOT EXISTS worker text")
    op.execute("CREATE INDEX IF NOT EXISTS job_runs_running_idx ON job_runs (job) WHERE status = 'running'")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS job_runs_running_idx")
    op.execute("ALTER TABLE job_runs DROP COLUMN IF EXISTS worker")
