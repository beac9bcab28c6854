"""Marking a role's KB as reviewed by the clinic: its entries stop being presented as unreviewed sample material.

The shipped sample KB is imported with ``ImportOptions(sample=True)``; answers from its entries say they come
from MedBot's sample material, not from the clinic's doctors. Once the clinic's doctors have read a role's
entries, an admin marks the role reviewed (``medbot kb reviewed ROLE`` or ``/duyetkb ROLE`` in Telegram):
every entry of the role loses the sample mark, the role's KB version moves on (running bots reload it) and
answers get the role's normal intro. Importing the clinic's own file for the role has the same effect on the
rows it contains. Used by the CLI and the Telegram admin command, which only render the result.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncpg

from db import kb, kb_write
from kb_import.roles import known_roles, resolve_role

log = logging.getLogger("medbot.kb_review")


@dataclass(slots=True)
class ReviewResult:
    """``role`` is None when the name given matches no known role; ``marked`` counts active entries."""

    role: str | None
    marked: int = 0
    pending: dict[str, int] = field(default_factory=dict)  # roles still holding sample entries, after this


async def mark_role_reviewed(
    pool: asyncpg.Pool, name: str, *, requested_by: str, extra_roles: Sequence[str] = ()
) -> ReviewResult:
    """Mark the role named ``name`` (id or Vietnamese label) reviewed; an unknown name changes nothing."""
    known = known_roles([*await kb_write.existing_roles(pool), *extra_roles])
    role = resolve_role(name.strip(), known)
    if role is None:
        return ReviewResult(None, pending=await kb.sample_counts(pool))
    marked = await kb.mark_reviewed(pool, role)
    log.info("kb.reviewed role=%s marked=%d by=%s", role, marked, requested_by)
    return ReviewResult(role, marked, await kb.sample_counts(pool))
