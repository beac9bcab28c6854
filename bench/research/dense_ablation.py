"""Dense-leg ablation for issue 21 (research, not run by ``make bench``): what text of an entry is embedded, how
many vectors an entry has, and what part of a long message the dense leg embeds, on the KB shapes of
``bench/retrieval_shapes.py``, DEV half only.

Per shape the sparse leg is computed once with the production pieces (``clean_query``, the shape's
``SparseIndex``, ``index.top``) and kept in memory; each dense variant is a matrix product over cached vectors
(``DiskCachedEmbedder``: only texts never seen are embedded). Fusion is the production one,
``engine.retrieval.fusion.fuse`` as ``KBSearch._search_one`` calls it (``fused_ids``: 50 candidates per leg,
"learned" for messages of 20 words or more, else "score"; the sparse scores of dense-only candidates passed as
``sparse_extra``), so the "prod" rows reproduce ``KBSearch`` in hybrid and dense mode.

Entry-side variants (a vector text per entry, or several; an entry's dense score is the max over its vectors):

``prod``        ``passage_text``: the question, else the first 2,000 characters of the answer.
``q+kw``        the question followed by its keywords ("…? Từ khoá: a; b").
``q+aN``        the question followed by the first N words of the answer.
``aN``          (no question) the first N words of the answer.
``multi-wN``    one vector for the question (when there is one) and one per window of N words of the answer
                (windows overlap by half).
``prod+w48``    the ``prod`` vector and one per 48-word answer window (``multi-w48`` plus the whole-answer vector
                of an answer-only entry).
``qq``          the question embedded with the "query: " prefix instead of "passage: " (e5's advice for
                symmetric, paraphrase-like matching); ``qq+kw``, ``qq+multi-w96`` likewise; ``prod+qq`` both
                vectors of the question.
``topic+q``     "topic / subtopic: question" (the sample KB of ``mix`` has topics; faq-val has none).

Query-side variants (the sparse leg always reads the whole cleaned message):

``whole``       the cleaned message (production).
``ask``         only its asking sentences (a question mark or an interrogative word), else the whole message.
``max(whole,ask)``, ``mean(whole,ask)``: both embedded, per entry the max / mean of the two cosines.
``sent-max``    each sentence of at least 4 words embedded; per entry the max cosine over them and the whole.

    MEDBOT_EVAL_DIR=/work/main/.medbot python -m bench.research.dense_ablation [--shapes questions,...] [--nodiac]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bench.retrieval_shapes import DiskCachedEmbedder, EvalQuery, Shape, build_shapes
from engine.embedding import passage_text
from engine.retrieval.fusion import (
    DENSE_WEIGHT,
    DENSE_WEIGHT_NO_DIACRITICS,
    LEARNED_DENSE_WEIGHT,
    LEARNED_MIN_WORDS,
    fuse,
)
from engine.retrieval.search import FUSION_METHOD
from engine.retrieval.sparse import SparseIndex
from engine.text import clean_query, fold, has_diacritics, split_words, strip_diacritics
from engine.types import KBEntry

N = 50  # candidates per leg (KBSearch.candidates)
K = 10

_SENTENCE = re.compile(r"[^.?!]*[.?!]?")
_ASKING = re.compile(
    r"\?|\b(?:khong|sao|gi|nao|bao nhieu|co nen|duoc khong|the nao|tai sao|vi sao|lam gi|co phai|bao lau)\b"
)


def sentences(text: str) -> list[str]:
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def asking(text: str) -> str:
    """The message's asking sentences, joined; the whole message when none is found."""
    picked = [s for s in sentences(text) if _ASKING.search(fold(s))]
    return " ".join(picked) if picked else text


def long_sentences(text: str, min_words: int = 4) -> list[str]:
    return [s for s in sentences(text) if len(s.split()) >= min_words]


# ---------------------------------------------------------------------------------------------- entry texts


