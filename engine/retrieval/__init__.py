"""Hybrid KB retrieval: the sparse TF-IDF leg, the dense embedding leg, their fusion and its calibration."""
