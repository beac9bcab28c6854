"""Run every benchmark module (``bench/bench_*.py``) in name order, or those named on the command line.

``python -m bench`` (what ``make bench`` runs) or ``python -m bench import retrieval``. Options after the names go to
each module named (``python -m bench retrieval_heldout --set RQ7``); before 2026-12-01 they were dropped silently and
every module ran on its defaults.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    first_option = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    wanted, options = argv[:first_option], argv[first_option:]
    if wanted:
        names = [n for n in names if n.removeprefix("bench_") in wanted or n in wanted]
    failed = []
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        sys.argv = [f"bench.{name}", *options]  # each module parses its own options
        try:
            code = importlib.import_module(f"bench.{name}").main() or 0
        except Exception as exc:  # one broken benchmark must not hide the others' figures
            print(f"{name} failed: {exc!r}", flush=True)
            code = 1
        print(f"--- {name}: {time.perf_counter() - started:.1f}s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
