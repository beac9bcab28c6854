"""Writing a benchmark's figures: one JSON file under ``bench/results/``, said on the console."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented UTF-8 JSON at ``path`` (its folder made when missing), then ``wrote PATH``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    print(f"wrote {path}")
