"""A trained second opinion for triage: the probability that a message describes an emergency.

The rules (``rules.py``) are the detector; this model is OR-ed with them at a high threshold (``THRESHOLD``)
to catch emergencies worded in ways no phrase foresaw. It learns from the labelled messages in ``data/``
(several thousand, written by hand by people who never saw the rules, plus the rule authors' own rows; the
held-out test set is not among them) and from nothing else: no download, no file written.

Model: ``engine.textmodel`` (TF-IDF over character and word n-grams, logistic regression, a fast per-message
path) on the text as triage reads it (``normalize.py``: folded, chat spellings mapped, clauses marked), classes
balanced.
It is fitted once per process, on first use or by ``warm_up()`` in a background thread at start-up (about a
second on two cores); until it is ready, ``probability`` answers None and the rules decide alone.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from engine.textmodel import LinearTextModel
from engine.triage.normalize import normalize
from engine.triage.rules import RuleSet

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).parent / "data"
THRESHOLD = 0.9  # chosen on the third labelled set before the held-out one was written (docs/triage.md)
C = 1.0


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
    def train(cls, rows: list[dict[str, object]], rules: RuleSet, *, c: float = C) -> TriageModel:
        texts = [normalize(str(row["text"]), rules.words).text for row in rows]
        labels = [bool(row["emergency"]) for row in rows]
        return cls(LinearTextModel(texts, labels, c=c, class_weight="balanced", char_min_df=2), rules)

    def probability(self, text: str) -> float:
        return float(self._model.proba([normalize(text, self._rules.words).text])[0, self._column])


class LazyModel:
    """The product's model: fitted once, in the background when asked to warm up, never blocking a message."""

    def __init__(self, rules: RuleSet, data_dir: Path = DATA_DIR) -> None:
        self._rules = rules
        self._data_dir = data_dir
        self._model: TriageModel | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def warm_up(self, *, wait: bool = False) -> None:
        """Fit the model in a background thread (once); ``wait`` blocks until it is ready."""
        with self._lock:
            if self._model is None and self._thread is None:
                self._thread = threading.Thread(target=self._fit, name="triage-model", daemon=True)
                self._thread.start()
            thread = self._thread
        if wait and thread is not None:
            thread.join()

    def _fit(self) -> None:
        try:
            self._model = TriageModel.train(labelled_rows(self._data_dir), self._rules)
            log.info("triage.model ready")
        except Exception:  # the rules still decide; a broken model must not take triage down
            log.exception("triage.model failed")

    @property
    def ready(self) -> bool:
        return self._model is not None

    def probability(self, text: str) -> float | None:
        """P(emergency), or None while the model is not ready."""
        model = self._model
        if model is None:
            self.warm_up()
            return None
        return model.probability(text)
