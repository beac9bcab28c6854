"""Run the ``medbot`` command line as a subprocess against a test database, as an admin would from a shell."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_medbot(
    db_url: str, *args: str, timeout: float = 300, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``medbot ARGS…`` with ``DATABASE_URL`` set (and ``input`` on stdin); wide ``COLUMNS`` so tables print
    unwrapped."""
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": db_url, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )
