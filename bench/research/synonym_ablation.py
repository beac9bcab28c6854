"""Synonym lexicon ablation for issue 21 (not the product): does expanding the sparse leg with Vietnamese
health synonyms raise recall on the DEV half of the KB shapes of ``bench/retrieval_shapes.py``?

Hypothesis: patients and FAQ writers name one thing in different words ("tiểu đường" / "đái tháo đường",
"răng khôn" / "răng số 8", "đau bao tử" / "đau dạ dày"), so a lexicon of equivalent terms should bring the
right entry into the sparse leg's candidates. The lexicon is data (``bench/research/synonyms_vi.toml``,
~560 groups written from general medical-language knowledge, not from the evaluation queries).

``SynonymLexicon.expand`` finds the lexicon's terms in a message (whole words; with marks when the message
has them, on folded words otherwise, where one-syllable terms are too ambiguous to trigger — "lao" is also
"lão", "lào" — and only multi-syllable terms and capitalised abbreviations do; longest match first, one
match per word) and returns the other terms of their groups, folded. ``ExpandingSparseIndex`` is the
production ``SparseIndex`` with those terms added to the query vector at ``synonym_weight`` x idf (each phrase
analysed alone, so no bigram spans two phrases), then L2-normalised as usual.

Variants of the sparse leg, each a full (queries x entries) score matrix fused with the cached dense leg
exactly as ``retrieval_ranking_ablation.final`` (what ``KBSearch`` does):

- ``base``: the production sparse leg (the cached matrices of ``retrieval_ranking_ablation``);
- ``query w``: query expansion at weight w;
- ``index w``: each entry gets a "synonyms" field (the expansion of its question and keywords, of its answer
  when it has neither) at field weight w; queries unchanged;
- ``index w + query w'``: both.

Prints per query set: sparse-leg P@1 / hit@10 / hit@50, fused P@1 / hit@10, the share of queries the lexicon
expands, and the no-diacritics loss (fused P@1 of ``questions`` minus ``questions~nodiac``). Matrices are
cached in ``.medbot/eval-cache/syn-<lexicon hash>-<variant>-<set>.npy``. Results and the decision:
``bench/retrieval_shapes_results.md`` ("Synonym lexicon").

    python -m bench.research.synonym_ablation [--variants base,query0.3] [--exclude TABLES] [--head N]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from bench.research.retrieval_ranking_ablation import Counts, Data, final, load, title_coverage
from bench.retrieval_shapes import CACHE, DiskCachedEmbedder, build_shapes
from engine.retrieval.sparse import FIELD_WEIGHTS, SparseIndex, _Family, entry_fields
from engine.text import fold, has_diacritics, nfc, split_words
from engine.types import KBEntry

SYNONYMS_FILE = Path(__file__).with_name("synonyms_vi.toml")
SHAPES = ("questions", "questions_kw", "noisy_kw", "answers_only", "full", "mix")
QUESTION_STYLE = ("questions", "questions_kw", "noisy_kw")
VARIANTS = ("base", "query0.3", "query0.5", "query1.0", "index0.3", "index0.6", "index0.3+query0.5")
_WORD = re.compile(r"\w+", re.UNICODE)


def _tokens(s: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(nfc(s).lower()))


class SynonymLexicon:
    """Groups of equivalent terms, indexed by first word for phrase lookup in a message."""

    def __init__(self, groups: Iterable[Iterable[str]]) -> None:
        self.groups: list[tuple[str, ...]] = []  # folded terms of each group, in written order
        self._marked: dict[str, list[tuple[tuple[str, ...], int]]] = {}  # first token -> (tokens, group)
        self._folded: dict[str, list[tuple[tuple[str, ...], int]]] = {}
        for terms in groups:
            gi = len(self.groups)
            folded_terms: list[str] = []
            for term in terms:
                toks = _tokens(term)
                if not toks:
                    continue
                folded = tuple(fold(t) for t in toks)
                if " ".join(folded) not in folded_terms:
                    folded_terms.append(" ".join(folded))
                self._marked.setdefault(toks[0], []).append((toks, gi))
                abbreviation = len(toks) == 1 and (term.isupper() or any(c.isdigit() for c in term))
                if len(toks) >= 2 or abbreviation:
                    self._folded.setdefault(folded[0], []).append((folded, gi))
            self.groups.append(tuple(folded_terms))

    def __len__(self) -> int:
        return len(self.groups)

    def matched_groups(self, text: str) -> list[int]:
        """Indices of the groups one of whose terms occurs in ``text`` (in order of occurrence)."""
        marked = has_diacritics(text)
        toks = _tokens(text)
        if not marked:
            toks = tuple(fold(t) for t in toks)
        table = self._marked if marked else self._folded
        hits = [
            (i, len(phrase), gi)
            for i, tok in enumerate(toks)
            for phrase, gi in table.get(tok, ())
            if toks[i : i + len(phrase)] == phrase
        ]
        # Longest matches first, a word in one match only: in "bi dai thao duong" ("bị đái tháo đường" without
        # marks) "dai thao duong" wins over "bi dai" ("bí đái"); in "hạ sốt" the group of "sốt" is not triggered.
        hits.sort(key=lambda h: (-h[1], h[0]))
        taken: set[int] = set()
        spans: set[tuple[int, int]] = set()
        for i, n, _ in hits:
            if (i, n) not in spans and not taken.intersection(range(i, i + n)):
                spans.add((i, n))
                taken.update(range(i, i + n))
        found: list[int] = []
        for i, n, gi in sorted(hits):
            if (i, n) in spans and gi not in found:
                found.append(gi)
        return found

    def expand(self, text: str) -> list[str]:
        """The folded terms the groups found in ``text`` add: those the folded text lacks as words."""
        folded = f" {' '.join(_WORD.findall(fold(text)))} "
        out: list[str] = []
        for gi in self.matched_groups(text):
            for term in self.groups[gi]:
                if f" {term} " not in folded and term not in out:
                    out.append(term)
        return out


def load_lexicon(exclude: Sequence[str] = (), head: int = 0, path: Path = SYNONYMS_FILE) -> SynonymLexicon:
    """The lexicon of a file without the tables ``exclude``; ``head``: only each group's first terms."""
    with open(path, "rb") as fh:
        tables = tomllib.load(fh)
    return SynonymLexicon(
        g[: head or None] for name, t in tables.items() if name not in exclude for g in t["groups"]
    )


class ExpandingSparseIndex(SparseIndex):
    """The production sparse leg with query expansion: the synonym terms of a query, each weighted
    ``synonym_weight`` x idf, join its vector before the L2 normalisation."""

    def __init__(
        self,
        entries: Sequence[KBEntry],
        lexicon: SynonymLexicon,
        synonym_weight: float = 0.5,
        **kwargs: object,
    ) -> None:
        self.lexicon = lexicon
        self.synonym_weight = 0.0  # the build's own scoring (near-miss level) stays unexpanded
        self._extra: list[str] = []
        super().__init__(entries, **kwargs)  # type: ignore[arg-type]
        self.synonym_weight = synonym_weight

    def scores(self, query: str) -> np.ndarray:
        self._extra = self.lexicon.expand(query) if self.synonym_weight > 0 else []
        try:
            return super().scores(query)
        finally:
            self._extra = []

    def query_vector(self, family: _Family, folded: str) -> tuple[np.ndarray, np.ndarray]:
        cols, vals = super().query_vector(family, folded)
        if not self._extra:
            return cols, vals
        parts = [self._query_terms(family, phrase) for phrase in self._extra]  # n-grams within a phrase only
        xcols = np.unique(np.concatenate([p[0][p[1]] for p in parts] or [np.zeros(0, dtype=np.int64)]))
        xcols = np.setdiff1d(xcols, cols)
        if not len(xcols):
            return cols, vals
        # Recover the query's unnormalised weights: query_vector returned them divided by their norm.
        pos, present, tf = self._query_terms(family, folded)
        raw = dict(
            zip(
                pos[present].tolist(),
                ((1.0 + np.log(tf[present])) * family.idf[pos[present]]).tolist(),
                strict=True,
            )
        )
        base = np.array([raw[c] for c in cols.tolist()], dtype=np.float32)
        allv = np.concatenate([base, self.synonym_weight * family.idf[xcols]])
        return np.concatenate([cols, xcols]), (allv / np.linalg.norm(allv)).astype(np.float32)


class Lite:
    """What ``final`` reads besides the legs: message length and informative title coverage."""

    def __init__(self, d: Data) -> None:
        self.words = np.array([len(split_words(fold(t))) for t in d.texts])
        self.cov_strict = title_coverage(d, Counts(d, ("syllable",)), shift=1.0)


def synonym_fields(lex: SynonymLexicon) -> Callable[[KBEntry], dict[str, str]]:
    def fields(e: KBEntry) -> dict[str, str]:
        out = entry_fields(e)
        source = (
            f"{e.question} ; {' ; '.join(e.keywords)}" if (e.question.strip() or e.keywords) else e.answer
        )
        out["synonyms"] = " ; ".join(lex.expand(source))
        return out

    return fields


def parse(variant: str) -> tuple[float, float]:
    """(index field weight, query weight) of a variant name."""
    iw = qw = 0.0
    for part in variant.split("+"):
        if part.startswith("index"):
            iw = float(part[5:])
        elif part.startswith("query"):
            qw = float(part[5:])
    return iw, qw


