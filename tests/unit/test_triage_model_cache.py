"""The triage model kept in the product's data folder: the next process loads it instead of fitting, with the
very same probabilities; a change to the training data fits anew; a damaged file or a folder that cannot be
written never takes the model (or triage) down."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.embedding import gguf_path
from engine.triage import LazyModel, default_rules, triage
from engine.triage.model import DATA_DIR, STALE_TMP_SECONDS, TURN_FILE, cache_key, cache_path, labelled_rows

ROOT = Path(__file__).resolve().parents[2]

# A second process: the product's model with the same data folder, its source and probabilities as JSON.
SECOND_PROCESS = """
import json, sys
from pathlib import Path
from engine.embedding import gguf_path
from engine.triage import LazyModel, default_rules
texts = json.loads(sys.stdin.read())
model = LazyModel(default_rules(), Path(sys.argv[2]))
model.warm_up(wait=True, data_folder=Path(sys.argv[1]))
print(json.dumps({"source": model.source, "file": str(model.cache_file),
                  "p": [model.probability(t) for t in texts]}))
"""


def sample_texts(n: int) -> list[str]:
    """``n`` labelled messages spread over every training file, emergencies and ordinary ones."""
    rows = labelled_rows()
    step = max(1, len(rows) // n)
    return [str(row["text"]) for row in rows[::step][:n]]


def small_data(folder: Path) -> Path:
    """A small training set (a few hundred rows of each class, in two files), quick to fit."""
    rows = labelled_rows()
    yes = [r for r in rows if r["emergency"]][:200]
    no = [r for r in rows if not r["emergency"]][:200]
    folder.mkdir()
    for name, part in (("a.jsonl", yes[:100] + no[:100]), ("b.jsonl", yes[100:] + no[100:])):
        (folder / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part), "utf-8")
    return folder


def kept_files(folder: Path) -> list[str]:
    """The files in a models folder, but for the empty lock file the processes take turns on."""
    return sorted(p.name for p in folder.iterdir() if p.name != TURN_FILE)


def ready(data_folder: Path, data_dir: Path = DATA_DIR) -> LazyModel:
    model = LazyModel(default_rules(), data_dir)
    model.warm_up(wait=True, data_folder=data_folder)
    assert model.ready
    return model


def test_a_second_process_loads_the_fitted_model_and_answers_the_same(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="engine.triage.model")
    # A small training set: the same fit, file and load as the product's 45,000 messages, in a tenth of the time
    # (the suite's session fixture fits or loads the product's own model).
    data = small_data(tmp_path / "data")
    first = ready(tmp_path, data)
    key = cache_key(default_rules(), data)
    assert first.source == "fit"
    assert first.cache_file == cache_path(tmp_path, key) == tmp_path / "models" / first.cache_file.name
    # One models folder in the data folder: the triage model lies beside the embedding GGUF.
    assert first.cache_file.parent == gguf_path(tmp_path).parent
    assert first.cache_file.is_file()
    assert "triage.model ready source=fit" in caplog.text

    texts = sample_texts(300)
    out = subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, str(tmp_path), str(data)],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    second = json.loads(out.stdout)
    assert second["source"] == "cache"
    assert second["file"] == str(first.cache_file)
    assert second["p"] == [first.probability(t) for t in texts]  # exactly, not approximately

    caplog.clear()
    loaded = ready(tmp_path, data)  # and in this process too
    assert loaded.source == "cache"
    assert "triage.model ready source=cache" in caplog.text
    rules = default_rules()
    verdicts = [triage(t, rules, model=first) for t in texts]
    assert [triage(t, rules, model=loaded) for t in texts] == verdicts
    assert any(v.is_emergency for v in verdicts) and not all(v.is_emergency for v in verdicts)


# Processes starting together: each says when it is ready to warm up, then waits for the word to go, so that all
# of them look for the fitted file at the same moment (as bot, worker and setup do after a deploy).
TOGETHER_PROCESS = """
import json, sys
from pathlib import Path
from engine.triage import LazyModel, default_rules
rules = default_rules()
texts = json.loads(sys.stdin.readline())
print("ready", flush=True)
sys.stdin.readline()
model = LazyModel(rules, Path(sys.argv[2]))
model.warm_up(wait=True, data_folder=Path(sys.argv[1]))
print(json.dumps({"source": model.source, "file": str(model.cache_file),
                  "p": [model.probability(t) for t in texts]}))
