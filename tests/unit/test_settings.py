"""Settings are validated at start-up with a message that names the bad variable."""

from __future__ import annotations

import subprocess
import sys

import pytest

from db.settings import SettingsError, load_settings


def test_bad_score_threshold_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORE_THRESHOLD", "abc")
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert "SCORE_THRESHOLD" in str(err.value)


def test_bad_admin_ids_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADMIN_IDS", "12,abc")
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert "ADMIN_IDS" in str(err.value)


def test_admin_ids_parsed_from_comma_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADMIN_IDS", "12, 34")
    assert load_settings().admin_ids == [12, 34]


def test_cli_refuses_to_start_with_bad_setting() -> None:
    env = {"SCORE_THRESHOLD": "2.5", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "db", "url"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "SCORE_THRESHOLD" in proc.stderr
