"""A trained second opinion for triage: the probability that a message describes an emergency.

The rules (``rules.py``) are the detector; this model is OR-ed with them at a high threshold (``THRESHOLD``)
to catch emergencies worded in ways no phrase foresaw. It learns from the labelled messages in ``data/``
(several thousand, written by hand by people who never saw the rules, plus the rule authors' own rows; the
held-out test set is not among them) and from nothing else: no download, no file written.

Model: TF-IDF over character n-grams (2–5, within words) and word n-grams (1–2) of the text as triage reads it
(``normalize.py``: folded, chat spellings mapped, clauses marked), then a class-balanced logistic regression.
It is fitted once per process, on first use or by ``warm_up()`` in a background thread at start-up (about a
second on two cores); until it is ready, ``probability`` answers None and the rules decide alone.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline, make_union

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
    """A fitted text classifier; ``probability(text)`` is P(emergency)."""

    def __init__(self, pipeline: Pipeline, rules: RuleSet) -> None:
        self._pipeline = pipeline
        self._rules = rules

    @classmethod
    def train(cls, rows: list[dict[str, object]], rules: RuleSet, *, c: float = C) -> TriageModel:
        texts = [normalize(str(row["text"]), rules.words).text for row in rows]
        labels = [bool(row["emergency"]) for row in rows]
        pipeline = make_pipeline(
            make_union(
                TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True),
                TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True),
            ),
            LogisticRegression(C=c, class_weight="balanced", max_iter=2000),
        )
        pipeline.fit(texts, labels)
        return cls(pipeline, rules)

    def probability(self, text: str) -> float:
        return float(self._pipeline.predict_proba([normalize(text, self._rules.words).text])[0, 1])


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
