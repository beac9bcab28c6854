"""KB entry history: every change a staff member makes to an entry in the clinic console.

``kb_entry_history`` holds one row per change: the entry (``entry_id``, with its ``role`` and ``code`` so a
row still reads without the entry), ``snapshot`` — every stored field of the entry as it was BEFORE the
change (for ``create``: as created) —, ``result`` (the same fields as the change left them: a later change
made outside the console, by a spreadsheet import, shows as the difference between one row's ``result``
and the next state, never as a doctor's), who (``changed_by``, a staff account) and when, and the ``kind``
of change: ``edit``, ``create``, ``hide``, ``restore`` (shown again) or ``revert`` (an older version put
back).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE kb_entry_history (
            id          bigserial   PRIMARY KEY,
            entry_id    bigint      NOT NULL REFERENCES kb_entries(id) ON DELETE CASCADE,
            role        text        NOT NULL,
            code        text        NOT NULL,
            snapshot    jsonb       NOT NULL,
            result      jsonb       NOT NULL,
            changed_by  bigint      REFERENCES staff_accounts(id) ON DELETE SET NULL,
            changed_at  timestamptz NOT NULL DEFAULT now(),
            kind        text        NOT NULL CHECK (kind IN ('edit', 'create', 'hide', 'restore', 'revert'))
        )
        """
    )
    op.execute("CREATE INDEX kb_entry_history_entry_idx ON kb_entry_history (entry_id, id)")


def downgrade() -> None:
    op.execute("DROP TABLE kb_entry_history")
