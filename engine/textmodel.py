"""A small text classifier with a fast per-message path, shared by the intent classifier and the triage model.

TF-IDF over character n-grams (2–5, within words) and word n-grams (1–2), then a logistic regression. Fitting
uses one BLAS/OpenMP thread (on a small shared machine oversubscribed threads turn a fraction of a second
into many). Per message, sklearn's ``predict_proba`` spends more time in FeatureUnion and input validation than
in arithmetic; ``fast_proba`` computes the same numbers directly (each vectorizer's own analyzer, sublinear tf
times idf, l2 norm, the linear part and the logistic or softmax) and is used only if it reproduces
``predict_proba`` on the training texts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, Pipeline
from threadpoolctl import ThreadpoolController

log = logging.getLogger(__name__)
_THREADS = ThreadpoolController()
DEFAULT_TOKENS = r"(?u)\b\w\w+\b"


class LinearTextModel:
    """A fitted classifier; ``proba(texts)`` has one column per class in ``classes`` order."""

    def __init__(
        self,
        texts: Sequence[str],
        labels: Sequence[Any],
        *,
        c: float,
        class_weight: str | None = None,
        char_min_df: int = 1,
        word_tokens: str = DEFAULT_TOKENS,
        tol: float = 1e-4,
    ) -> None:
        features = FeatureUnion(
            [
                (
                    "char",
                    TfidfVectorizer(
                        analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=char_min_df
                    ),
                ),
                (
                    "word",
                    TfidfVectorizer(
                        analyzer="word", ngram_range=(1, 2), sublinear_tf=True, token_pattern=word_tokens
                    ),
                ),
            ]
        )
        self.pipeline = Pipeline(
            [
                ("features", features),
                ("lr", LogisticRegression(C=c, class_weight=class_weight, max_iter=2000, tol=tol)),
            ]
        )
        with _THREADS.limit(limits=1):
            self.pipeline.fit(list(texts), list(labels))
        self.classes: list[Any] = list(self.pipeline.classes_)
        self._prepare_fast()
        sample = list(texts[:200])
        with _THREADS.limit(limits=1):
            reference = self.pipeline.predict_proba(sample)
        self.fast = bool(np.allclose(self.fast_proba(sample), reference, rtol=0, atol=1e-9))
        if not self.fast:
            log.warning("text model: fast path differs from predict_proba, using the pipeline")

    def _prepare_fast(self) -> None:
        self._parts: list[tuple[Any, dict[str, int], np.ndarray, int]] = []
        offset = 0
        for _, vectorizer in self.pipeline.named_steps["features"].transformer_list:
            vocabulary: dict[str, int] = vectorizer.vocabulary_
            self._parts.append((vectorizer.build_analyzer(), vocabulary, vectorizer.idf_, offset))
            offset += len(vocabulary)
        lr = self.pipeline.named_steps["lr"]
        self._coef = np.ascontiguousarray(lr.coef_.T)  # features x classes (one column for two classes)
        self._intercept = lr.intercept_

    def fast_proba(self, texts: Sequence[str]) -> np.ndarray:
        """``predict_proba`` without sklearn's per-call overhead (same numbers, about ten times less time)."""
        z = np.empty((len(texts), len(self._intercept)))
        for row, text in enumerate(texts):
            acc = self._intercept.astype(np.float64).copy()
            for analyzer, vocabulary, idf, offset in self._parts:
                counts: dict[int, int] = {}
                for term in analyzer(text):
                    col = vocabulary.get(term)
                    if col is not None:
                        counts[col] = counts.get(col, 0) + 1
                if not counts:
                    continue
                cols = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
                tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
                weights = (1.0 + np.log(tf)) * idf[cols]
                weights /= np.linalg.norm(weights)
                acc += weights @ self._coef[cols + offset]
            z[row] = acc
        if z.shape[1] == 1:  # two classes: sklearn's binary logistic
            p1 = 1.0 / (1.0 + np.exp(-z[:, 0]))
            return np.column_stack([1.0 - p1, p1])
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def proba(self, texts: Sequence[str]) -> np.ndarray:
        if self.fast:  # plain numpy on a few dozen features: no thread pool to limit
            return self.fast_proba(texts)
        with _THREADS.limit(limits=1):
            return self.pipeline.predict_proba(list(texts))
