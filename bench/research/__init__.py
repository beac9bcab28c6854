"""Research scripts: experiments behind the product's choices (calibration, fusion, embedding caches).

Not benchmarks: ``make bench`` (``python -m bench``) runs only ``bench/bench_*.py``; these are run by hand.
"""
