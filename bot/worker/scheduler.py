"""The worker loop: leader election on a PostgreSQL advisory lock, and APScheduler 3 for the leader.

Every ``medbot worker`` process opens one dedicated connection (outside the pool) and tries
``pg_try_advisory_lock`` on it every ``WORKER_LEADER_RETRY_SECONDS``. The one that gets it is the leader: it
starts an ``AsyncIOScheduler`` with every enabled job; the others keep trying. A session-level advisory lock
lives as long as the session, so when the leader dies (even by SIGKILL) PostgreSQL ends its session, frees the
lock, and a follower takes over at its next try — within seconds, well under a minute. The leader checks its
lock connection at the same pace and steps down (stops scheduling, cancels running jobs) when it breaks.

On taking over, the new leader runs at once every job that is overdue: an interval job whose last run
started more than one interval ago, a cron job whose last due time has passed since its last success
(so a daily digest missed during a failover still goes out). Taking over also clears the failure backoff of
every job: after a database restart (which makes running jobs fail and the leader step down), the worker
reconnects, leads again and carries on at once rather than after a backoff earned during the outage.

Failures: a failed run puts the job on hold for a backoff delay (``WORKER_RETRY_BASE_SECONDS`` doubling up
to ``WORKER_RETRY_MAX_SECONDS``). Regular ticks inside the hold are skipped; when the next regular tick is
further away than the hold, a one-off retry is scheduled at its end (at most ``WORKER_MAX_RETRIES`` in a row).
Nothing a job does can stop the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.worker.runner import RunResult, backoff_seconds, run_job
from db import jobs as jobs_db
from db.job_context import Job, JobContext, worker_identity
from db.locks import try_advisory_lock
from db.pool import asyncpg_dsn
from db.worker_settings import Schedule, WorkerSettings, parse_schedule

log = logging.getLogger("medbot.worker")

LEADER_NAMESPACE = "worker"
LEADER_NAME = "leader"


def effective_schedules(jobs: list[Job], settings: WorkerSettings) -> dict[str, Schedule]:
    """Each job's schedule after ``WORKER_SCHEDULES`` overrides and the ``WORKER_ONLY`` filter."""
    names = {j.name for j in jobs}
    unknown = (set(settings.worker_schedules) | set(settings.worker_only)) - names
    if unknown:
        log.warning("worker.unknown_jobs names=%s known=%s", sorted(unknown), sorted(names))
    out: dict[str, Schedule] = {}
    for job in jobs:
        spec = settings.worker_schedules.get(job.name, job.default_schedule)
        schedule = parse_schedule(spec)
        if settings.worker_only and job.name not in settings.worker_only:
            schedule = Schedule("off")
        out[job.name] = schedule
    return out


def make_trigger(schedule: Schedule, tz: Any) -> IntervalTrigger | CronTrigger:
    if schedule.kind == "interval":
        return IntervalTrigger(seconds=schedule.seconds, timezone=tz)
    if schedule.kind == "cron":
        return CronTrigger.from_crontab(schedule.crontab, timezone=tz)
    raise ValueError("an 'off' schedule has no trigger")


def previous_due(schedule: Schedule, now: datetime) -> datetime | None:
    """The latest time at or before ``now`` the schedule was due (looking back at most two days)."""
    if schedule.kind == "interval":
        return now - timedelta(seconds=schedule.seconds)
    if schedule.kind != "cron":
        return None
    trigger = CronTrigger.from_crontab(schedule.crontab, timezone=now.tzinfo)
    probe = now - timedelta(days=2)
    last: datetime | None = None
    fire = trigger.get_next_fire_time(None, probe)
    for _ in range(5000):
        if fire is None or fire > now:
            break
        last = fire
        fire = trigger.get_next_fire_time(fire, fire + timedelta(seconds=1))
    return last


@dataclass
class _JobState:
    failures: int = 0
    hold_until: float = 0.0  # time.monotonic() before which regular ticks are skipped


