"""Issue 21, third ranking round (not the product): three sparse-leg ideas measured on the DEV half of the KB
shapes of ``bench/retrieval_shapes.py``, as numpy over the cached leg matrices of
``bench/research/retrieval_ranking_ablation.py`` (same ``Data``, ``metrics`` and ``final`` fusion).

1. **Word-segmented family** (``pyvi``'s ``ViTokenizer``, its CRF model ships inside the wheel): every field of
   an entry and every message is segmented into Vietnamese words ("đái_tháo_đường"), folded, and the words
   are a third TF-IDF family next to syllables and syllable bigrams (``word``: every word; ``compound``: only
   the multi-syllable ones). A message without marks is segmented after the KB-spelling restoration that the
   dense leg already uses (``DiacriticRestorer``): pyvi's model reads unmarked text as single syllables.
2. **Keywords that repeat the question**: in ``keywords novel a``, a keyword term (syllable or bigram) the
   entry's question already has keeps ``a`` of its count in the keywords field (0: keywords only add
   vocabulary the question lacks; 1: today).
   Also: keyword bigrams kept inside one keyword (``bigram-sep``: no "tim tim" from "bệnh tim ; tim bẩm"),
   the same rule for messages of >= 20 words only (``GATED``), and the keywords field scaled by the norm of
   the question instead of its own (``SCALED``). ``--flips`` prints where the production leg and fusion
   disagree between ``questions`` and ``questions_kw``; ``--product`` also scores with
   ``engine/retrieval/sparse.py`` as checked out (to check a product implementation against the numpy one).
3. **Proximity**: ``skip-bigram`` pairs of syllables at distance 2-3 (ordered, "đau ... bụng"), a fourth
   family that rewards a question's words standing close together inside a long message.
4. **Vague titles** (fusion, messages >= 20 words): the learned fusion's title coverage multiplied by
   ``min(1, mass / m0)``, ``mass`` the title's informative weight (sum of idf - 1 of its syllables) and ``m0``
   a quantile of it over the KB, so that "Xin bác sĩ tư vấn giúp em" fully covered counts less than a
   specific question fully covered.

Each variant's sparse leg is rebuilt with vocabularies (``tfidf_scores``: the production scheme), so its
"base" is that rebuild, not the hashed production matrix (they agree to ±0.003). Prints P@1 / hit@10 of the
variant alone and under the production fusion, per shape, and the no-diacritics loss.

    PYTHONPATH=/tmp/pyvi:$PWD MEDBOT_EVAL_DIR=/work/main/.medbot python -m bench.research.word_segment_ablation

(pyvi 0.1.1 and its dependencies sklearn-crfsuite, python-crfsuite, tabulate, tqdm installed with
``pip install --target /tmp/pyvi --no-deps ...``; they are not product dependencies.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from bench.research.retrieval_ranking_ablation import (
    SHAPES,
    Data,
    _idf,
    _sub,
    final,
    load,
    metrics,
    tfidf_scores,
    title_coverage,
)
from bench.retrieval_shapes import CACHE, DiskCachedEmbedder, build_shapes
from engine.retrieval.sparse import FIELD_WEIGHTS, SparseIndex, entry_title
from engine.text import fold, ngrams, split_words
from engine.types import KBEntry

FIELDS = list(FIELD_WEIGHTS)


def raw_fields(e: KBEntry) -> dict[str, str]:
    """The unfolded text of each weighted field (``entry_fields`` before folding)."""
    return {
        "question": e.question,
        "keywords": " ; ".join(e.keywords),
        "topic": f"{e.topic} {e.subtopic}",
        "answer": f"{e.answer} {e.explanation}",
    }


class Segmenter:
    """pyvi word segmentation with a disk cache (text -> segmented text)."""

    def __init__(self) -> None:
        # pyvi is a research-only dependency (installed under /tmp/pyvi), imported lazily on purpose.
        from pyvi import ViTokenizer

        self._tok = ViTokenizer.tokenize
        self.path = CACHE / "pyvi-seg.json"
        self.cache: dict[str, str] = json.loads(self.path.read_text()) if self.path.is_file() else {}
        self.added = 0

    def __call__(self, text: str) -> str:
        if not text.strip():
            return ""
        key = hashlib.sha256(text.encode()).hexdigest()[:20]
        out = self.cache.get(key)
        if out is None:
            out = self.cache[key] = self._tok(text)
            self.added += 1
        return out

    def save(self) -> None:
        if self.added:
            self.path.write_text(json.dumps(self.cache))
            self.added = 0


def _syl(t: str) -> list[str]:
    return split_words(t)


def _bi(t: str) -> list[str]:
    return list(ngrams(split_words(t), 2, 2))


def _bi_sep(t: str) -> list[str]:
    """Bigrams that do not cross a keyword separator (";"): "benh tim ; tim bam" has no "tim tim"."""
    return [g for part in t.split(";") for g in ngrams(split_words(part), 2, 2)]


def _word(t: str) -> list[str]:
    return split_words(t)  # "\w+" keeps pyvi's underscores: "dai_thao_duong" is one term


def _compound(t: str) -> list[str]:
    return [w for w in split_words(t) if "_" in w]


def _skip(t: str) -> list[str]:
    w = split_words(t)
    return [f"{w[i]}~{w[i + g]}" for g in (2, 3) for i in range(len(w) - g)]


def counts(
    entry_docs: list[dict[str, str]], queries: list[str], analyzer: Callable[[str], list[str]]
) -> tuple[list[sp.csr_matrix], sp.csr_matrix]:
    vec = CountVectorizer(analyzer=analyzer, dtype=np.float32, lowercase=False)
    vec.fit([f[n] for f in entry_docs for n in FIELDS])
    per_field = [vec.transform([f[n] for f in entry_docs]).tocsr() for n in FIELDS]
    return per_field, vec.transform(queries).tocsr()


def keywords_novel(per_field: list[sp.csr_matrix], a: float) -> list[sp.csr_matrix]:
    """The keywords field with each term the entry's question also has scaled by ``a``."""
    q, kw = per_field[FIELDS.index("question")], per_field[FIELDS.index("keywords")]
    mask = q.copy()
    mask.data[:] = 1.0
    new = (kw - (1 - a) * kw.multiply(mask)).tocsr()
    new.eliminate_zeros()
    out = list(per_field)
    out[FIELDS.index("keywords")] = new
    return out


