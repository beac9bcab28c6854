"""Per-role calibration: the global answer/decline model re-estimated on each role's own KB (issue 21).

One row per role (a new measurement replaces the old one): the adjustment per search mode (``params``:
``{"hybrid": {"a": …, "b": …}, "sparse": …}``, empty when the role keeps the global model, ``reason`` then
says why), the KB it was measured on (``fingerprint`` of the active entries' content, the KB ``kb_version``
at the time, the ``embedding_model`` of the dense leg), the procedure's version, how many self-supervised
queries were searched and what was measured (``figures``). The searcher applies it only while the role's
entries still have that fingerprint. Written by ``db.calibrations`` (``kb_import.calibrate``).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE kb_calibrations (
            role            text        PRIMARY KEY,
            fingerprint     text        NOT NULL,
            kb_version      bigint      NOT NULL DEFAULT 0,
            embedding_model text,
            procedure       integer     NOT NULL,
            status          text        NOT NULL CHECK (status IN ('adjusted', 'global')),
            params          jsonb       NOT NULL DEFAULT '{}',
            n_queries       integer     NOT NULL DEFAULT 0,
            figures         jsonb       NOT NULL DEFAULT '{}',
            reason          text        NOT NULL DEFAULT '',
            computed_at     timestamptz NOT NULL DEFAULT now()
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE kb_calibrations")
