"""Type aliases shared by the repository modules."""

from __future__ import annotations

from typing import TypeAlias

import asyncpg

# Repository functions accept a pool (one statement, autocommit) or a connection (inside a transaction).
Executor: TypeAlias = asyncpg.Pool | asyncpg.Connection