def tfidf_kw_question_scale(
    per_field: list[sp.csr_matrix], q: sp.csr_matrix, cap: float | None
) -> np.ndarray:
    """The production scheme, except that the keywords field is divided by the norm of the entry's QUESTION
    vector instead of its own (an entry without a question keeps its own): keywords weigh as extra words of
    the question (x 0.6), so three common phrases do not get the mass of three rare ones. ``cap``: the
    keywords part's norm is at most ``cap`` x 0.6 (None: no cap)."""
    n = per_field[0].shape[0]
    idf = sp.diags(_idf(per_field, n))
    parts = [(_sub(m) @ idf).tocsr() for m in per_field]
    qi, ki = FIELDS.index("question"), FIELDS.index("keywords")
    qnorm = np.sqrt(np.asarray(parts[qi].multiply(parts[qi]).sum(1)).ravel())
    knorm = np.sqrt(np.asarray(parts[ki].multiply(parts[ki]).sum(1)).ravel())
    scale = np.where(qnorm > 0, 1.0 / np.maximum(qnorm, 1e-9), 1.0 / np.maximum(knorm, 1e-9))
    if cap is not None:
        scale = np.minimum(scale, cap / np.maximum(knorm, 1e-9))
    mixed = None
    for i, (m, name) in enumerate(zip(parts, FIELDS, strict=True)):
        w = FIELD_WEIGHTS[name]
        if w <= 0:
            continue
        part = sp.diags(scale.astype(np.float32)) @ m * w if i == ki else normalize(m) * w
        mixed = part if mixed is None else mixed + part
    docs = normalize(mixed)
    return (normalize(_sub(q) @ idf) @ docs.T).toarray()


