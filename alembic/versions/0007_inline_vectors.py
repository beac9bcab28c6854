"""Keep embeddings inline in the table rows (storage MAIN) instead of out of line in TOAST.

A 384-dimension vector is 1,540 bytes; with the entry's text the row passes the ~2 kB TOAST threshold and
pgvector's default storage (EXTERNAL) let PostgreSQL move the vector out of line, so every distance computed by an exact scan
fetched it from the TOAST table: 40 ms for a 10,000-entry role. With MAIN the long text columns leave the
row first and the vector stays: the same scan takes 8 ms, and the table plus TOAST shrink about tenfold.
Existing vectors are rewritten so that they move inline too.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("kb_entries", "guideline_chunks", "embedding_cache")


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN")
        # A new value (not the old TOAST pointer) is stored under the new strategy.
        op.execute(f"UPDATE {table} SET embedding = embedding::real[]::vector WHERE embedding IS NOT NULL")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL")
