"""Settings are validated at start-up with a message that names the bad variable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from db.settings import Settings, SettingsError, load_settings
from db.worker_settings import WorkerSettings


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


def test_env_example_documents_every_setting_and_loads(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    example = (Path(__file__).resolve().parents[2] / ".env.example").read_text(encoding="utf-8")
    documented = {line.lstrip("# ").split("=", 1)[0] for line in example.splitlines() if "=" in line}
    internal = {"ZALO_OAUTH_BASE"}  # fixed by Zalo; overridable for tests only
    fields = {*Settings.model_fields, *WorkerSettings.model_fields}
    missing = {name.upper() for name in fields} - documented - internal
    assert not missing, f".env.example lacks {sorted(missing)}"

    (tmp_path / ".env").write_text(example, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert settings.telegram_bot_token is None  # empty values mean "unset", not an empty token
    assert settings.admin_ids == []
    assert not settings.llm_enabled
