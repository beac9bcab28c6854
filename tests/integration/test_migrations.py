"""Migrations build the whole schema on an empty database, revert to nothing, and build it again."""

from __future__ import annotations

import asyncpg

from db import migrate
from testkit.database import drop_database, recreate_database
from tests.conftest import run_database

EXPECTED_TABLES = {
    "users",
    "conversations",
    "messages",
    "suggestion_sets",
    "feedback",
    "kb_entries",
    "kb_imports",
    "kb_versions",
    "embedding_cache",
    "guideline_documents",
    "guideline_chunks",
    "verification_sessions",
    "verification_items",
    "processed_updates",
    "outbox",
    "channel_tokens",
    "job_runs",
    "embedding_models",  # 0009
    "outbox_drainers",  # 0010
    "kb_import_snapshots",  # 0012
    "rate_counters",  # 0013
    "chat_states",  # 0014 (replaces 0003_telegram's telegram_pending_actions)
    "kb_calibrations",  # 0015
    "staff_accounts",  # 0016
    "staff_sessions",  # 0016
    "console_audit",  # 0016
    "kb_entry_history",  # 0017
    "handoffs",  # 0018
}


async def _tables(url: str) -> set[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {r["tablename"] for r in rows} - {"alembic_version"}
    finally:
        await conn.close()


async def test_upgrade_downgrade_upgrade(server_url: str) -> None:
    name = run_database("medbot_migrations")
    url = await recreate_database(server_url, name)
    try:
        await _upgrade_downgrade_upgrade(url)
    finally:
        await drop_database(server_url, name)


async def _upgrade_downgrade_upgrade(url: str) -> None:
    await migrate.upgrade(url)
    assert await _tables(url) == EXPECTED_TABLES

    conn = await asyncpg.connect(url)
    try:
        index_kinds = dict(
            await conn.fetch(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('kb_entries','guideline_chunks')"
            )
        )
        assert "hnsw" in index_kinds["kb_entries_embedding_hnsw"]
        assert "vector_cosine_ops" in index_kinds["kb_entries_embedding_hnsw"]
        dim = await conn.fetchval(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'kb_entries'::regclass AND attname = 'embedding'"
        )
        assert dim == "vector(384)"
    finally:
        await conn.close()

    await migrate.downgrade(url, "base")
    assert await _tables(url) == set()
    await migrate.upgrade(url)
    assert await _tables(url) == EXPECTED_TABLES
