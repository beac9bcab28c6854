"""Per-role re-estimation of the calibration (issue 21): the global model (``calibration.py``) adjusted to one
KB, estimated self-supervised from the KB itself.

The global model maps KB-independent features to "probability that the top entry is right", fitted across
the shapes of ``bench/retrieval_shapes.py``. A clinic's KB may still sit off that average. After an import,
the KB's own entries become queries whose right answer is known (``self_queries``): a question perturbed as
a patient types it (a third of its words dropped, half without diacritics), one keyword phrase alone, and for
an entry without a question one sentence of its answer, perturbed the same way. Each query is searched twice
with the production search (``KBSearch``): as is (answerable: right when its entry comes first) and with its
own entry treated as absent from the KB (unanswerable: removed from both legs before fusion, so the features
are those of a KB without it; no re-index). Each search gives one row: the inputs of the global probability
of the top entry and whether that entry is right (``SelfRow``).

Self-supervised queries are easier than patients' messages (the sample KB answers its own perturbed questions
at P@1 0.87 against 0.62 for real messages on faq-val), so a Platt fit on them alone would inflate every
probability. The fit is therefore made RELATIVE to a reference: the very same procedure run on the faq-val
KBs (``adaptation_reference.json``, written by ``python -m bench.research.retrieval_adaptation_reference``),
where the global model is calibrated on real messages. With ``z = logit(p)``:

- reference, per query kind k (a perturbed question, a keyword alone, an answer sentence: they differ in
  difficulty, and KBs differ in which kinds they yield): ``P(self query right | z) = sigmoid(a0_k * z + b0_k)``,
  fitted on the reference rows, where the real-message logit is ``z`` itself;
- role: its real-message logit is ``a * z + b`` (the adjustment), and its self queries are assumed to relate
  to it as on the reference: ``P(right) = sigmoid(a0_k * (a * z + b) + b0_k)``. (a, b) by maximum likelihood
  on the role's rows with a Gaussian prior worth ``PRIOR_WEIGHT`` rows centred on the identity (a small KB
  moves little), bounded by ``A_RANGE``/``B_RANGE``. On the reference rows themselves the fit is exactly the
  identity (each kind's (a0_k, b0_k) zeroes its own gradient).
- what the product applies (``RAISE = False``, chosen on the dev half of the shapes): ``a = 1`` and a shift
  ``b`` that only lowers, applied only when it exceeds ``SIGNIFICANCE`` standard errors. A role is never made
  more confident than the global model: the KB's own queries cannot show that patients' messages are easier
  there (a smaller KB makes its own questions easier, not the messages), and raising pushed false answers
  over 10 % on one shape. It is a safety net for a KB whose own queries fare clearly worse than faq-val's.

The reference rows store the inputs, not probabilities: they are re-scored with whatever ``COEFFICIENTS`` the
calibration has now, so a refit of the global model needs no new reference (a change of ranking does).

A KB of fewer than ``MIN_ENTRIES`` entries, or one that yields fewer than ``MIN_QUERIES`` self queries, keeps
the global model: a few dozen rows cannot tell a KB-specific effect from noise, and in a tiny KB removing an
entry leaves few near misses, which the unanswerable half needs.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.retrieval.calibration import DEFAULT_THRESHOLD, FEATURES, probability
from engine.text import clean_query, strip_diacritics
from engine.types import KBEntry

if TYPE_CHECKING:  # search.py applies the calibrations defined here
    from engine.retrieval.search import KBSearch

# Bump when the query generation or the fit changes: stored calibrations of an older procedure are ignored.
PROCEDURE = 1
MIN_ENTRIES = 20
MIN_QUERIES = 40
MAX_ENTRIES = 200  # entries sampled per role (by a hash of their code): 2-3 searches each
PRIOR_WEIGHT = 100.0  # strength of the pull toward the reference, in rows
UNANSWERABLE_WEIGHT = 0.8  # as the global fit: a little fewer off-KB messages than answerable ones
A_RANGE = (0.6, 1.6)
B_RANGE = (-1.5, 1.5)
Z_CLIP = 6.0
# False: the adjustment is a downward shift of the logit only (a = 1, b <= 0): a KB whose own queries fare
# worse than the reference's lowers its probabilities, none is raised (chosen on dev: raising helped no shape
# and pushed false answers on `full` over 10 %; see bench/retrieval_shapes_results.md).
RAISE = False
SIGNIFICANCE = 2.0  # standard errors a shift must exceed to be applied
KINDS = ("question", "keyword", "answer")  # the self queries' kinds (``self_queries``)
REFERENCE_PATH = Path(__file__).with_name("adaptation_reference.json")


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return max(-Z_CLIP, min(Z_CLIP, math.log(p / (1 - p))))


@dataclass(frozen=True, slots=True)
class Adjustment:
    """``p -> sigmoid(a * logit(p) + b)``: a role's correction of the global probability."""

    a: float = 1.0
    b: float = 0.0

    def __call__(self, p: float) -> float:
        if self.identity:
            return p
        return _sigmoid(self.a * _logit(p) + self.b)

    @property
    def identity(self) -> bool:
        return abs(self.a - 1.0) < 1e-9 and abs(self.b) < 1e-9

    def to_dict(self) -> dict[str, float]:
        return {"a": round(self.a, 4), "b": round(self.b, 4)}


