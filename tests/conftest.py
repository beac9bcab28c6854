"""Suite-wide fixtures: one real PostgreSQL + pgvector per test session, isolated per test.

The suite starts its own embedded server (data in ``.medbot/test``, fsync and synchronous commit off), or
uses ``TEST_DATABASE_URL`` when set. Migrations are applied once into ``medbot_test``; each test that asks
for ``db`` gets every table truncated first. Nothing of ours is mocked.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from db import migrate
from db.embedded import ensure_server
from db.pool import asyncpg_dsn, create_pool

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA_DIR = ROOT / ".medbot" / "test"
TUNING = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def with_database(url: str, name: str) -> str:
    parts = urlsplit(asyncpg_dsn(url))
    return urlunsplit(parts._replace(path="/" + name))


async def recreate_database(server_url: str, name: str) -> str:
    """Drop and create database ``name`` on the server; return its URL."""
    conn = await asyncpg.connect(with_database(server_url, "postgres"))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return with_database(server_url, name)


@pytest.fixture(scope="session")
def server_url() -> str:
    """URL of a PostgreSQL server the suite may create databases on."""
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        return url
    TEST_DATA_DIR.parent.mkdir(parents=True, exist_ok=True)
    return ensure_server(TEST_DATA_DIR, tuning=TUNING)


@pytest.fixture(scope="session")
async def db_url(server_url: str) -> str:
    url = await recreate_database(server_url, "medbot_test")
    await migrate.upgrade(url)
    return url


@pytest.fixture(scope="session")
async def pool(db_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(db_url, max_size=8)
    yield pool
    await pool.close()


@pytest.fixture
async def db(pool: asyncpg.Pool) -> asyncpg.Pool:
    """The session pool on an empty schema."""
    tables = await pool.fetch(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
    )
    names = ", ".join(f'"{t["tablename"]}"' for t in tables)
    await pool.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
    return pool
