"""Initial schema: users, conversations, messages, KB, imports, guidelines, verification, delivery, jobs.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UPGRADE = """
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE users (
    id              bigserial PRIMARY KEY,
    channel         text NOT NULL,
    external_id     text NOT NULL,
    role            text,
    language        text NOT NULL DEFAULT 'vi',
    display_name    text,
    is_admin        boolean NOT NULL DEFAULT false,
    consent_at      timestamptz,
    active          boolean NOT NULL DEFAULT true,
    inactive_reason text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_seen_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT users_channel_external_id_key UNIQUE (channel, external_id)
);

CREATE TABLE conversations (
    id               bigserial PRIMARY KEY,
    user_id          bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role             text,
    started_at       timestamptz NOT NULL DEFAULT now(),
    last_activity_at timestamptz NOT NULL DEFAULT now(),
    summary          text NOT NULL DEFAULT ''
);
CREATE INDEX conversations_user_activity_idx ON conversations (user_id, last_activity_at DESC);

CREATE TABLE messages (
    id               bigserial PRIMARY KEY,
    conversation_id  bigint NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    user_id          bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    direction        text NOT NULL CHECK (direction IN ('in', 'out')),
    text             text NOT NULL,
    input_type       text,
    confidence       real,
    retrieval_score  real,
    citations        text[] NOT NULL DEFAULT '{}',
    red_flag         boolean NOT NULL DEFAULT false,
    latency_ms       integer,
    tokens_in        integer NOT NULL DEFAULT 0,
    tokens_out       integer NOT NULL DEFAULT 0,
    trace            jsonb,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation_time_idx ON messages (conversation_id, created_at);
CREATE INDEX messages_created_idx ON messages (created_at);

CREATE TABLE suggestion_sets (
    id              bigserial PRIMARY KEY,
    user_id         bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    conversation_id bigint REFERENCES conversations(id) ON DELETE CASCADE,
    questions       text[] NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL DEFAULT now() + interval '7 days'
);
CREATE INDEX suggestion_sets_expires_idx ON suggestion_sets (expires_at);

CREATE TABLE feedback (
    id          bigserial PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    message_id  bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    rating      smallint NOT NULL CHECK (rating IN (-1, 1)),
    comment     text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT feedback_message_user_key UNIQUE (message_id, user_id)
);

CREATE TABLE kb_imports (
    id            bigserial PRIMARY KEY,
    filename      text NOT NULL,
    sha256        text NOT NULL,
    roles         text[] NOT NULL DEFAULT '{}',
    requested_by  text,
    status        text NOT NULL,
    dry_run       boolean NOT NULL DEFAULT false,
    counts        jsonb NOT NULL DEFAULT '{}',
    errors        jsonb NOT NULL DEFAULT '[]',
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);
CREATE INDEX kb_imports_sha_idx ON kb_imports (sha256);

CREATE TABLE kb_entries (
    id              bigserial PRIMARY KEY,
    role            text NOT NULL,
    code            text NOT NULL,
    topic           text NOT NULL DEFAULT '',
    subtopic        text NOT NULL DEFAULT '',
    question        text NOT NULL DEFAULT '',
    answer          text NOT NULL,
    explanation     text NOT NULL DEFAULT '',
    keywords        text[] NOT NULL DEFAULT '{}',
    search_text     text NOT NULL DEFAULT '',
    content_hash    text NOT NULL DEFAULT '',
    embedding       vector(384),
    embedding_model text,
    active          boolean NOT NULL DEFAULT true,
    import_id       bigint REFERENCES kb_imports(id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT kb_entries_role_code_key UNIQUE (role, code)
);
CREATE INDEX kb_entries_role_active_idx ON kb_entries (role) WHERE active;
CREATE INDEX kb_entries_embedding_hnsw ON kb_entries USING hnsw (embedding vector_cosine_ops);

CREATE TABLE kb_versions (
    role        text PRIMARY KEY,
    version     bigint NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE embedding_cache (
    model       text NOT NULL,
    text_hash   text NOT NULL,
    embedding   vector NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, text_hash)
);

CREATE TABLE guideline_documents (
    id           bigserial PRIMARY KEY,
    title        text NOT NULL,
    filename     text NOT NULL,
    sha256       text NOT NULL,
    imported_by  text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT guideline_documents_filename_key UNIQUE (filename)
);

CREATE TABLE guideline_chunks (
    id              bigserial PRIMARY KEY,
    document_id     bigint NOT NULL REFERENCES guideline_documents(id) ON DELETE CASCADE,
    ord             integer NOT NULL,
    heading_path    text[] NOT NULL DEFAULT '{}',
    text            text NOT NULL,
    search_text     text NOT NULL DEFAULT '',
    content_hash    text NOT NULL DEFAULT '',
    embedding       vector(384),
    embedding_model text
);
CREATE INDEX guideline_chunks_document_idx ON guideline_chunks (document_id, ord);
CREATE INDEX guideline_chunks_embedding_hnsw ON guideline_chunks USING hnsw (embedding vector_cosine_ops);

CREATE TABLE verification_sessions (
    id             bigserial PRIMARY KEY,
    user_id        bigint REFERENCES users(id) ON DELETE CASCADE,
    title          text NOT NULL DEFAULT '',
    status         text NOT NULL DEFAULT 'open',
    current_index  integer NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX verification_sessions_user_idx ON verification_sessions (user_id, status);

CREATE TABLE verification_items (
    id          bigserial PRIMARY KEY,
    session_id  bigint NOT NULL REFERENCES verification_sessions(id) ON DELETE CASCADE,
    idx         integer NOT NULL,
    sentence    text NOT NULL,
    section     text NOT NULL DEFAULT '',
    context     jsonb NOT NULL DEFAULT '{}',
    is_heading  boolean NOT NULL DEFAULT false,
    status      text NOT NULL DEFAULT 'PENDING',
    confidence  real,
    evidence    jsonb NOT NULL DEFAULT '[]',
    reasoning   text NOT NULL DEFAULT '',
    guidance    text,
    decision    text,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT verification_items_session_idx_key UNIQUE (session_id, idx)
);

CREATE TABLE processed_updates (
    channel      text NOT NULL,
    update_id    text NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel, update_id)
);
CREATE INDEX processed_updates_time_idx ON processed_updates (processed_at);

CREATE TABLE outbox (
    id          bigserial PRIMARY KEY,
    channel     text NOT NULL DEFAULT 'telegram',
    chat_id     text NOT NULL,
    payload     jsonb NOT NULL,
    status      text NOT NULL DEFAULT 'pending',
    attempts    integer NOT NULL DEFAULT 0,
    not_before  timestamptz NOT NULL DEFAULT now(),
    last_error  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz
);
CREATE INDEX outbox_pending_idx ON outbox (not_before) WHERE status = 'pending';

CREATE TABLE channel_tokens (
    channel        text PRIMARY KEY,
    access_token   text NOT NULL,
    refresh_token  text,
    expires_at     timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE job_runs (
    id           bigserial PRIMARY KEY,
    job          text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    status       text NOT NULL DEFAULT 'running',
    counts       jsonb NOT NULL DEFAULT '{}',
    error        text
);
CREATE INDEX job_runs_job_time_idx ON job_runs (job, started_at DESC);
"""

TABLES = [
    "job_runs",
    "channel_tokens",
    "outbox",
    "processed_updates",
    "verification_items",
    "verification_sessions",
    "guideline_chunks",
    "guideline_documents",
    "embedding_cache",
    "kb_versions",
    "kb_entries",
    "kb_imports",
    "feedback",
    "suggestion_sets",
    "messages",
    "conversations",
    "users",
]


def _statements(sql: str) -> list[str]:
    # asyncpg prepares each statement, so a script is executed one statement at a time.
    return [s.strip() for s in sql.split(";\n") if s.strip()]


def upgrade() -> None:
    for statement in _statements(UPGRADE):
        op.execute(statement)


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
    op.execute("DROP EXTENSION IF EXISTS vector")