def title_mass(d: Data, vocab: dict[str, int], per_field: list[sp.csr_matrix]) -> np.ndarray:
    """Per entry: the sum of idf - 1 over the distinct syllables of its title (``entry_title``)."""
    idf = np.maximum(_idf(per_field, per_field[0].shape[0]) - 1.0, 0.0)
    vec = CountVectorizer(analyzer=_syl, dtype=np.float32, vocabulary=vocab, lowercase=False)
    titles = vec.transform([fold(entry_title(e)) for e in d.shape.entries]).tocsr()
    titles.data[:] = 1.0
    return np.asarray(titles @ idf).ravel()


class Signals:
    """Per query set: the rebuilt sparse families, the word families, coverage and message length."""

    def __init__(self, d: Data, seg: Segmenter, restorer_of: Callable[[str], object]) -> None:
        folded_docs = [{n: fold(t) for n, t in raw_fields(e).items()} for e in d.shape.entries]
        seg_docs = [{n: fold(seg(t)) for n, t in raw_fields(e).items()} for e in d.shape.entries]
        restorer = restorer_of(d.shape.name)
        marked_texts = [t if m else restorer.restore(t) for t, m in zip(d.texts, d.marked, strict=True)]
        folded_q = [fold(t) for t in d.texts]
        seg_q = [fold(seg(t)) for t in marked_texts]
        seg.save()
        self.fam = {
            "syllable": counts(folded_docs, folded_q, _syl),
            "bigram": counts(folded_docs, folded_q, _bi),
            "bigram-sep": counts(folded_docs, folded_q, _bi_sep),
            "word": counts(seg_docs, seg_q, _word),
            "compound": counts(seg_docs, seg_q, _compound),
            "skip": counts(folded_docs, folded_q, _skip),
        }
        # Segmented queries without restoration (how much the restoration matters for the word family).
        self.fam["word-unrestored"] = counts(seg_docs, [fold(seg(t)) for t in d.texts], _word)
        seg.save()
        c = SimpleNamespace(fam={"syllable": self.fam["syllable"]}, names=FIELDS, vocab={})
        c.vocab["syllable"] = (
            CountVectorizer(analyzer=_syl, lowercase=False)
            .fit([f[n] for f in folded_docs for n in FIELDS])
            .vocabulary_
        )
        self.words = np.array([len(split_words(fold(t))) for t in d.texts])
        self.cov_strict = title_coverage(d, c, shift=1.0)  # type: ignore[arg-type]
        self.cov = self.cov_strict  # ``final`` reads cov_strict; kept for the Extra interface
        self.mass = title_mass(d, c.vocab["syllable"], self.fam["syllable"][0])

    def score(
        self, fams: dict[str, float], kw_a: float | None = None, kw_scale: str = "", cap: float | None = None
    ) -> np.ndarray:
        out = None
        for fam, w in fams.items():
            per_field, q = self.fam[fam]
            if kw_scale == "question":
                s = w * tfidf_kw_question_scale(per_field, q, cap)
                out = s if out is None else out + s
                continue
            if kw_a is not None and fam.startswith(("syllable", "bigram")):
                per_field = keywords_novel(per_field, kw_a)
            c = SimpleNamespace(fam={fam: (per_field, q)}, names=FIELDS)
            s = tfidf_scores(c, {fam: w})  # type: ignore[arg-type]
            out = s if out is None else out + s
        assert out is not None
        return out


