"""The ``kb_calibrations`` table: each role's re-estimated calibration (``engine.retrieval.adaptation``), one
row per role, replaced by every new measurement (``kb_import.calibrate``) and read by the searcher
(``db.stores.PgKBStore.role_calibration``)."""

from __future__ import annotations

from typing import Any

from db.types import Executor
from engine.retrieval.adaptation import Adjustment, RoleCalibration


async def save(db: Executor, cal: RoleCalibration) -> None:
    """Store ``cal`` as the role's calibration (replacing the previous one)."""
    await db.execute(
        """
        INSERT INTO kb_calibrations (role, fingerprint, kb_version, embedding_model, procedure, status, params,
                                     n_queries, figures, reason, computed_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
        ON CONFLICT (role) DO UPDATE SET
            fingerprint = EXCLUDED.fingerprint, kb_version = EXCLUDED.kb_version,
            embedding_model = EXCLUDED.embedding_model, procedure = EXCLUDED.procedure, status = EXCLUDED.status,
            params = EXCLUDED.params, n_queries = EXCLUDED.n_queries, figures = EXCLUDED.figures,
            reason = EXCLUDED.reason, computed_at = EXCLUDED.computed_at
        """,
        cal.role,
        cal.fingerprint,
        cal.kb_version,
        cal.embedding_model,
        cal.procedure,
        cal.status,
        {mode: adj.to_dict() for mode, adj in cal.params.items()},
        cal.n_queries,
        cal.figures,
        cal.reason,
    )


def _calibration(row: Any) -> RoleCalibration:
    return RoleCalibration(
        role=row["role"],
        fingerprint=row["fingerprint"],
        kb_version=int(row["kb_version"]),
        embedding_model=row["embedding_model"],
        params={mode: Adjustment(float(p["a"]), float(p["b"])) for mode, p in row["params"].items()},
        n_queries=row["n_queries"],
        figures=dict(row["figures"]),
        reason=row["reason"],
        procedure=row["procedure"],
    )


_COLUMNS = "role, fingerprint, kb_version, embedding_model, procedure, params, n_queries, figures, reason"


async def load(db: Executor, role: str) -> RoleCalibration | None:
    row = await db.fetchrow(f"SELECT {_COLUMNS} FROM kb_calibrations WHERE role = $1", role)
    return _calibration(row) if row is not None else None


async def computed_at(db: Executor, role: str) -> Any:
    """When the role's calibration was last stored (None: never)."""
    return await db.fetchval("SELECT computed_at FROM kb_calibrations WHERE role = $1", role)


async def measured_on(db: Executor) -> dict[str, tuple[int, int]]:
    """Per role with a stored calibration: the KB version it was measured on and its procedure's version."""
    rows = await db.fetch("SELECT role, kb_version, procedure FROM kb_calibrations")
    return {r["role"]: (int(r["kb_version"]), int(r["procedure"])) for r in rows}
