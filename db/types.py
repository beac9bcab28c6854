"""Type aliases and value conversions shared by the repository modules."""

from __future__ import annotations

from typing import Any, TypeAlias

import asyncpg
import numpy as np

# Repository functions accept a pool (one statement, autocommit) or a connection (inside a transaction).
Executor: TypeAlias = asyncpg.Pool | asyncpg.Connection


def vector_array(value: object) -> np.ndarray:
    """A ``vector`` column value as float32 numpy (pgvector's codec may return its own ``Vector`` object)."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, dtype=np.float32)


class connection:
    """Use the given connection, or borrow one from the pool for the block."""

    def __init__(self, db: Executor) -> None:
        self._db = db
        self._acquired: Any = None

    async def __aenter__(self) -> Any:
        if hasattr(self._db, "acquire"):
            self._acquired = self._db.acquire()
            return await self._acquired.__aenter__()
        return self._db

    async def __aexit__(self, *exc: object) -> None:
        if self._acquired is not None:
            await self._acquired.__aexit__(*exc)
