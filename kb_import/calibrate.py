"""Re-estimate a role's calibration on its own KB and store it (issue 21; the method is
``engine.retrieval.adaptation``'s).

Run at the end of every import that changed a role (``kb_import.job.run_import``), by the worker job
``kb_calibration`` for roles whose KB changed without it (an import without embeddings, the embedding backfill
completing a role, a change of procedure), and by ``medbot kb calibrate ROLE``. The searches go through a
fresh ``KBSearch`` on the role's stored entries and vectors, exactly as the bot searches them. A failure
leaves the stored calibration as it was (the searcher keeps the previous one while it matches the KB, else
the global model) and is logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import asyncpg

from db import calibrations, kb
from db.job_context import Counts, JobContext
from db.stores import PgKBStore
from engine.retrieval import adaptation
from engine.retrieval.adaptation import RoleCalibration
from engine.retrieval.search import KBSearch

log = logging.getLogger("medbot.kb.calibration")


async def calibrate_role(pool: asyncpg.Pool, role: str, embedder: Any) -> RoleCalibration:
    """Measure and store ``role``'s calibration; raises on failure (nothing is stored then). ``embedder``:
    the process's embedder (None: the sparse mode only)."""
    started = time.perf_counter()
    search = KBSearch(PgKBStore(pool), embedder, version_check_seconds=3600.0)
    cal = await adaptation.calibrate(search, role)
    await calibrations.save(pool, cal)
    log.info(
        "kb.calibrated role=%s status=%s params=%s queries=%s seconds=%.2f%s",
        role,
        cal.status,
        {mode: adj.to_dict() for mode, adj in cal.params.items()},
        cal.n_queries,
        time.perf_counter() - started,
        f" reason={cal.reason}" if cal.reason else "",
    )
    return cal


async def calibrate_roles(
    pool: asyncpg.Pool, roles: Sequence[str], embedder: Any
) -> dict[str, RoleCalibration]:
    """``calibrate_role`` for each role; a role that fails keeps what it had (logged), the others go on."""
    done: dict[str, RoleCalibration] = {}
    for role in roles:
        try:
            done[role] = await calibrate_role(pool, role, embedder)
        except Exception:
            log.exception(
                "kb.calibration_failed role=%s: the previous calibration (or the global one) stays", role
            )
    return done


async def stale_roles(pool: asyncpg.Pool) -> list[str]:
    """Roles with active entries whose stored calibration was measured on another KB version (or by an older
    procedure), or that have none."""
    measured = await calibrations.measured_on(pool)
    out = []
    for role in await kb.roles(pool):
        version = await kb.version(pool, role)
        if measured.get(role) != (version, adaptation.PROCEDURE):
            out.append(role)
    return out


async def run(ctx: JobContext) -> Counts:
    """The worker job: re-estimate every stale role."""
    roles = await stale_roles(ctx.pool)
    if not roles:
        return {"roles": 0}
    embedder = ctx.embedder()
    done = await calibrate_roles(ctx.pool, roles, embedder)
    return {
        "roles": len(roles),
        "adjusted": sorted(r for r, c in done.items() if c.status == "adjusted"),
        "global": sorted(r for r, c in done.items() if c.status == "global"),
        "failed": sorted(set(roles) - set(done)),
    }
