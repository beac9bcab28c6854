"""Benchmarks (`make bench`): each ``bench/bench_*.py`` module prints a table and writes JSON to ``bench/results``."""
