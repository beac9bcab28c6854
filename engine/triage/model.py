"""A trained second opinion for triage: the probability that a message describes an emergency.

The rules (``rules.py``) are the detector; this model is OR-ed with them at a high threshold (``THRESHOLD``)
to catch emergencies worded in ways no phrase foresaw. It learns from the labelled messages in ``data/``
(several thousand, written by hand by people who never saw the rules, plus the rule authors' own rows; the
held-out test set is not among them) and from nothing else: nothing is downloaded.

Model: ``engine.textmodel`` (TF-IDF over character and word n-grams, logistic regression, a fast per-message
path) on the text as triage reads it (``normalize.py``: folded, chat spellings mapped, clauses marked), classes
balanced.
It is made ready once per process, on first use or by ``warm_up()`` in a background thread at start-up; until
it is ready, ``probability`` answers None and the rules decide alone. Fitting takes several seconds of CPU, so
the fitted model is kept in the product's data folder (``MEDBOT_DATA_DIR/models/triage-model.<key>.pickle``,
handed down by the composition root): the next process loads it in a few hundredths of a second. The key
(``cache_key``) is a hash of everything the fit depends on: the training files' bytes, the chat-spelling table
``normalize`` uses, the source of this module, ``normalize.py``, ``engine/text.py`` and ``engine/textmodel.py``,
``CACHE_VERSION``, C and the Python, scikit-learn, SciPy and NumPy versions; any change fits anew. The file is
written atomically (temporary file, then rename; a temporary file left by a process killed mid-write is removed
once it is an hour old, by the next process that saves or loads the model) and carries a checksum of its
payload; a missing, stale, corrupt or unreadable file only means fitting, and a folder that cannot be written
only means no file. Processes sharing the data folder take turns (``fitting_turn``): one fits, the others wait and
load its file.
The file is read with ``pickle``: it is trusted like the rest of the data folder (the GGUF model beside it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import pickle
import platform
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy
import scipy
import sklearn

import engine.text as text_module
import engine.textmodel as textmodel_module
import engine.triage.augment as augment_module
import engine.triage.normalize as normalize_module
from engine.data_folder import models_folder
from engine.textmodel import LinearTextModel
from engine.triage.augment import augmented
from engine.triage.normalize import normalize
from engine.triage.rules import RuleSet

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).parent / "data"
# The threshold, the doubt and C, chosen together by a backtest over every freeze that measured a blind pair once
# (bench/research/triage_backtest.py; docs/triage.md "Round 17", "Round 23", "Round 24"): each freeze's own rules and
# this model fitted on the data as it was at that freeze, scored on the pair measured there.
# THRESHOLD: the model flags what the rules missed at P >= this. Round 17 lowered it from 0.9 to 0.8 (C 1); round 24
# raised C and set it back to 0.9, where the sharper model catches more than C 1 did at 0.8.
THRESHOLD = 0.9
# DOUBT (round 23): a rules flag stands unless the model, asked as well, puts the message under this probability; then
# it is "doubted": not an emergency card, but the question answered with a conditional 115 line after it.
DOUBT = 0.01
# C (round 24): the inverse regularisation. Over 19 freezes and 41 blind sets (27,926 messages), against C 1 at 0.8
# with the doubt at 0.02: C 10 at 0.9 with the doubt at 0.01 catches 13,469 of 13,746 emergencies instead of 13,445 and
# makes 307 false alarms on 14,180 ordinary messages instead of 400 (2.82 % -> 2.17 %), faq-val's flags per freeze
# 38.1 instead of 38.6. Its probabilities are sharper, so its doubt is lower: at 0.02 it would lose one emergency the
# rules caught ("tia uong thuoc co"); C 3 (0.85, 0.02) sat between, C 30 lost that one already at 0.01.
C = 10.0
# The solver's stopping tolerance. scikit-learn's default (1e-4) stopped the fit after about 15 iterations, short of
# the optimum, so that a handful of added rows moved a message's probability by up to 0.05 (round 15: faq-val's
# val-01110 went 0.868 -> 0.912 with five rows that say nothing of infants). At 1e-6 the fit converges (45-60
# iterations, about a second more) and leaving out all of round 15's 290 rule-author rows moves it by 0.003.
TOL = 1e-6
# The share of each class's rows learnt a second time with a neutral sentence added (augment.py): chosen by the
# backtest (docs/triage.md, "Augmenting the model with surroundings (backtest)"): half, over 30 freezes 20,873 caught
# of 21,186 and 457 false alarms of 22,100, against a quarter's 20,857 and 476.
AUGMENT = 0.5
CACHE_VERSION = 1  # raise when the cached object changes in a way the hashed sources do not show
_CACHE_MAGIC = b"medbot-triage-model\n"
_CACHE_GLOB = "triage-model.*.pickle"
_TMP_PREFIX, _TMP_SUFFIX = ".triage-model.", ".tmp"
TURN_FILE = ".triage-model.lock"
# A temporary file older than this was left by a process killed mid-write (a write takes well under a second);
# younger ones may be another process's write in progress (bot, worker and setup share the data folder).
STALE_TMP_SECONDS = 3600
_SOURCES = (
    __file__,
    normalize_module.__file__,
    text_module.__file__,
    textmodel_module.__file__,
    augment_module.__file__,
)


def labelled_rows(data_dir: Path = DATA_DIR) -> list[dict[str, object]]:
    """Every labelled message the model learns from."""
    rows: list[dict[str, object]] = []
    for path in sorted(data_dir.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


class TriageModel:
    """A fitted text classifier (``engine.textmodel``); ``probability(text)`` is P(emergency)."""

    def __init__(self, model: LinearTextModel, rules: RuleSet) -> None:
        self._model = model
        self._rules = rules
        self._column = model.classes.index(True)

    @classmethod
    def train(
        cls, rows: list[dict[str, object]], rules: RuleSet, *, c: float = C, augment: float = AUGMENT
    ) -> TriageModel:
        """Fitted on ``rows`` and, for an ``augment`` share of each class, a copy with a neutral sentence
        (``augment.py``)."""
        rows = augmented(rows, augment)
        texts = [normalize(str(row["text"]), rules.words).text for row in rows]
        labels = [bool(row["emergency"]) for row in rows]
        return cls(
            LinearTextModel(texts, labels, c=c, class_weight="balanced", char_min_df=2, tol=TOL), rules
        )

    @property
    def text_model(self) -> LinearTextModel:
        return self._model

    def probability(self, text: str) -> float:
        return self.probability_of(normalize(text, self._rules.words).text)

    def probability_of(self, normalized: str) -> float:
        """P(emergency) of a text already as triage reads it (``normalize(...).text``)."""
        return float(self._model.proba([normalized])[0, self._column])


def cache_key(rules: RuleSet, data_dir: Path = DATA_DIR, *, c: float = C) -> str:
    """A hash of everything the fitted model depends on (see the module docstring)."""
    h = hashlib.sha256()

    def part(label: str, value: bytes) -> None:
        h.update(f"{label}:{len(value)}:".encode())
        h.update(value)

    part("version", str(CACHE_VERSION).encode())
    part("c", repr(float(c)).encode())
    part("python", platform.python_version().encode())
    for lib in (sklearn, scipy, numpy):
        part(lib.__name__, lib.__version__.encode())
    part("words", json.dumps(rules.words, sort_keys=True, ensure_ascii=False).encode())
    for source in _SOURCES:
        part(f"source {Path(source).name}", Path(source).read_bytes())
    for path in sorted(data_dir.glob("*.jsonl")):
        part(f"data {path.name}", path.read_bytes())
    part("augment", repr(float(AUGMENT)).encode())
    part("sentences", augment_module.SENTENCES_FILE.read_bytes())
    return h.hexdigest()


def cache_path(data_folder: Path, key: str) -> Path:
    """Where the model fitted under ``key`` is kept in the product's data folder (beside the GGUF model)."""
    return models_folder(data_folder) / f"triage-model.{key[:20]}.pickle"


