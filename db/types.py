"""Type aliases and value conversions shared by the repository modules."""

from __future__ import annotations

from typing import TypeAlias

import asyncpg
import numpy as np

# Repository functions accept a pool (one statement, autocommit) or a connection (inside a transaction).
Executor: TypeAlias = asyncpg.Pool | asyncpg.Connection


def vector_array(value: object) -> np.ndarray:
    """A ``vector`` column value as float32 numpy (pgvector's codec may return its own ``Vector`` object)."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, dtype=np.float32)