@dataclass(slots=True)
class RoleCalibration:
    """A role's re-estimated calibration, as stored (``db.calibrations``): per search mode an ``Adjustment``
    (empty when the role keeps the global model, ``reason`` says why), the KB it was measured on
    (``fingerprint`` of its active entries, ``kb_version``, the embedding model of the dense leg) and what was
    measured (``figures``)."""

    role: str
    fingerprint: str
    kb_version: int = 0
    embedding_model: str | None = None
    params: dict[str, Adjustment] = field(default_factory=dict)
    n_queries: int = 0
    figures: dict[str, Any] = field(default_factory=dict)
    reason: str = ""  # why the role keeps the global model (params empty)
    procedure: int = PROCEDURE

    @property
    def status(self) -> str:
        return "adjusted" if self.params else "global"

    def for_mode(self, mode: str, model: str | None) -> Adjustment | None:
        """The adjustment for a search in ``mode`` whose dense leg reads ``model``'s vectors (None: global)."""
        if self.procedure != PROCEDURE:
            return None
        adj = self.params.get(mode)
        if adj is None or (mode != "sparse" and model != self.embedding_model):
            return None
        return adj


def kb_fingerprint(entries: Iterable[KBEntry]) -> str:
    """A hash of the searchable content of a role's active entries (order-independent): a calibration applies
    to the KB it was measured on, whatever version bumps (an embedding backfill) happened since."""
    digest = hashlib.sha256()
    for key in sorted(
        json.dumps(
            [e.id, e.code, e.question, e.answer, e.explanation, e.topic, e.subtopic, list(e.keywords)],
            ensure_ascii=False,
        )
        for e in entries
    ):
        digest.update(key.encode())
        digest.update(b"\n")
    return digest.hexdigest()


# ------------------------------------------------------------------------------------------ self queries


@dataclass(frozen=True, slots=True)
class SelfQuery:
    text: str
    entry_id: int
    kind: str  # "question", "keyword", "answer"


_SENTENCE = re.compile(r"(?<=[.?!;:])\s+|\n+")