def sparse_matrix(
    d: Data,
    variant: str,
    lex: SynonymLexicon,
    tag: str,
    indexes: dict[tuple[str, float], ExpandingSparseIndex],
) -> np.ndarray:
    if variant == "base":
        return d.sparse
    path = CACHE / f"syn-{tag}-{variant}-{d.name}.npy"
    if path.is_file():
        return np.load(path)
    iw, qw = parse(variant)
    key = (d.shape.name, iw)
    index = indexes.get(key)
    if index is None:
        extra: dict[str, object] = {}
        if iw > 0:
            extra = {"fields": synonym_fields(lex), "field_weights": {**FIELD_WEIGHTS, "synonyms": iw}}
        index = indexes[key] = ExpandingSparseIndex(d.shape.entries, lex, **extra)
    index.synonym_weight = qw
    m = np.vstack([index.scores(t) for t in d.texts]).astype(np.float32)
    np.save(path, m)
    return m


def ranks(d: Data, scores: np.ndarray) -> np.ndarray:
    """Rank of the gold entry per query (ties broken by position, as stable sorts do)."""
    g = scores[np.arange(len(d.gold)), d.gold]
    better = (scores > g[:, None]).sum(1)
    ties = ((scores == g[:, None]) & (np.arange(scores.shape[1])[None, :] < d.gold[:, None])).sum(1)
    return better + ties + 1


def bridges(d: Data, lex: SynonymLexicon) -> np.ndarray:
    """Per query: whether a term the lexicon adds occurs in the gold entry's question (the lexicon can help)."""
    out = []
    for text, gold in zip(d.texts, d.gold, strict=True):
        q = f" {' '.join(split_words(fold(d.shape.entries[gold].question)))} "
        out.append(any(f" {t} " in q for t in lex.expand(text)))
    return np.array(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument(
        "--exclude",
        default="",
        help="comma-separated tables of the lexicon to leave out "
        "(the generic ones: tests_procedures,body_symptoms)",
    )
    ap.add_argument("--head", type=int, default=0, help="keep only the first N terms of each group")
    args = ap.parse_args()
    exclude = [t for t in args.exclude.split(",") if t]
    lex = load_lexicon(exclude, args.head)
    tag = hashlib.sha256(SYNONYMS_FILE.read_bytes() + f"{args.exclude}/{args.head}".encode()).hexdigest()[:8]
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    names = args.shapes.split(",")
    data = [load(built[n], embedder) for n in names]
    if "questions" in names:
        data.append(load(built["questions"], embedder, strip=True))
    lites = {d.name: Lite(d) for d in data}
    print(f"lexicon {tag}: {len(lex)} groups", flush=True)
    for d in data:
        share = np.mean([bool(lex.expand(t)) for t in d.texts])
        print(f"  {d.name}: {len(d.texts)} queries, {share:.2f} expanded", flush=True)
    print(
        f"{'variant':<20}{'set':<20}{'sparse P@1':>11}{'hit@10':>8}{'hit@50':>8}{'fused P@1':>11}{'hit@10':>8}"
    )
    for variant in args.variants.split(","):
        indexes: dict[tuple[str, float], ExpandingSparseIndex] = {}
        fused_p1 = {}
        qs_hit = []
        for d in data:
            s = sparse_matrix(d, variant, lex, tag, indexes)
            rs = ranks(d, s)
            rf = ranks(d, final(d, lites[d.name], s))  # type: ignore[arg-type]
            fused_p1[d.name] = float(np.mean(rf == 1))
            if d.name in QUESTION_STYLE:
                qs_hit.append(float(np.mean(rf <= 10)))
            print(
                f"{variant:<20}{d.name:<20}{np.mean(rs == 1):>11.3f}{np.mean(rs <= 10):>8.3f}"
                f"{np.mean(rs <= 50):>8.3f}{np.mean(rf == 1):>11.3f}{np.mean(rf <= 10):>8.3f}",
                flush=True,
            )
            if variant != "base" and d.name == "questions":
                r0, br = ranks(d, d.sparse), bridges(d, lex)
                for label, m in (("bridged", br), ("not bridged", ~br)):
                    print(
                        f"{'':<20}  questions, {label} ({int(m.sum())} queries): sparse rank improved "
                        f"{int((rs[m] < r0[m]).sum())}, worse {int((rs[m] > r0[m]).sum())}; "
                        f"sparse hit@50 {int((r0[m] <= 50).sum())} -> {int((rs[m] <= 50).sum())}",
                        flush=True,
                    )
        loss = fused_p1.get("questions", np.nan) - fused_p1.get("questions~nodiac", np.nan)
        print(
            f"{variant:<20}{'SUMMARY':<20} question-style fused hit@10 mean {np.mean(qs_hit):.4f}; "
            f"no-diacritics loss {loss:.4f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
