"""Worker schedule specs, settings parsing, backoff and due-time arithmetic."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.worker.jobs import default_jobs
from bot.worker.runner import backoff_seconds
from bot.worker.scheduler import effective_schedules, previous_due
from db.settings import SettingsError
from db.worker_settings import Schedule, load_worker_settings, parse_schedule


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("every 10m", Schedule("interval", seconds=600)),
        ("every 1.5s", Schedule("interval", seconds=1.5)),
        ("2", Schedule("interval", seconds=2)),
        ("Every  1d", Schedule("interval", seconds=86400)),
        ("cron 0 7 * * *", Schedule("cron", crontab="0 7 * * *")),
        ("off", Schedule("off")),
    ],
)
def test_parse_schedule(spec: str, expected: Schedule) -> None:
    assert parse_schedule(spec) == expected


@pytest.mark.parametrize(
    "spec", ["every", "every -1s", "sometimes", "cron 0 7 * *", "cron 99 7 * * *", "every 0s"]
)
def test_parse_schedule_rejects(spec: str) -> None:
    with pytest.raises(ValueError):
        parse_schedule(spec)


def test_describe_round_trips() -> None:
    for spec in ("every 10m", "every 1h", "every 15s", "cron 30 2 * * *", "off", "every 1.5s"):
        assert parse_schedule(parse_schedule(spec).describe()) == parse_schedule(spec)


def test_settings_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_SCHEDULES", "retention=every 1s; digest=off")
    monkeypatch.setenv("WORKER_ONLY", "retention,cleanup")
    monkeypatch.setenv("WORKER_LEADER_RETRY_SECONDS", "0.5")
    s = load_worker_settings()
    assert s.worker_schedules == {"retention": "every 1s", "digest": "off"}
    assert s.worker_leader_retry_seconds == 0.5
    schedules = effective_schedules(default_jobs(), s)
    assert schedules["retention"] == Schedule("interval", seconds=1)
    assert schedules["cleanup"].kind == "interval"
    assert schedules["digest"].kind == "off"
    assert schedules["embedding_backfill"].kind == "off"  # not in WORKER_ONLY


def test_bad_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_SCHEDULES", "retention=whenever")
    with pytest.raises(SettingsError, match="WORKER_SCHEDULES"):
        load_worker_settings()
    monkeypatch.delenv("WORKER_SCHEDULES")
    monkeypatch.setenv("WORKER_TIMEZONE", "Mars/Olympus")
    with pytest.raises(SettingsError, match="WORKER_TIMEZONE"):
        load_worker_settings()


def test_backoff_doubles_up_to_cap() -> None:
    assert [backoff_seconds(n, 30, 300) for n in range(0, 7)] == [0, 30, 60, 120, 240, 300, 300]
    assert backoff_seconds(10_000, 1, 60) == 60


def test_previous_due() -> None:
    tz = ZoneInfo("Asia/Ho_Chi_Minh")
    now = datetime(2026, 11, 24, 9, 15, tzinfo=tz)
    assert previous_due(parse_schedule("cron 0 7 * * *"), now) == datetime(2026, 11, 24, 7, 0, tzinfo=tz)
    early = datetime(2026, 11, 24, 6, 59, tzinfo=tz)
    assert previous_due(parse_schedule("cron 0 7 * * *"), early) == datetime(2026, 11, 23, 7, 0, tzinfo=tz)
    assert (now - previous_due(parse_schedule("every 10m"), now)).total_seconds() == 600
    assert previous_due(parse_schedule("off"), now) is None