def perturb(text: str, seed: str) -> str:
    """``text`` as a patient might type it: lowercase, no punctuation at the ends, about a third of its words
    (never the first) dropped when it has more than three, and without diacritics for half of the seeds."""
    rng = random.Random(seed)
    words = text.lower().strip(" ?.!").split()
    if len(words) > 3:
        dropped = set(rng.sample(range(1, len(words)), (len(words) - 1) // 3))
        words = [w for i, w in enumerate(words) if i not in dropped]
    out = " ".join(words)
    return strip_diacritics(out) if rng.random() < 0.5 else out


def answer_sentence(answer: str, max_words: int = 20) -> str:
    """The first sentence of an answer with at least five words (its first ``max_words`` words)."""
    sentences = [s.strip() for s in _SENTENCE.split(answer) if s.strip()]
    pick = next((s for s in sentences if len(s.split()) >= 5), sentences[0] if sentences else "")
    return " ".join(pick.split()[:max_words])


def _order(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def self_queries(entries: Sequence[KBEntry], max_entries: int = MAX_ENTRIES) -> list[SelfQuery]:
    """The self-supervised queries of a KB: for up to ``max_entries`` entries (a deterministic sample), its
    question perturbed (or, without a question, a sentence of its answer perturbed) and one keyword alone."""
    out: list[SelfQuery] = []
    for entry in sorted(entries, key=lambda e: _order(e.code))[:max_entries]:
        seed = _order(entry.code)
        if entry.question.strip():
            out.append(SelfQuery(perturb(entry.question, seed), entry.id, "question"))
        elif entry.answer.strip():
            out.append(SelfQuery(perturb(answer_sentence(entry.answer), seed), entry.id, "answer"))
        keywords = [k.strip() for k in entry.keywords if k.strip()]
        if keywords:
            out.append(SelfQuery(keywords[int(seed[:8], 16) % len(keywords)].lower(), entry.id, "keyword"))
    return [q for q in out if clean_query(q.text)]


@dataclass(slots=True)
class SelfRow:
    """One self-supervised search: the inputs of the global probability of its top entry, and whether that
    entry is the query's own (never, for an unanswerable row)."""

    right: bool
    answerable: bool
    features: dict[str, float]
    unknown: int = 0
    sparse: float = 0.0
    dense: float = 0.0
    words: int = 0
    kind: str = "question"  # one of KINDS

    def probability(
        self, mode: str, adjust: Callable[[float], float] | None = None, *, guard: bool = True
    ) -> float:
        """The probability the search gives this top entry now (current coefficients); ``guard=False``
        leaves out the off-topic cap (which ``adjust`` never moves)."""
        return probability(
            mode,
            self.features,
            unknown_words=self.unknown if guard else 0,
            sparse=self.sparse,
            dense=self.dense,
            query_words=self.words,
            adjust=adjust,
        )

    def to_list(self) -> list[float]:
        return [
            float(self.right),
            float(self.answerable),
            float(KINDS.index(self.kind)),
            float(self.unknown),
            round(self.sparse, 5),
            round(self.dense, 5),
            float(self.words),
            *(round(self.features.get(f, 0.0), 5) for f in FEATURES),
        ]

    @classmethod
    def from_list(cls, values: Sequence[float], names: Sequence[str] = FEATURES) -> SelfRow:
        right, answerable, kind, unknown, sparse, dense, words, *feats = values
        return cls(
            bool(right),
            bool(answerable),
            dict(zip(names, feats, strict=True)),
            int(unknown),
            sparse,
            dense,
            int(words),
            KINDS[int(kind)],
        )


async def collect(
    search: KBSearch, role: str, queries: Sequence[SelfQuery], mode: str = "hybrid"
) -> tuple[str, list[SelfRow]]:
    """Search every query answerable and unanswerable; returns the mode the searches actually used (hybrid
    falls back to sparse without a complete set of vectors) and the rows."""
    rows: list[SelfRow] = []
    used = mode
    for q in queries:
        for answerable in (True, False):
            res = await search.search(
                role, q.text, k=2, mode=mode, absent=() if answerable else (q.entry_id,)
            )
            if not res.hits:
                continue
            used = res.mode or mode
            top = res.hits[0]
            rows.append(
                SelfRow(
                    right=answerable and top.entry.id == q.entry_id,
                    answerable=answerable,
                    features=dict(getattr(top, "features", {}) or {}),
                    unknown=res.unknown_words,
                    sparse=top.sparse_score,
                    dense=top.dense_score,
                    words=res.query_words,
                    kind=q.kind,
                )
            )
    return used, rows


# ------------------------------------------------------------------------------------------ fitting


def _newton(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, offset: np.ndarray, center: np.ndarray, ridge: float
) -> np.ndarray:
    """Weighted logistic regression ``P(y) = sigmoid(x @ theta + offset)`` with an L2 pull of strength
    ``ridge`` toward ``center`` (from which it starts): damped Newton steps (at most 0.5 per coordinate)."""
    theta = center.astype(float).copy()
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ theta + offset, -30, 30)))
        grad = x.T @ (w * (p - y)) + ridge * (theta - center)
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + ridge * np.eye(len(theta))
        step = np.linalg.solve(hess, grad)
        step *= min(1.0, 0.5 / max(float(np.abs(step).max()), 1e-12))
        theta -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return theta


def fit_platt(
    z: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    prior: tuple[float, float] = (1.0, 0.0),
    strength: float = 0.0,
) -> tuple[float, float]:
    """Weighted logistic regression of ``y`` on ``a * z + b`` with a Gaussian prior (precision ``strength``)
    centred on ``prior``: Newton's method on two parameters."""
    x = np.column_stack([z, np.ones_like(z)])
    # a vanishing ridge keeps the Hessian invertible on separable data
    theta = _newton(x, y, w, np.zeros_like(z), np.array(prior, dtype=float), max(strength, 1e-6))
    return float(theta[0]), float(theta[1])


