"""Chat states: what a chat waits for (aiogram FSM state and data), one row per chat and user.

Replaces two mechanisms: ``telegram_pending_actions`` (an import or a drafted KB question awaiting a button
tap) and the ``awaiting`` rows of ``verification_sessions`` (a chat waiting for an article or a guideline
file). ``db.chat_states.PgStateStorage`` is aiogram's ``BaseStorage`` over this table. Waiting rows of
verification move over as states (a Telegram private chat's id is its user's id); pending button actions are
dropped (they expired within a day anyway: the admin sends the file again).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28
"""

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PENDING_MIGRATION = "0003_telegram_pending_actions.py"


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE chat_states (
            chat_id     bigint      NOT NULL,
            user_id     bigint      NOT NULL,
            thread_id   bigint      NOT NULL DEFAULT 0,
            destiny     text        NOT NULL DEFAULT 'default',
            state       text,
            data        jsonb       NOT NULL DEFAULT '{}',
            updated_at  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (chat_id, user_id, thread_id, destiny)
        )
        """
    )
    op.execute("CREATE INDEX chat_states_updated_idx ON chat_states (updated_at)")
    op.execute(
        """
        INSERT INTO chat_states (chat_id, user_id, state)
        SELECT DISTINCT ON (u.id) u.external_id::bigint, u.external_id::bigint,
               CASE v.meta->>'kind' WHEN 'guideline' THEN 'Waiting:guideline' ELSE 'Waiting:article' END
        FROM verification_sessions v JOIN users u ON u.id = v.user_id
        WHERE v.status = 'awaiting' AND u.channel = 'telegram' AND u.external_id ~ '^[0-9]{1,18}$'
        ORDER BY u.id, v.id DESC
        """
    )
    op.execute("DELETE FROM verification_sessions WHERE status = 'awaiting'")
    op.execute("DROP TABLE telegram_pending_actions")


def downgrade() -> None:
    # telegram_pending_actions exactly as its own migration creates it (0003_telegram's upgrade, run again).
    spec = importlib.util.spec_from_file_location("pending_0003", Path(__file__).with_name(PENDING_MIGRATION))
    assert spec is not None and spec.loader is not None
    created = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(created)
    created.upgrade()
    op.execute("DROP TABLE chat_states")
