"""Benchmarks (`make bench`): each module ``bench_*.py`` prints a table and writes JSON to bench/results/."""
