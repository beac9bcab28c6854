"""What each KB import changed, so that the last import of a role can be undone (``medbot kb undo ROLE``,
``/hoantac ROLE``).

``kb_import_snapshots`` holds, for every entry an import wrote or hid, the entry as it was just before that
import: the whole ``kb_entries`` row as jsonb (``to_jsonb``: content, keywords, flags, active, import id,
timestamps and the embedding with its model), or NULL when the import created the entry. The undo puts the
rows back exactly (``jsonb_populate_record``) and deletes the entries the import created; ``undone_by`` is
the ``kb_imports`` record of that undo, so a second undo steps back to the import before.

Imports applied before this revision have no snapshot and cannot be undone.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE kb_import_snapshots (
            import_id  bigint NOT NULL REFERENCES kb_imports(id) ON DELETE CASCADE,
            role       text NOT NULL,
            code       text NOT NULL,
            entry      jsonb,
            undone_by  bigint,
            PRIMARY KEY (import_id, role, code)
        )
        """
    )
    op.execute("CREATE INDEX kb_import_snapshots_role_idx ON kb_import_snapshots (role, import_id DESC)")


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS kb_import_snapshots")
