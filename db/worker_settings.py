"""Worker settings (environment / ``.env``, prefix ``WORKER_``) and schedule specifications.

They are apart from ``db.settings`` because only ``medbot worker`` reads them, and beside it (in ``db``, not in
the worker application) because the jobs of every feature read their own knobs from them
(``db.job_context.JobContext.worker``). Every one has a production default, and tests shorten the intervals
through the same variables.

A schedule spec is one of:

* ``every 30s`` / ``every 10m`` / ``every 2h`` / ``every 1d`` (an interval; a bare number means seconds);
* ``cron M H DOM MON DOW`` (standard 5-field crontab, in ``WORKER_TIMEZONE``);
* ``off`` (the job is not scheduled; ``--once`` still runs it).

``WORKER_SCHEDULES="retention=every 1s;digest=off"`` overrides the defaults job by job, and
``WORKER_ONLY=cleanup,retention`` schedules only the named jobs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from db.settings import SettingsError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_EVERY = re.compile(r"^every\s+(\d+(?:\.\d+)?)\s*([smhd]?)$")


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule: ``kind`` is ``interval`` (``seconds``), ``cron`` (``crontab``) or ``off``."""

    kind: Literal["interval", "cron", "off"]
    seconds: float = 0.0
    crontab: str = ""

    def describe(self) -> str:
        if self.kind == "interval":
            for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
                if self.seconds >= size and self.seconds % size == 0:
                    return f"every {int(self.seconds // size)}{unit}"
            return f"every {self.seconds:g}s"
        if self.kind == "cron":
            return f"cron {self.crontab}"
        return "off"


def parse_schedule(spec: str) -> Schedule:
    """Parse a schedule spec (see the module docstring); ``ValueError`` names what is wrong."""
    text = " ".join(spec.strip().lower().split())
    if text in ("off", "none", "disabled"):
        return Schedule("off")
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        text = f"every {text}s"
    match = _EVERY.match(text)
    if match:
        seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
        if seconds <= 0:
            raise ValueError(f"interval must be positive: {spec!r}")
        return Schedule("interval", seconds=seconds)
    if text.startswith("cron "):
        fields = text[5:].split()
        if len(fields) != 5:
            raise ValueError(f"cron needs 5 fields (minute hour day month weekday): {spec!r}")
        from apscheduler.triggers.cron import CronTrigger

        CronTrigger.from_crontab(" ".join(fields))  # validates
        return Schedule("cron", crontab=" ".join(fields))
    raise ValueError(f"unknown schedule {spec!r} (use 'every 10m', 'cron 0 7 * * *' or 'off')")


class WorkerSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )

    # Scheduling and leadership
    worker_schedules: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    worker_only: Annotated[list[str], NoDecode] = Field(default_factory=list)
    worker_timezone: str = "Asia/Ho_Chi_Minh"
    worker_leader_retry_seconds: float = Field(default=5.0, gt=0, le=50)
    worker_retry_base_seconds: float = Field(default=30.0, gt=0)
    worker_retry_max_seconds: float = Field(default=1800.0, gt=0)
    worker_max_retries: int = Field(default=5, ge=0)
    worker_job_timeout_seconds: float = Field(default=1800.0, gt=0)
    worker_migrate: bool = True

    # Jobs
    worker_backfill_batch: int = Field(default=64, ge=1, le=1024)
    worker_backfill_max_per_run: int = Field(default=5000, ge=1)
    worker_import_settle_seconds: float = Field(default=10.0, ge=0)
    worker_processed_updates_days: int = Field(default=7, ge=1)
    worker_job_runs_keep_days: int = Field(default=30, ge=1)
    worker_outbox_keep_days: int = Field(default=30, ge=1)
    worker_outbox_lease_seconds: float = Field(default=120.0, ge=1.0)
    worker_digest_top: int = Field(default=10, ge=1, le=50)

    @field_validator("worker_schedules", mode="before")
    @classmethod
    def _split_schedules(cls, value: object) -> object:
        if isinstance(value, str):
            out: dict[str, str] = {}
            for part in value.replace("\n", ";").split(";"):
                if not part.strip():
                    continue
                name, sep, spec = part.partition("=")
                if not sep:
                    raise ValueError(f"expected job=spec, got {part.strip()!r}")
                out[name.strip()] = spec.strip()
            value = out
        if isinstance(value, dict):
            for spec in value.values():
                parse_schedule(str(spec))
        return value

    @field_validator("worker_only", mode="before")
    @classmethod
    def _split_only(cls, value: object) -> object:
        if isinstance(value, str):
            return [p.strip() for p in value.replace(";", ",").split(",") if p.strip()]
        return value

    @field_validator("worker_timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.worker_timezone)


def load_worker_settings(**overrides: object) -> WorkerSettings:
    """Read and validate the worker settings; ``SettingsError`` names each bad variable."""
    try:
        return WorkerSettings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = "_".join(str(p) for p in err["loc"] if isinstance(p, str)).upper() or "?"
            problems.append(f"{name}: {err['msg']} (got {err.get('input')!r})")
        raise SettingsError("Invalid worker setting(s): " + "; ".join(problems)) from None
