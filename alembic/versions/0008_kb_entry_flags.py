"""Two flags on KB entries: ``urgent`` (the entry tells the reader to seek care now, so an answer from it gets
no routine closing line) and ``sample`` (the entry comes from MedBot's shipped sample KB and has not been
reviewed by the clinic's doctors, so an answer from it says so).

Both default to false. Entries loaded before this migration by ``medbot setup`` (the only importer of the
shipped sample, recorded as ``requested_by = 'setup'``) are marked ``sample``: until now their answers said
the text came from the clinic's doctors, which it did not. Erring towards "not reviewed" is the honest side;
an admin clears it with ``medbot kb reviewed ROLE`` or ``/duyetkb ROLE``.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE kb_entries ADD COLUMN urgent boolean NOT NULL DEFAULT false, "
        "ADD COLUMN sample boolean NOT NULL DEFAULT false"
    )
    op.execute(
        "UPDATE kb_entries SET sample = true "
        "WHERE import_id IN (SELECT id FROM kb_imports WHERE requested_by = 'setup')"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE kb_entries DROP COLUMN sample, DROP COLUMN urgent")
