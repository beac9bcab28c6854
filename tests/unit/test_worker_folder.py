"""File handling of the watched-folder job and the import-result adapter (no database needed)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from kb_import.folder_import import candidates, free_name, move_with_report


def test_candidates_skip_hidden_lock_other_and_settling_files(tmp_path: Path) -> None:
    for name in ("a.xlsx", "b.CSV", "~$a.xlsx", ".hidden.csv", "notes.txt", "c.xlsm"):
        (tmp_path / name).write_text("x")
    (tmp_path / "done").mkdir()
    old = time.time() - 60
    for name in ("a.xlsx", "b.CSV"):
        os.utime(tmp_path / name, (old, old))
    ready, settling = candidates(tmp_path, settle_seconds=10)
    assert [p.name for p in ready] == ["a.xlsx", "b.CSV"]
    assert settling == 1  # c.xlsm was just written


def test_move_with_report_never_overwrites(tmp_path: Path) -> None:
    done = tmp_path / "done"
    for _ in range(2):
        src = tmp_path / "kb.csv"
        src.write_text("data")
        target = move_with_report(src, done, "báo cáo")
        assert not src.exists()
        assert target.with_name(target.name + ".report.txt").read_text(encoding="utf-8") == "báo cáo"
    names = sorted(p.name for p in done.iterdir())
    assert len(names) == 4 and "kb.csv" in names and "kb.csv.report.txt" in names
    assert free_name(done, "new.csv") == done / "new.csv"