def words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def windows(text: str, n: int) -> list[str]:
    w = text.split()
    if len(w) <= n:
        return [" ".join(w)] if w else []
    step = max(1, n // 2)
    return [" ".join(w[a : a + n]) for a in range(0, len(w) - n + step, step) if w[a : a + n]]


EntryTexts = Callable[[KBEntry], list[str]]
AS_QUERY = "\x00query\x00"  # marks an entry text embedded with the "query: " prefix (e5's symmetric use)


def _qq(e: KBEntry) -> list[str]:
    """The question embedded as a query (e5 recommends "query: " on both sides for paraphrase matching)."""
    q = e.question.strip()
    return [AS_QUERY + q] if q else [passage_text(e.question, e.answer)]


def _q_or(e: KBEntry, tail: str, sep: str = " ") -> list[str]:
    q = e.question.strip()
    if q and tail:
        return [f"{q}{sep}{tail}"]
    return [q or tail or passage_text(e.question, e.answer)]


ENTRY_VARIANTS: dict[str, EntryTexts] = {
    "prod": lambda e: [passage_text(e.question, e.answer)],
    "q+kw": lambda e: _q_or(e, "; ".join(e.keywords), " Từ khoá: "),
    "q+a32": lambda e: _q_or(e, words(e.answer, 32)),
    "q+a64": lambda e: _q_or(e, words(e.answer, 64)),
    "a64": lambda e: [words(e.answer, 64)] if not e.question.strip() else [e.question.strip()],
    "a128": lambda e: [words(e.answer, 128)] if not e.question.strip() else [e.question.strip()],
    "multi-w48": lambda e: ([e.question.strip()] if e.question.strip() else []) + windows(e.answer, 48),
    "multi-w96": lambda e: ([e.question.strip()] if e.question.strip() else []) + windows(e.answer, 96),
    "prod+w48": lambda e: [passage_text(e.question, e.answer), *windows(e.answer, 48)],
    "qq": _qq,
    "prod+qq": lambda e: [passage_text(e.question, e.answer), *(_qq(e) if e.question.strip() else [])],
    "qq+kw": lambda e: (
        [AS_QUERY + t for t in _q_or(e, "; ".join(e.keywords), " Từ khoá: ")]
        if e.question.strip()
        else _qq(e)
    ),
    "qq+multi-w96": lambda e: _qq(e) + (windows(e.answer, 96) if e.question.strip() else []),
    "topic+q": lambda e: (
        [f"{' / '.join(t for t in (e.topic, e.subtopic) if t)}: {e.question.strip()}"]
        if (e.topic or e.subtopic) and e.question.strip()
        else [passage_text(e.question, e.answer)]
    ),
}


# ---------------------------------------------------------------------------------------------- legs


@dataclass(slots=True)
class Prepared:
    """One shape's dev queries with their sparse leg done (as ``KBSearch`` does it)."""

    shape: Shape
    index: SparseIndex
    texts: list[str]  # the cleaned messages (what the sparse leg and the fusion read)
    ids: np.ndarray  # entry ids, position order
    gold: list[int]  # gold entry id per query
    dense_text: list[str]  # what the dense leg embeds (restored spelling for unmarked queries)
    marked: list[bool]
    sparse_top: list[list[tuple[int, float]]]
    sparse_all: np.ndarray  # (queries, entries) float32
    pos_of: dict[int, int] = field(default_factory=dict)  # entry id -> position

    def __post_init__(self) -> None:
        self.pos_of = {int(e): p for p, e in enumerate(self.ids)}


def prepare(shape: Shape, queries: Sequence[EvalQuery], strip: bool) -> Prepared:
    index = SparseIndex(shape.entries)
    restorer = index.build_restorer()
    dense_text, marked, tops, rows, texts = [], [], [], [], []
    for q in queries:
        text = clean_query(strip_diacritics(q.text) if strip else q.text)
        texts.append(text)
        scores = index.scores(text)
        rows.append(scores.astype(np.float32))
        tops.append(index.top(scores, N))
        mk = has_diacritics(text)
        marked.append(mk)
        dense_text.append(text if mk else restorer.restore(text))
    by_code = {e.code: e.id for e in shape.entries}
    return Prepared(
        shape,
        index,
        texts,
        np.array([e.id for e in shape.entries]),
        [by_code[q.gold] for q in queries],
        dense_text,
        marked,
        tops,
        np.vstack(rows),
    )


def entry_matrix(
    emb: DiskCachedEmbedder, entries: Sequence[KBEntry], fn: EntryTexts
) -> tuple[np.ndarray, np.ndarray]:
    """Vectors of every entry's texts (``AS_QUERY``-marked texts with the "query: " prefix, the others as
    passages) and the owning entry position of each row (sorted)."""
    texts, owner = [], []
    for pos, e in enumerate(entries):
        for t in fn(e) or [passage_text(e.question, e.answer)]:
            texts.append(t)
            owner.append(pos)
    uniq = list(dict.fromkeys(texts))
    as_query = [t for t in uniq if t.startswith(AS_QUERY)]
    as_passage = [t for t in uniq if not t.startswith(AS_QUERY)]
    vec = dict(zip(as_passage, emb.passage_vectors(as_passage), strict=True))
    if as_query:
        vec |= dict(zip(as_query, emb.query_vectors([t[len(AS_QUERY) :] for t in as_query]), strict=True))
    return np.stack([vec[t] for t in texts]), np.array(owner)


def entry_scores(sims: np.ndarray, owner: np.ndarray, n_entries: int) -> np.ndarray:
    """(queries, vectors) cosines -> (queries, entries): max over each entry's vectors."""
    if len(owner) == n_entries:
        return sims
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    return np.maximum.reduceat(sims, starts, axis=1)


QUERY_VARIANTS = ("whole", "ask", "max(whole,ask)", "mean(whole,ask)", "sent-max")


def dense_matrix(
    emb: DiskCachedEmbedder, prep: Prepared, vecs: np.ndarray, owner: np.ndarray, qv: str
) -> np.ndarray:
    n = len(prep.ids)

    def scores_of(texts: list[str]) -> np.ndarray:
        return entry_scores(emb.query_vectors(texts) @ vecs.T, owner, n)

    if qv == "whole":
        return scores_of(prep.dense_text)
    if qv == "ask":
        return scores_of([asking(t) for t in prep.dense_text])
    if qv in ("max(whole,ask)", "mean(whole,ask)"):
        a, b = scores_of(prep.dense_text), scores_of([asking(t) for t in prep.dense_text])
        return np.maximum(a, b) if qv.startswith("max") else (a + b) / 2
    if qv == "sent-max":
        whole = scores_of(prep.dense_text)
        parts, qowner = [], []
        for i, t in enumerate(prep.dense_text):
            ss = long_sentences(t)
            if len(ss) > 1:
                parts += ss
                qowner += [i] * len(ss)
        if parts:
            s = scores_of(parts)
            for i, row in zip(qowner, s, strict=True):
                np.maximum(whole[i], row, out=whole[i])
        return whole
    raise ValueError(qv)


def fused_ids(prep: Prepared, qi: int, dense: list[tuple[int, float]]) -> list[int]:
    """The top K of ``KBSearch._search_one``'s fusion (hybrid): "learned" for messages of
    ``LEARNED_MIN_WORDS`` words or more, else "score" with the lower dense weight for unmarked messages."""
    text, sparse = prep.texts[qi], prep.sparse_top[qi]
    pos_of = prep.pos_of
    extra = {eid: float(prep.sparse_all[qi, pos_of[eid]]) for eid, _ in dense}
    long_message = len(split_words(fold(text))) >= LEARNED_MIN_WORDS
    method = FUSION_METHOD if (long_message or FUSION_METHOD != "learned") else "score"
    coverage: dict[int, float] = {}
    if method == "learned":
        weight = LEARNED_DENSE_WEIGHT
        cands = sorted({e for e, _ in sparse} | {e for e, _ in dense})
        values = prep.index.informative_coverage([pos_of[e] for e in cands], fold(text))
        coverage = {e: float(v) for e, v in zip(cands, values, strict=True)}
    else:
        weight = DENSE_WEIGHT if has_diacritics(text) else DENSE_WEIGHT_NO_DIACRITICS
    fused = fuse(sparse, dense, dense_weight=weight, sparse_extra=extra, method=method, coverage=coverage)
    return [f.entry_id for f in fused[:K]]


def evaluate(prep: Prepared, dense: np.ndarray) -> dict[str, float]:
    """P@1 / hit@10 of the dense leg alone and of the production fusion."""
    d1 = dh = f1 = fh = 0
    for qi, gold in enumerate(prep.gold):
        row = dense[qi]
        part = np.argpartition(-row, N - 1)[:N]
        order = part[np.argsort(-row[part], kind="stable")]
        dlist = [(int(prep.ids[p]), float(row[p])) for p in order]
        dtop = [e for e, _ in dlist[:K]]
        d1 += dtop[0] == gold
        dh += gold in dtop
        fused = fused_ids(prep, qi, dlist)
        f1 += fused[0] == gold
        fh += gold in fused
    n = max(1, len(prep.gold))
    return {"dense_p1": d1 / n, "dense_hit": dh / n, "fused_p1": f1 / n, "fused_hit": fh / n}


# Which variants are worth their embedding cost on which shape (an entry variant that gives a shape the same
# texts as "prod" is skipped).
PLAN: dict[str, tuple[list[str], list[str]]] = {
    "questions": (["prod", "qq", "prod+qq"], list(QUERY_VARIANTS)),
    "questions_kw": (["prod", "q+kw", "qq+kw"], ["whole", "ask", "max(whole,ask)"]),
    "noisy_kw": (["prod", "q+kw", "qq+kw"], ["whole", "max(whole,ask)"]),
    "answers_only": (["prod", "a64", "a128", "multi-w48", "multi-w96", "prod+w48"], ["whole"]),
    "full": (
        ["prod", "qq", "qq+multi-w96", "q+kw", "q+a32", "q+a64", "multi-w48", "multi-w96", "prod+w48"],
        ["whole", "max(whole,ask)"],
    ),
    "mix": (["prod", "qq", "q+kw", "q+a32", "topic+q", "multi-w96"], ["whole", "max(whole,ask)"]),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="questions,questions_kw,noisy_kw,answers_only,full,mix")
    ap.add_argument("--entry", default="", help="only these entry variants (comma-separated)")
    ap.add_argument("--query", default="", help="only these query variants")
    ap.add_argument(
        "--nodiac", default="questions", help="shapes also run with queries folded to no diacritics"
    )
    ap.add_argument("--split", default="dev")
    args = ap.parse_args()
    emb = DiskCachedEmbedder()
    built = build_shapes()
    nodiac = set(filter(None, args.nodiac.split(",")))
    results = []
    for name in args.shapes.split(","):
        shape = built[name]
        qs = shape.queries[args.split]
        preps = {"typed": prepare(shape, qs, False)}
        if name in nodiac:
            preps["nodiac"] = prepare(shape, qs, True)
        evs, qvs = PLAN[name]
        evs = [v for v in evs if not args.entry or v in args.entry.split(",")]
        qvs = [v for v in qvs if not args.query or v in args.query.split(",")]
        base_texts = [ENTRY_VARIANTS["prod"](e) for e in shape.entries]
        for ev in evs:
            texts = [ENTRY_VARIANTS[ev](e) for e in shape.entries]
            if ev != "prod" and texts == base_texts:
                continue
            t = time.perf_counter()
            vecs, owner = entry_matrix(emb, shape.entries, ENTRY_VARIANTS[ev])
            for qv in qvs:
                row: dict[str, object] = {"shape": name, "entry": ev, "query": qv, "n": len(qs)}
                for tag, prep in preps.items():
                    m = evaluate(prep, dense_matrix(emb, prep, vecs, owner, qv))
                    row.update({(k if tag == "typed" else f"{k}_nodiac"): round(v, 4) for k, v in m.items()})
                if "fused_p1_nodiac" in row:
                    row["fused_nodiac_loss"] = round(
                        float(row["fused_p1"]) - float(row["fused_p1_nodiac"]), 4
                    )  # type: ignore[arg-type]
                results.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
            print(
                f"# {name}/{ev}: {len(vecs)} vectors, {time.perf_counter() - t:.0f}s",
                file=sys.stderr,
                flush=True,
            )
    print(format_rows(results))
    return 0


def format_rows(rows: list[dict[str, object]]) -> str:
    out = [
        "| shape | entry text | dense query | dense P@1 / hit@10 | fused P@1 / hit@10 | fused no-diac loss |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        loss = f"{r['fused_nodiac_loss']:.3f}" if "fused_nodiac_loss" in r else ""
        out.append(
            f"| {r['shape']} | {r['entry']} | {r['query']} | {r['dense_p1']:.3f} / {r['dense_hit']:.3f} | "
            f"{r['fused_p1']:.3f} / {r['fused_hit']:.3f} | {loss} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