BASE = {"syllable": 0.5, "bigram": 0.5}
VARIANTS: dict[str, tuple[dict[str, float], float | None]] = {
    "base (vocabulary rebuild of production)": (BASE, None),
    "word alone": ({"word": 1.0}, None),
    "word alone, queries not restored": ({"word-unrestored": 1.0}, None),
    "syllable + word (word replaces bigram)": ({"syllable": 0.5, "word": 0.5}, None),
    "+ word 0.25": ({**BASE, "word": 0.25}, None),
    "+ word 0.5": ({**BASE, "word": 0.5}, None),
    "+ compound 0.25": ({**BASE, "compound": 0.25}, None),
    "+ compound 0.5": ({**BASE, "compound": 0.5}, None),
    "+ word 0.25, queries not restored": ({**BASE, "word-unrestored": 0.25}, None),
    "keywords novel 0": (BASE, 0.0),
    "keywords novel 0.5": (BASE, 0.5),
    "keyword bigrams within one keyword": ({"syllable": 0.5, "bigram-sep": 0.5}, None),
    "keyword bigrams within one keyword, novel 0": ({"syllable": 0.5, "bigram-sep": 0.5}, 0.0),
    "keyword bigrams within one keyword, novel 0.5": ({"syllable": 0.5, "bigram-sep": 0.5}, 0.5),
    "+ skip-bigram 0.15": ({**BASE, "skip": 0.15}, None),
    "+ skip-bigram 0.3": ({**BASE, "skip": 0.3}, None),
}


def _ranks(d: Data, s: np.ndarray) -> np.ndarray:
    g = s[np.arange(len(d.gold)), d.gold]
    return (s > g[:, None]).sum(1) + 1


def keyword_flips(dq: Data, dk: Data, signals: list[Signals], names: list[str], show: int = 12) -> None:
    """Production sparse leg and fusion: how many dev messages the two shapes disagree on, and examples."""
    xq, xk = signals[names.index("questions")], signals[names.index("questions_kw")]
    for label, fq, fk in (
        ("sparse leg", dq.sparse, dk.sparse),
        ("fusion", final(dq, xq), final(dk, xk)),  # type: ignore[arg-type]
    ):
        rq, rk = _ranks(dq, fq), _ranks(dk, fk)
        print(
            f"{label}: P@1 questions only {int(((rq == 1) & (rk > 1)).sum())}, with keywords only "
            f"{int(((rq > 1) & (rk == 1)).sum())}; hit@10 questions only {int(((rq <= 10) & (rk > 10)).sum())}, "
            f"with keywords only {int(((rq > 10) & (rk <= 10)).sum())}"
        )
    entries = dk.shape.entries
    for i in np.flatnonzero((rq == 1) & (rk > 1))[:show]:
        top, gold = int(np.argmax(fk[i])), int(dk.gold[i])
        print(f"- {dk.texts[i][:160]}")
        print(f"  gold {entries[gold].question} | {entries[gold].keywords}")
        print(f"  top  {entries[top].question} | {entries[top].keywords}")


# Length-gated: the first scoring for messages of >= 20 words (``fusion.LEARNED_MIN_WORDS``), the second below.
GATED: dict[str, tuple[dict[str, float], float | None, dict[str, float], float | None]] = {
    "keywords novel 0 (bigrams within one keyword) for messages >= 20 words only": (
        {"syllable": 0.5, "bigram-sep": 0.5},
        0.0,
        BASE,
        None,
    ),
}


# Keywords scaled by the question's norm (``tfidf_kw_question_scale``), name -> cap.
SCALED: dict[str, float | None] = {
    "keywords scaled by the question's norm": None,
    "keywords scaled by the question's norm, at most their own": 1.0,
}


