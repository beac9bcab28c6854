"""Processed channel updates: each redelivered webhook is handled once, and one whose handler died is handled
again (migration 0010), plus their clean-up.

A channel claims an update before handling it (:func:`claim`). The claim is a lease: the row says
``processing`` until ``lease_until``, and the handler renews it while it works (:func:`keep_alive`, every third
of the lease). Once the answer is out, :func:`done` marks it ``done``. What a delivery of an update id finds:

* nothing → ``NEW``: handle it;
* ``done`` → ``DONE``: a redelivery of an answered update, drop it (acknowledge it to the platform);
* ``processing`` with a lease in the past → ``TAKEN_OVER``: the handler stopped renewing (its process was
  killed or lost the database), so this delivery handles it;
* ``processing`` with a live lease → ``BUSY``: someone is handling it right now. Not handled here, and not
  acknowledged either: the platform is asked to deliver it again later (by then it is ``done``, or the lease
  has run out), because acknowledging it would lose the message if that handler dies.

Guarantee: an update is answered at least once as long as the platform redelivers what was not acknowledged;
it is answered twice only if a handler died after sending its answer and before :func:`done` (a few
milliseconds), or kept working without being able to renew its lease for longer than the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import Enum

from db.types import Executor

log = logging.getLogger("medbot.db.updates")

DEFAULT_LEASE_SECONDS = 30.0


class Claim(Enum):
    NEW = "new"
    TAKEN_OVER = "taken_over"
    DONE = "done"
    BUSY = "busy"


@dataclass(slots=True)
class UpdateClaim:
    """The outcome of :func:`claim`; ``holder`` is this claim's token when it is ours to handle."""

    channel: str
    update_id: str
    outcome: Claim
    holder: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def ours(self) -> bool:
        return self.outcome in (Claim.NEW, Claim.TAKEN_OVER)


async def claim(
    db: Executor, channel: str, update_id: str | int, lease_s: float = DEFAULT_LEASE_SECONDS
) -> UpdateClaim:
    """Claim an update for handling for ``lease_s`` seconds (see the module docstring for the outcomes)."""
    result = UpdateClaim(channel, str(update_id), Claim.NEW)
    inserted = await db.fetchval(
        """
        INSERT INTO processed_updates AS p (channel, update_id, state, lease_until, holder)
        VALUES ($1, $2, 'processing', now() + make_interval(secs => $3), $4)
        ON CONFLICT (channel, update_id) DO UPDATE
            SET lease_until = EXCLUDED.lease_until, holder = EXCLUDED.holder, processed_at = now()
            WHERE p.state = 'processing' AND p.lease_until < now()
        RETURNING xmax = 0
        """,
        channel,
        result.update_id,
        lease_s,
        result.holder,
    )
    if inserted is not None:
        result.outcome = Claim.NEW if inserted else Claim.TAKEN_OVER
        return result
    state = await db.fetchval(
        "SELECT state FROM processed_updates WHERE channel = $1 AND update_id = $2", channel, result.update_id
    )
    # Gone meanwhile (its handler failed and released it): still someone else's turn; a later try handles it.
    result.outcome = Claim.DONE if state == "done" else Claim.BUSY
    return result


async def renew(db: Executor, held: UpdateClaim, lease_s: float = DEFAULT_LEASE_SECONDS) -> bool:
    """Extend our lease; False when the claim is no longer ours (done, released or taken over)."""
    status = await db.execute(
        """
        UPDATE processed_updates SET lease_until = now() + make_interval(secs => $4)
        WHERE channel = $1 AND update_id = $2 AND holder = $3 AND state = 'processing'
        """,
        held.channel,
        held.update_id,
        held.holder,
        lease_s,
    )
    return status.endswith(" 1")


async def done(db: Executor, held: UpdateClaim) -> None:
    """The update has been answered: every later delivery of it is dropped."""
    await db.execute(
        """
        UPDATE processed_updates SET state = 'done', lease_until = NULL, processed_at = now()
        WHERE channel = $1 AND update_id = $2
        """,
        held.channel,
        held.update_id,
    )


async def release(db: Executor, held: UpdateClaim) -> None:
    """Forget our claim of an update whose handling failed, so that a redelivery is handled."""
    await db.execute(
        """
        DELETE FROM processed_updates
        WHERE channel = $1 AND update_id = $2 AND holder = $3 AND state = 'processing'
        """,
        held.channel,
        held.update_id,
        held.holder,
    )


@contextlib.asynccontextmanager
async def keep_alive(
    db: Executor, held: UpdateClaim, lease_s: float = DEFAULT_LEASE_SECONDS
) -> AsyncIterator[None]:
    """Renew ``held`` every third of the lease while the block runs (``db``: the pool, not a connection the
    block is using). A renewal that fails is logged and tried again at the next beat; when the lease has run out
    meanwhile, a redelivery may take the update over."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(lease_s / 3)
            try:
                if not await renew(db, held, lease_s):
                    log.warning("update.lease_lost channel=%s update_id=%s", held.channel, held.update_id)
                    return
            except Exception as exc:
                log.warning("update.lease_renew_failed channel=%s update_id=%s error=%r",
                            held.channel, held.update_id, exc)  # fmt: skip

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def delete_older_than(db: Executor, days: int) -> int:
    status = await db.execute(
        "DELETE FROM processed_updates WHERE processed_at < now() - make_interval(days => $1)", days
    )
    return int(status.split()[-1])
