"""The sample KB shipped with MedBot VN: four roles, written for this project (see ``build_sample.py``)."""

from __future__ import annotations

from pathlib import Path

SAMPLE_PATH = Path(__file__).resolve().parent / "sample_kb.xlsx"