class Worker:
    """One worker process: follower until it holds the leader lock, then the scheduler."""

    def __init__(
        self,
        ctx: JobContext,
        url: str,
        jobs: list[Job],
        *,
        worker_id: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.dsn = asyncpg_dsn(url)
        self.jobs = {j.name: j for j in jobs}
        self.settings = ctx.worker
        self.schedules = effective_schedules(jobs, self.settings)
        self.worker_id = worker_id or worker_identity()
        self.tz = self.settings.tz
        self.scheduler: AsyncIOScheduler | None = None
        self.state: dict[str, _JobState] = {name: _JobState() for name in self.jobs}
        self.active: dict[str, Schedule] = {}  # what the leader scheduled
        self.results: list[RunResult] = []  # recent results, for tests and logs
        self._stop = asyncio.Event()
        self._running: set[asyncio.Task] = set()
        self._conn: asyncpg.Connection | None = None

    @property
    def is_leader(self) -> bool:
        return self.scheduler is not None

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        """Elect, schedule, and keep checking until :meth:`stop`."""
        retry = self.settings.worker_leader_retry_seconds
        log.info(
            "worker.start id=%s retry=%.1fs jobs=%s",
            self.worker_id,
            retry,
            {n: s.describe() for n, s in self.schedules.items()},
        )
        try:
            while not self._stop.is_set():
                try:
                    await self._check(retry)
                except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
                    log.warning("worker.lock_connection_lost id=%s error=%s", self.worker_id, exc)
                    await self._step_down("lock connection lost")
                    await self._close_conn()
                except Exception:  # never let anything end the worker; start over at the next try
                    log.exception("worker.error id=%s", self.worker_id)
                    await self._step_down("unexpected error")
                    await self._close_conn()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), retry)
        finally:
            await self._step_down("stopping")
            await self._close_conn()
            log.info("worker.stop id=%s", self.worker_id)

    async def _check(self, retry: float) -> None:
        if self._conn is None or self._conn.is_closed():
            self._conn = await asyncio.wait_for(asyncpg.connect(self.dsn), max(retry, 5.0))
        if self.is_leader:
            await asyncio.wait_for(self._conn.fetchval("SELECT 1"), max(retry, 5.0))
            return
        if await asyncio.wait_for(
            try_advisory_lock(self._conn, LEADER_NAMESPACE, LEADER_NAME), max(retry, 5.0)
        ):
            await self._become_leader()

    async def _close_conn(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._conn.close(), 2)
            self._conn = None

    async def _become_leader(self) -> None:
        log.info("worker.leader id=%s", self.worker_id)
        # A new term starts clean: failures of the last one (typically the database going away, which is also
        # what ended it) put no job on hold, so the catch-up below runs every overdue job at once.
        self.state = {name: _JobState() for name in self.jobs}
        scheduler = AsyncIOScheduler(timezone=self.tz)
        self.active = {}
        for name, schedule in self.schedules.items():
            if schedule.kind == "off":
                continue
            reason = self.jobs[name].unavailable_reason(self.ctx)
            if reason:
                log.warning("job.unavailable job=%s reason=%s (not scheduled)", name, reason)
                continue
            self.active[name] = schedule
            scheduler.add_job(
                self._tick,
                make_trigger(schedule, self.tz),
                args=[name],
                id=name,
                name=name,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=max(1, int(schedule.seconds) if schedule.kind == "interval" else 3600),
            )
        self.scheduler = scheduler
        scheduler.start()
        await self._catch_up()

    async def _catch_up(self) -> None:
        """Run now every job that is overdue (see the module docstring)."""
        assert self.scheduler is not None
        last = await jobs_db.last_runs(self.ctx.pool)
        now = datetime.now(self.tz)
        for name, schedule in self.active.items():
            due = previous_due(schedule, now)
            info = last.get(name)
            if schedule.kind == "interval":
                ran = info["started_at"] if info else None
            else:
                ran = info["last_ok_at"] if info else None
            if due is not None and (ran is None or ran < due):
                log.info("job.catch_up job=%s last=%s due=%s", name, ran, due)
                self.scheduler.add_job(
                    self._tick,
                    DateTrigger(run_date=now, timezone=self.tz),
                    args=[name],
                    id=f"{name}:catch-up",
                    replace_existing=True,
                    misfire_grace_time=3600,
                )

    async def _step_down(self, reason: str) -> None:
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is None:
            return
        log.warning("worker.step_down id=%s reason=%s", self.worker_id, reason)
        with contextlib.suppress(Exception):
            scheduler.shutdown(wait=False)  # cancels running job tasks; the runner records them
        running = [t for t in self._running if not t.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=10)

    async def _tick(self, name: str, retry: bool = False) -> None:
        """One scheduled (or retry) run of ``name``; never raises."""
        state = self.state[name]
        if not retry and time.monotonic() < state.hold_until:
            log.debug(
                "job.hold job=%s failures=%s retry_in=%.1fs",
                name,
                state.failures,
                state.hold_until - time.monotonic(),
            )
            return
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            result = await run_job(self.ctx, self.jobs[name], worker=self.worker_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database itself failing under the runner
            log.exception("job.run_error job=%s", name)
            result = RunResult(name, "failed", error=str(exc))
        finally:
            self._running.discard(task)  # type: ignore[arg-type]
        self.results = [*self.results[-99:], result]
        if result.status == "failed":
            self._on_failure(name, state)
        elif result.status in ("ok", "skipped"):
            state.failures, state.hold_until = 0, 0.0

    def _on_failure(self, name: str, state: _JobState) -> None:
        state.failures += 1
        delay = backoff_seconds(
            state.failures, self.settings.worker_retry_base_seconds, self.settings.worker_retry_max_seconds
        )
        state.hold_until = time.monotonic() + delay
        scheduler = self.scheduler
        if scheduler is None or state.failures > self.settings.worker_max_retries:
            log.warning("job.backoff job=%s failures=%s next=regular tick", name, state.failures)
            return
        retry_at = datetime.now(self.tz) + timedelta(seconds=delay)
        regular = scheduler.get_job(name)
        next_regular = regular.next_run_time if regular is not None else None
        if next_regular is None or next_regular > retry_at:
            scheduler.add_job(
                self._tick,
                DateTrigger(run_date=retry_at, timezone=self.tz),
                args=[name, True],
                id=f"{name}:retry",
                replace_existing=True,
                misfire_grace_time=3600,
            )
            log.warning("job.retry_scheduled job=%s failures=%s in=%.1fs", name, state.failures, delay)
        else:
            log.warning("job.backoff job=%s failures=%s hold=%.1fs", name, state.failures, delay)