"""


def test_processes_starting_together_fit_once_and_the_others_load_that_fit(tmp_path: Path) -> None:
    # A data folder with no fit for the data: one process fits, the others wait for its file and answer exactly
    # as it does (without turns, all three fitted the same model at once).
    data = small_data(tmp_path / "data")
    texts = sample_texts(50)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", TOGETHER_PROCESS, str(tmp_path), str(data)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(3)
    ]
    for proc in procs:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(texts) + "\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in procs:  # the word to go, to all three at once
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [json.loads(proc.communicate(timeout=180)[0]) for proc in procs]
    assert sorted(r["source"] for r in results) == ["cache", "cache", "fit"]
    assert {r["file"] for r in results} == {str(cache_path(tmp_path, cache_key(default_rules(), data)))}
    assert results[0]["p"] == results[1]["p"] == results[2]["p"]


def test_a_changed_training_file_fits_anew(tmp_path: Path) -> None:
    data = small_data(tmp_path / "data")
    first = ready(tmp_path, data)
    assert first.source == "fit"
    assert ready(tmp_path, data).source == "cache"

    with (data / "b.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"text": "bé nhà em tím tái, thở rít từng cơn", "emergency": True}) + "\n")
    changed = ready(tmp_path, data)
    assert changed.source == "fit"
    assert changed.cache_file is not None and first.cache_file is not None
    assert changed.cache_file != first.cache_file
    assert not first.cache_file.exists()  # the older fit's file is gone
    assert kept_files(tmp_path / "models") == [changed.cache_file.name]
    assert ready(tmp_path, data).source == "cache"


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_cache_file_means_fitting_again(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    data = small_data(tmp_path / "data")
    good = ready(tmp_path, data)
    assert good.cache_file is not None
    blob = good.cache_file.read_bytes()
    damaged = {"truncated": blob[: len(blob) // 2], "garbage": b"\x80\x04not a model" * 50, "empty": b""}
    good.cache_file.write_bytes(damaged[damage])

    caplog.set_level(logging.INFO, logger="engine.triage.model")
    again = ready(tmp_path, data)
    assert again.source == "fit"
    assert "triage.model cache unusable, fitting instead" in caplog.text
    texts = sample_texts(50)
    assert [again.probability(t) for t in texts] == [good.probability(t) for t in texts]
    assert good.cache_file.read_bytes() == blob  # written again, whole
    assert ready(tmp_path, data).source == "cache"


def test_a_folder_that_cannot_be_written_still_gives_a_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = small_data(tmp_path / "data")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("a file where the data folder should be")
    caplog.set_level(logging.INFO, logger="engine.triage.model")
    model = ready(not_a_folder, data)
    assert model.source == "fit" and model.cache_file is None
    assert "triage.model cache not written" in caplog.text
    assert model.probability("tôi bị đau ngực dữ dội, vã mồ hôi, khó thở") is not None


def test_a_temporary_file_left_by_a_killed_write_is_removed_once_stale(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A process killed while writing the model leaves its temporary file behind; the next process that saves
    or loads the model removes it once it is older than STALE_TMP_SECONDS, and leaves a younger one alone
    (another process may be writing it right now)."""
    data = small_data(tmp_path / "data")
    models = tmp_path / "models"
    models.mkdir()

    def left_behind(name: str, age: float) -> Path:
        tmp = models / f".triage-model.{name}.tmp"
        tmp.write_bytes(b"medbot-triage-model\nhalf a model")
        then = time.time() - age
        os.utime(tmp, (then, then))
        return tmp

    killed = left_behind("killed", STALE_TMP_SECONDS + 60)
    writing = left_behind("writing", 5)
    caplog.set_level(logging.INFO, logger="engine.triage.model")
    fitted = ready(tmp_path, data)
    assert fitted.source == "fit" and fitted.cache_file is not None
    assert not killed.exists() and writing.exists()  # removed when saving
    assert f"triage.model removed a stale temporary file path={killed}" in caplog.text

    killed_later = left_behind("killed-later", 2 * STALE_TMP_SECONDS)
    loaded = ready(tmp_path, data)
    assert loaded.source == "cache"
    assert not killed_later.exists()  # removed when loading: a loaded model is never saved again
    assert kept_files(models) == sorted([writing.name, fitted.cache_file.name])