# Title coverage damped for vague titles (production sparse leg), name -> quantile of the title mass as m0.
VAGUE: dict[str, float] = {
    "coverage x min(1, title mass / 25th percentile)": 0.25,
    "coverage x min(1, title mass / median)": 0.5,
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--only", default="", help="comma-separated variant name prefixes")
    ap.add_argument(
        "--flips", action="store_true", help="dev messages `questions` gets right and `questions_kw` wrong"
    )
    ap.add_argument(
        "--product",
        action="store_true",
        help="also the sparse leg of engine/retrieval/sparse.py as checked out (hashed, not cached)",
    )
    args = ap.parse_args()
    embedder = DiskCachedEmbedder(offline=True)
    built = build_shapes()
    names = args.shapes.split(",")
    data = [load(built[n], embedder) for n in names]
    if "questions" in names:
        data.append(load(built["questions"], embedder, strip=True))
    seg = Segmenter()
    restorers: dict[str, object] = {}

    def restorer_of(name: str) -> object:
        if name not in restorers:
            restorers[name] = SparseIndex(built[name].entries).build_restorer()
        return restorers[name]

    signals = []
    for d in data:
        signals.append(Signals(d, seg, restorer_of))
        print(f"signals {d.name}", file=sys.stderr, flush=True)
    head = f"{'variant':<44}" + "".join(f"{d.name:>18}" for d in data) + "  nodiac.loss"
    print(head)
    prod = [metrics(d, final(d, x)) for d, x in zip(data, signals, strict=True)]  # type: ignore[arg-type]
    loss = prod[0][0] - prod[-1][0] if "questions" in names else float("nan")
    print(
        f"{'production (hashed) + fusion':<44}"
        + "".join(f"{p:>9.3f}/{h:.3f}" for p, h in prod)
        + f"  {loss:.4f}"
    )
    if args.flips and {"questions", "questions_kw"} <= set(names):
        keyword_flips(data[names.index("questions")], data[names.index("questions_kw")], signals, names)
    if args.product:
        now = []
        for d, x in zip(data, signals, strict=True):
            index = SparseIndex(d.shape.entries)
            s = np.vstack([index.scores(t) for t in d.texts]).astype(np.float32)
            now.append(metrics(d, final(d, x, s)))  # type: ignore[arg-type]
        loss = now[0][0] - now[-1][0] if "questions" in names else float("nan")
        cells = "".join(f"{p:>9.3f}/{h:.3f}" for p, h in now)
        print(f"{'engine sparse.py as checked out + fusion':<44}{cells}  {loss:.4f}", flush=True)
    extra = {g: (BASE, None) for g in (*GATED, *SCALED, *VAGUE)}
    for name, (fams, kw_a) in {**VARIANTS, **extra}.items():
        if args.only and not any(name.startswith(p) for p in args.only.split(",")):
            continue
        alone, fused = {}, {}
        for d, x in zip(data, signals, strict=True):
            if name in VAGUE:
                m0 = np.quantile(x.mass, VAGUE[name])
                damp = np.minimum(1.0, x.mass / max(m0, 1e-9))[None, :]
                tweaked = SimpleNamespace(words=x.words, cov_strict=x.cov_strict * damp)
                fused[d.name] = metrics(d, final(d, tweaked, d.sparse))  # type: ignore[arg-type]
                alone[d.name] = metrics(d, d.sparse)
                continue
            if name in SCALED:
                s = x.score(BASE, kw_scale="question", cap=SCALED[name])
            elif name in GATED:
                long_fams, long_a, short_fams, short_a = GATED[name]
                s = np.where(
                    (x.words >= 20)[:, None], x.score(long_fams, long_a), x.score(short_fams, short_a)
                )
            else:
                s = x.score(fams, kw_a)
            alone[d.name] = metrics(d, s)
            fused[d.name] = metrics(d, final(d, x, s))  # type: ignore[arg-type]
        for label, res in (("alone", alone), ("+ fusion", fused)):
            loss = (
                res["questions"][0] - res["questions~nodiac"][0]
                if "questions~nodiac" in res
                else float("nan")
            )
            cells = "".join(f"{p1:>9.3f}/{hit:.3f}" for p1, hit in res.values())
            print(f"{name + ': ' + label:<44}{cells}  {loss:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
