"""Delivery leases: a redelivered update is handled again when the process handling it died, and the outbox
is claimed row by row instead of under a session lock held on another connection.

``processed_updates`` gets ``state`` (``processing`` while an update is handled, ``done`` once it has been
answered), ``lease_until`` (how long the handler's claim holds without being renewed) and ``holder`` (a
random token of the claim). A redelivery of a ``done`` update is dropped; one whose lease has run out (the
handler crashed) takes it over. Rows written before this revision were recorded as processed, so they
become ``done``, which is also the column default (an older process still running during a deploy records
what it always did).

``outbox`` gets ``claimed_until`` / ``claimed_by``: a drainer claims the head row of a chat with ``FOR UPDATE
SKIP LOCKED`` and sets the lease in the same transaction; a row whose drainer died is claimable again once the
lease has run out. ``outbox_drainers`` holds the one lease that makes a drainer the only one of its channel
(Telegram's overall rate limit holds however many workers exist).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE processed_updates "
        "ADD COLUMN state text NOT NULL DEFAULT 'done' CHECK (state IN ('processing', 'done')), "
        "ADD COLUMN lease_until timestamptz, "
        "ADD COLUMN holder text"
    )
    op.execute("ALTER TABLE outbox ADD COLUMN claimed_until timestamptz, ADD COLUMN claimed_by text")
    # The head of each chat's queue is found through this index (a chat's rows go out in order).
    op.execute(
        "CREATE INDEX outbox_chat_pending_idx ON outbox (channel, chat_id, id) WHERE status = 'pending'"
    )
    op.execute(
        """
        CREATE TABLE outbox_drainers (
            channel     text PRIMARY KEY,
            holder      text NOT NULL,
            lease_until timestamptz NOT NULL
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE outbox_drainers")
    op.execute("DROP INDEX outbox_chat_pending_idx")
    op.execute("ALTER TABLE outbox DROP COLUMN claimed_until, DROP COLUMN claimed_by")
    op.execute("ALTER TABLE processed_updates DROP COLUMN state, DROP COLUMN lease_until, DROP COLUMN holder")