def _design(rows: Sequence[SelfRow], mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Logit of the (unguarded) global probability, label, weight and kind of the rows the adjustment can move:
    rows the off-topic guard caps are left to the guard."""
    kept = [r for r in rows if r.probability(mode) >= r.probability(mode, guard=False) - 1e-12]
    z = np.array([_logit(r.probability(mode, guard=False)) for r in kept])
    y = np.array([float(r.right) for r in kept])
    n_ans = sum(r.answerable for r in kept)
    n_un = len(kept) - n_ans
    w_un = UNANSWERABLE_WEIGHT * n_ans / n_un if n_un else 0.0
    w = np.array([1.0 if r.answerable else w_un for r in kept])
    return z, y, w, [r.kind for r in kept]


Reference = dict[str, tuple[float, float]]  # query kind -> (a0, b0)


def reference_fit(rows: Sequence[SelfRow], mode: str) -> Reference:
    """Per query kind, (a0, b0): how self queries' correctness relates to the global probability on the
    reference KBs, ``P(right) = sigmoid(a0 * z + b0)``."""
    z, y, w, kinds = _design(rows, mode)
    out: Reference = {}
    for kind in KINDS:
        sel = np.array([k == kind for k in kinds], dtype=bool)
        if sel.sum() >= MIN_QUERIES:
            out[kind] = fit_platt(z[sel], y[sel], w[sel])
    return out


def relative_adjustment(
    rows: Sequence[SelfRow], mode: str, reference: Reference, prior_weight: float = PRIOR_WEIGHT
) -> Adjustment:
    """The role's adjustment ``(a, b)`` relative to the reference (see the module docstring): the real-message
    logit is ``a * z + b``, and a self query of kind k is right with probability
    ``sigmoid(a0_k * (a * z + b) + b0_k)`` as on the reference; (a, b) by maximum likelihood with a Gaussian
    prior of ``prior_weight`` rows centred on the identity, bounded by ``A_RANGE``/``B_RANGE``."""
    z, y, w, kinds = _design(rows, mode)
    sel = np.array([k in reference for k in kinds], dtype=bool)
    if not sel.any():
        return Adjustment()
    a0 = np.array([reference[k][0] for k, s in zip(kinds, sel, strict=True) if s])
    b0 = np.array([reference[k][1] for k, s in zip(kinds, sel, strict=True) if s])
    z, y, w = z[sel], y[sel], w[sel]
    if not RAISE:
        # Only the shift, only down: P = sigmoid(a0 * (z + b) + b0), b <= 0 (logistic regression on x = a0
        # with offset a0 z + b0).
        theta = _newton(a0[:, None], y, w, a0 * z + b0, np.array([0.0]), max(prior_weight, 1e-6))
        b = float(theta[0])
        # A shift the rows cannot tell from noise (within SIGNIFICANCE standard errors of 0) is no shift.
        p = 1.0 / (1.0 + np.exp(-np.clip(a0 * (z + b) + b0, -30, 30)))
        se = 1.0 / math.sqrt(max(float(np.sum(w * p * (1 - p) * a0**2)), 1e-12))
        if b > -SIGNIFICANCE * se:
            return Adjustment()
        return Adjustment(1.0, max(b, B_RANGE[0]))
    # P = sigmoid(a * (a0 z) + b * a0 + b0): logistic regression on x = (a0 z, a0) with offset b0.
    x = np.column_stack([a0 * z, a0])
    theta = _newton(x, y, w, b0, np.array([1.0, 0.0]), max(prior_weight, 1e-6))
    a = min(max(float(theta[0]), A_RANGE[0]), A_RANGE[1])
    b = min(max(float(theta[1]), B_RANGE[0]), B_RANGE[1])
    return Adjustment(a, b)


def decision_figures(
    rows: Sequence[SelfRow],
    mode: str,
    adjust: Callable[[float], float] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> dict[str, float]:
    """On self queries: P@1, answered share and precision when answered, false answers on the unanswerable
    half, at ``threshold``."""
    ans = [r for r in rows if r.answerable]
    un = [r for r in rows if not r.answerable]
    answered = [r for r in ans if r.probability(mode, adjust) >= threshold]
    return {
        "p@1": round(sum(r.right for r in ans) / max(1, len(ans)), 4),
        "answered": round(len(answered) / max(1, len(ans)), 4),
        "precision_answered": round(sum(r.right for r in answered) / max(1, len(answered)), 4),
        "false_answers": round(
            sum(r.probability(mode, adjust) >= threshold for r in un) / max(1, len(un)), 4
        ),
    }


# ------------------------------------------------------------------------------------------ reference


def load_reference(path: Path = REFERENCE_PATH) -> dict[str, list[SelfRow]]:
    """Reference rows per mode (empty when the file is missing: every role then keeps the global model)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    names = data["features"]
    return {mode: [SelfRow.from_list(v, names) for v in rows] for mode, rows in data["modes"].items()}


def write_reference(rows: dict[str, list[SelfRow]], source: str, path: Path = REFERENCE_PATH) -> None:
    data = {
        "procedure": PROCEDURE,
        "source": source,
        "columns": ["right", "answerable", "kind", "unknown", "sparse", "dense", "words", "*features"],
        "kinds": list(KINDS),
        "features": list(FEATURES),
        "modes": {mode: [r.to_list() for r in rs] for mode, rs in rows.items()},
    }
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


_reference_cache: dict[str, Reference] = {}


def reference_parameters(mode: str, reference: dict[str, list[SelfRow]] | None = None) -> Reference | None:
    """Per query kind, (a0, b0) of the stored reference for ``mode`` with the current coefficients (computed
    once per process)."""
    if reference is None and mode in _reference_cache:
        return _reference_cache[mode]
    rows = (reference if reference is not None else load_reference()).get(mode)
    if not rows:
        return None
    fitted = reference_fit(rows, mode)
    if not fitted:
        return None
    if reference is None:
        _reference_cache[mode] = fitted
    return fitted


# ------------------------------------------------------------------------------------------ one role


def estimate(
    role: str,
    fingerprint: str,
    rows_by_mode: dict[str, list[SelfRow]],
    *,
    n_entries: int,
    reference: dict[str, list[SelfRow]] | None = None,
    prior_weight: float = PRIOR_WEIGHT,
) -> RoleCalibration:
    """A role's calibration from its self rows per mode (``collect``); global with a reason when unreliable."""
    cal = RoleCalibration(role, fingerprint)
    n = max((sum(r.answerable for r in rows) for rows in rows_by_mode.values()), default=0)
    cal.n_queries = n
    cal.figures = {"entries": n_entries, "queries": n}
    if n_entries < MIN_ENTRIES:
        cal.reason = (
            f"only {n_entries} entries (< {MIN_ENTRIES}): too few for self-supervised queries to be reliable"
        )
        return cal
    if n < MIN_QUERIES:
        cal.reason = f"only {n} self-supervised queries (< {MIN_QUERIES}): too few to re-estimate"
        return cal
    for mode, rows in rows_by_mode.items():
        ref = reference_parameters(mode, reference)
        if ref is None:
            cal.reason = f"no reference rows for mode {mode}"
            continue
        adj = relative_adjustment(rows, mode, ref, prior_weight)
        cal.params[mode] = adj
        cal.figures[mode] = {
            "reference": {kind: [round(a0, 4), round(b0, 4)] for kind, (a0, b0) in ref.items()},
            "kinds": {kind: sum(r.kind == kind and r.answerable for r in rows) for kind in KINDS},
            "global": decision_figures(rows, mode),
            "adjusted": decision_figures(rows, mode, adj),
        }
    if cal.params:
        cal.reason = ""
    return cal


async def calibrate(
    search: KBSearch,
    role: str,
    *,
    modes: Sequence[str] = ("hybrid", "sparse"),
    reference: dict[str, list[SelfRow]] | None = None,
) -> RoleCalibration:
    """Re-estimate ``role``'s calibration from its own KB with ``search`` (a fresh ``KBSearch`` on the role's
    store): the self rows of each mode the searcher can run (hybrid only when the dense leg is ready)."""
    started = time.perf_counter()
    index = await search.index(role)
    entries = index.entries
    fingerprint = await search.fingerprint(role)
    queries = self_queries(entries) if len(entries) >= MIN_ENTRIES else []
    rows_by_mode: dict[str, list[SelfRow]] = {}
    for mode in modes:
        if mode != "sparse" and not search.dense_ready(role):
            continue
        used, rows = await collect(search, role, queries, mode)
        if used == mode:
            rows_by_mode[mode] = rows
    cal = estimate(role, fingerprint, rows_by_mode, n_entries=len(entries), reference=reference)
    cal.kb_version = search.version(role)
    cal.embedding_model = search.dense_model(role)
    cal.figures["seconds"] = round(time.perf_counter() - started, 2)
    return cal
