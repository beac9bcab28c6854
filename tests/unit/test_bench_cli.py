"""``python -m bench``: the benchmark named on the command line gets the options written after it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_an_option_after_the_name_reaches_that_benchmark():
    """A set that does not exist is refused by the held-out retrieval benchmark itself, before any work: the option
    was passed on (it used to be dropped, and every set was measured)."""
    done = run_bench("retrieval_heldout", "--set", "RQ99")
    assert done.returncode != 0
    assert "invalid choice: 'RQ99'" in done.stderr
    assert "=== bench_retrieval_heldout ===" in done.stdout
    assert "=== bench_triage ===" not in done.stdout  # only the benchmark named ran
