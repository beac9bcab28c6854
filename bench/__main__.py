"""Run every benchmark: each ``bench/bench_*.py`` module's ``main()``, in file-name order."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    status = 0
    for path in sorted(Path(__file__).resolve().parent.glob("bench_*.py")):
        module = importlib.import_module(f"bench.{path.stem}")
        print(f"== {path.stem}", flush=True)
        result = module.main([]) if _takes_argv(module.main) else module.main()
        status = status or int(result or 0)
    return status


def _takes_argv(func: object) -> bool:
    import inspect

    return bool(inspect.signature(func).parameters)  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