def remove_stale_temporaries(folder: Path, *, older_than: float = STALE_TMP_SECONDS) -> list[Path]:
    """Remove the temporary files of ``save_cached`` in ``folder`` last written more than ``older_than``
    seconds ago (left by a process killed mid-write); returns those removed. Never raises: a file another
    process removed meanwhile, or one this process may not remove, is left to the next try."""
    cutoff = time.time() - older_than
    removed: list[Path] = []
    for tmp in folder.glob(f"{_TMP_PREFIX}*{_TMP_SUFFIX}"):
        try:
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink()
                removed.append(tmp)
                log.info("triage.model removed a stale temporary file path=%s", tmp)
        except OSError:
            continue
    return removed


def save_cached(path: Path, key: str, model: LinearTextModel) -> None:
    """Write ``model`` to ``path`` atomically (a temporary file in the same folder, then a rename), then remove
    the files of other keys (older fits) and temporary files left by a process killed mid-write."""
    payload = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(payload).hexdigest()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_CACHE_MAGIC + f"{key}\n{digest}\n".encode() + payload)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; it holds nothing more private than the data folder
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for other in path.parent.glob(_CACHE_GLOB):
        if other != path:
            other.unlink(missing_ok=True)
    remove_stale_temporaries(path.parent)


@contextlib.contextmanager
def fitting_turn(folder: Path) -> Iterator[None]:
    """Hold the data folder's turn to look for the cached fit and, when there is none, to fit and save it (an
    exclusive ``flock`` on a lock file beside the model). Bot, worker and setup start together after a deploy (the
    test suite's workers too): the second to come waits, then loads what the first fitted, instead of spending the
    same CPU on the same fit at the same time. The kernel releases the turn when its holder exits, however it
    exits. A folder where the lock file cannot be made only means no turn-taking."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / TURN_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        log.warning("triage.model no fitting turn, going ahead folder=%s error=%r", folder, exc)
        fd = None
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the turn


def load_cached(path: Path, key: str) -> LinearTextModel:
    """The model kept at ``path`` for ``key``; raises (``FileNotFoundError``, ``ValueError``, unpickling
    errors) when there is none or it is not exactly what was written for this key."""
    blob = path.read_bytes()
    if not blob.startswith(_CACHE_MAGIC):
        raise ValueError("not a triage model file")
    header_key, digest, payload = blob[len(_CACHE_MAGIC) :].split(b"\n", 2)
    if header_key.decode() != key:
        raise ValueError("written for another key")
    if hashlib.sha256(payload).hexdigest() != digest.decode():
        raise ValueError("checksum mismatch (truncated or damaged)")
    model = pickle.loads(payload)  # the product's own data folder, checksummed, keyed
    if not isinstance(model, LinearTextModel) or True not in model.classes:
        raise ValueError("not a fitted triage model")
    return model


class LazyModel:
    """The product's model: made ready once (loaded from the data folder's cache, else fitted and cached), in
    the background when asked to warm up, never blocking a message."""

    def __init__(self, rules: RuleSet, data_dir: Path = DATA_DIR, *, data_folder: Path | None = None) -> None:
        self._rules = rules
        self._data_dir = data_dir
        self._data_folder = data_folder
        self._model: TriageModel | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.source: str | None = None  # "cache" or "fit" once ready
        self.cache_file: Path | None = None  # the cache file read or written, if any

    def warm_up(self, *, wait: bool = False, data_folder: Path | None = None) -> None:
        """Make the model ready in a background thread (once); ``wait`` blocks until it is ready.

        ``data_folder``: the product's data folder (``MEDBOT_DATA_DIR``), where the fitted model is kept; taken
        if the work has not started yet. Without one, the model is fitted and nothing is written."""
        with self._lock:
            if data_folder is not None and self._thread is None:
                self._data_folder = Path(data_folder)
            if self._model is None and self._thread is None:
                self._thread = threading.Thread(target=self._prepare, name="triage-model", daemon=True)
                self._thread.start()
            thread = self._thread
        if wait and thread is not None:
            thread.join()

    def _prepare(self) -> None:
        started = time.perf_counter()
        try:
            key: str | None = None
            path: Path | None = None
            if self._data_folder is not None:
                try:
                    key = cache_key(self._rules, self._data_dir)
                    path = cache_path(self._data_folder, key)
                except Exception as exc:  # without a key there is no cache, only a fit
                    log.warning("triage.model cache key failed, fitting without a cache error=%r", exc)
            if path is None or key is None:
                self._fit(None, None, started)
                return
            with fitting_turn(path.parent):
                model = self._load(path, key)
                if model is not None:
                    self.cache_file, self.source, self._model = path, "cache", model
                    log.info(
                        "triage.model ready source=cache path=%s seconds=%.2f",
                        path,
                        time.perf_counter() - started,
                    )
                    return
                self._fit(path, key, started)
        except Exception:  # the rules still decide; a broken model must not take triage down
            log.exception("triage.model failed")

    def _fit(self, path: Path | None, key: str | None, started: float) -> None:
        fitted = TriageModel.train(labelled_rows(self._data_dir), self._rules)
        self.source, self._model = "fit", fitted  # ready now; writing the file need not delay a verdict
        if path is not None and key is not None:
            try:
                save_cached(path, key, fitted.text_model)
                self.cache_file = path
            except Exception as exc:  # no file is only a slower next start
                log.warning("triage.model cache not written path=%s error=%r", path, exc)
        log.info(
            "triage.model ready source=fit cached=%s seconds=%.2f",
            self.cache_file,
            time.perf_counter() - started,
        )

    def _load(self, path: Path, key: str) -> TriageModel | None:
        if not path.exists():
            log.info("triage.model no cached fit for this data and code, fitting path=%s", path)
            return None
        try:
            model = TriageModel(load_cached(path, key), self._rules)
        except Exception as exc:  # a damaged or unreadable file only means fitting again
            log.warning("triage.model cache unusable, fitting instead path=%s error=%r", path, exc)
            return None
        remove_stale_temporaries(path.parent)  # a fit loaded from the file is never saved again to do it
        return model

    @property
    def ready(self) -> bool:
        return self._model is not None

    @property
    def rules(self) -> RuleSet:
        """The rules whose word table the model reads messages with (``normalize``)."""
        return self._rules

    def probability(self, text: str) -> float | None:
        """P(emergency), or None while the model is not ready."""
        model = self._fitted()
        return None if model is None else model.probability(text)

    def probability_of(self, normalized: str) -> float | None:
        """P(emergency) of a normalised text (``TriageModel.probability_of``), or None while not ready."""
        model = self._fitted()
        return None if model is None else model.probability_of(normalized)

    def _fitted(self) -> TriageModel | None:
        """The model when ready; else None, and the fit started in the background if it was not."""
        model = self._model
        if model is None:
            self.warm_up()
        return model
