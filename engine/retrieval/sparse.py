"""The sparse (lexical) leg: an in-memory TF-IDF index of one role's KB entries.

Every entry is indexed in folded form (lowercase, no diacritics, đ→d), so a query typed without marks matches
as well as one with them. Feature families, each L2-normalised on its own, are scored as a weighted sum of
cosines: syllables and syllable bigrams (bigrams stand in for Vietnamese two-syllable words). Normalising the
two apart keeps the many bigrams of a long message from drowning the unigram evidence (on faq-val: P@1 0.563
vs 0.555 for one joint 1-2-gram space). Character 3-5-grams are available ("char" family) but are off by
default: they lowered P@1 on faq-val (0.543 at weight 0.2) and cost 2-3x the time and memory on long answers.

Both use sublinear tf (1 + log tf) and smoothed idf, the BM25-like saturation that keeps a long chatty message
from being dominated by its most repeated word. Fields are weighted question > keywords > topic/subtopic >
answer by mixing their separately normalised vectors before the final normalisation, so an entry with a blank
question is represented by its other fields alone and is still found by its answer.

A very long query is cut to its ``max_query_terms`` heaviest features per family before scoring (the dropped
terms are frequent ones with long posting lists); the cap is high because cutting typical messages hurts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize
from sklearn.utils import murmurhash3_32

from engine.text import (
    DiacriticRestorer,
    char_ngrams,
    fold,
    function_word,
    has_diacritics,
    ngrams,
    spelling,
    split_words,
)
from engine.types import KBEntry

# Relative weight of each field in an entry's vector (question strongest, answer weakest).
FIELD_WEIGHTS: dict[str, float] = {"question": 1.0, "keywords": 0.6, "topic": 0.3, "answer": 0.35}
# Share of the score from syllable n-grams vs character n-grams.
FAMILY_WEIGHTS: dict[str, float] = {"syllable": 0.5, "bigram": 0.5}


def entry_fields(entry: KBEntry) -> dict[str, str]:
    """The folded text of each weighted field of an entry."""
    return {
        "question": fold(entry.question),
        "keywords": fold(" ; ".join(entry.keywords)),
        "topic": fold(f"{entry.topic} {entry.subtopic}"),
        "answer": fold(f"{entry.answer} {entry.explanation}"),
    }


def spelling_fields(entry: KBEntry) -> list[str]:
    """The entry's marked texts a spelling restorer learns from (``DiacriticRestorer``, ``NearSpelling``): its
    question, keywords, topic and answer, the empty ones left out."""
    return [f for f in (entry.question, " ; ".join(entry.keywords), entry.topic, entry.answer) if f]


def entry_title(entry: KBEntry, answer_words: int = 40) -> str:
    """What an entry is about in a few words: its question, else its keywords, else the start of its answer."""
    if entry.question.strip():
        return entry.question
    if entry.keywords:
        return " ; ".join(entry.keywords)
    return " ".join(f"{entry.answer} {entry.explanation}".split()[:answer_words])


# Analyzers take already folded text.
def _syllable_analyzer(folded: str) -> list[str]:
    return split_words(folded)


def _bigram_analyzer(folded: str) -> list[str]:
    return list(ngrams(split_words(folded), 2, 2))


def _char_analyzer(folded: str) -> list[str]:
    return char_ngrams(folded, 3, 5)


_ANALYZERS = {"syllable": _syllable_analyzer, "bigram": _bigram_analyzer, "char": _char_analyzer}
# Features are hashed (murmurhash3, stable across processes) instead of kept in a vocabulary: a 100k-entry KB
# with long answers has millions of distinct bigrams, and a dict of them cost ~600 MB and half the build time.
# Sizes keep collisions rare for KBs of that order.
_HASH_BITS = {"syllable": 20, "bigram": 22, "char": 22}


# Above this many postings for one query the column product goes through scipy (measured crossover ~10k).
_DIRECT_MAX_POSTINGS = 8_000


def hash_column(term: str, n_features: int) -> int:
    """The column HashingVectorizer(alternate_sign=False) gives ``term``: signed murmurhash3 of its UTF-8
    bytes, seed 0, absolute value modulo ``n_features`` (scikit-learn's ``_hashing_fast``, edge case included).
    Queries hash their few terms with this directly: the vectorizer's per-call validation and sparse-matrix
    construction cost ~10x more than the hashing itself."""
    h = murmurhash3_32(term, seed=0)
    if h == -2147483648:
        return (2147483647 - (n_features - 1)) % n_features
    return abs(h) % n_features


@dataclass(slots=True)
class _Family:
    analyzer: Callable[[str], list[str]]
    n_features: int
    columns: np.ndarray  # sorted hashed feature ids present in the KB; matrix column j is columns[j]
    idf: np.ndarray  # per matrix column
    matrix: sp.csc_matrix  # entries x features, rows L2-normalised; CSC so a query gathers its columns
    weight: float


def _sublinear(m: sp.csr_matrix) -> sp.csr_matrix:
    m = m.astype(np.float32)
    np.log(m.data, out=m.data)
    m.data += 1.0
    return m


class SparseIndex:
    """TF-IDF index over the folded fields of a list of entries; positions refer to ``entries``.

    Entries are KB entries by default; any documents with an integer ``id`` can be indexed by passing
    ``fields`` (a document → {field name: folded text} function) with ``field_weights`` naming the same
    fields (guideline chunks: ``engine.verify.search``)."""

    def __init__(
        self,
        entries: Sequence[Any],
        *,
        field_weights: dict[str, float] | None = None,
        family_weights: dict[str, float] | None = None,
        max_query_terms: int = 400,
        fields: Callable[[Any], dict[str, str]] = entry_fields,
    ) -> None:
        t0 = time.perf_counter()
        self.entries = list(entries)
        self.ids = np.array([e.id for e in self.entries], dtype=np.int64)
        self.position = {int(i): p for p, i in enumerate(self.ids)}
        self.max_query_terms = max_query_terms
        fw = {name: w for name, w in (field_weights or FIELD_WEIGHTS).items() if w > 0}
        n = len(self.entries)
        texts = [fields(e) for e in self.entries]
        # All fields of all entries as one corpus of documents, field-major: rows [f * n, (f + 1) * n).
        docs = [f[name] for name in fw for f in texts]
        self.families: dict[str, _Family] = {}
        for name, weight in (family_weights or FAMILY_WEIGHTS).items():
            if weight <= 0 or n == 0:
                continue
            hasher = HashingVectorizer(
                analyzer=_ANALYZERS[name],
                n_features=2 ** _HASH_BITS[name],
                alternate_sign=False,
                norm=None,
                dtype=np.float32,
            )
            counts = hasher.transform(docs).tocsr()
            blocks = [counts[i * n : (i + 1) * n] for i in range(len(fw))]
            # Document frequency counts entries (any field), smoothed as scikit-learn's TfidfVectorizer does.
            present = blocks[0].copy()
            for block in blocks[1:]:
                present = present + block
            df = np.bincount(present.indices, minlength=counts.shape[1])
            # Keep only the hashed columns some entry uses, so the matrix is as narrow as a vocabulary.
            columns = np.flatnonzero(df).astype(np.int32)
            if len(columns) == 0:  # e.g. no bigram in a KB of one-word texts: the family cannot score
                continue
            idf = (np.log((1 + n) / (1 + df[columns])) + 1).astype(np.float32)
            blocks = [b[:, columns] for b in blocks]
            idf_diag = sp.diags(idf)
            mixed = None
            for block, fweight in zip(blocks, fw.values(), strict=True):
                part = normalize(_sublinear(block) @ idf_diag) * fweight
                mixed = part if mixed is None else mixed + part
            matrix = normalize(mixed).tocsc().astype(np.float32)
            self.families[name] = _Family(
                _ANALYZERS[name], 2 ** _HASH_BITS[name], columns, idf, matrix, weight
            )
        # Every written form (``engine.text.spelling``) of the KB's words: a word typed with marks that the KB
        # only has under another spelling of the same folded form ("trĩ" in a KB that has "trị") is a word
        # the KB does not use (``misspelled``); KB entries only.
        self.spellings: frozenset[str] = self._spellings() if fields is entry_fields else frozenset()
        self._titles: dict[int, dict[str, float]] = {}  # position -> title syllable weights (title_coverage)
        self._phrases: dict[
            int, list[tuple[dict[str, float], frozenset[str]]]
        ] = {}  # position -> keyword phrase weights (keyword_coverage)
        self._title_words: dict[str, set[int]] | None = (
            None  # folded title word -> positions (keyword_coverage)
        )
        # Entries x syllable columns: each title's distinct syllables weighted by idf - 1, rows summing to 1
        # (``informative_coverage``); built with the index so fusion reads ~100 rows per message, not dicts.
        self._title_matrix = self._informative_titles() if fields is entry_fields else None
        # The KB's own "near miss" level, a calibration reference (engine.retrieval.calibration); KB entries only.
        self.null_sparse = self._near_miss_level() if self.families and fields is entry_fields else 0.0
        self.build_seconds = time.perf_counter() - t0
        # Marked spellings of the KB's own words, to restore unmarked queries for the dense leg; built apart
        # (``build_restorer``, seconds at 100k entries) so the index serves before it is ready.
        self.restorer: DiacriticRestorer | None = None

    def _spellings(self) -> frozenset[str]:
        words: set[str] = set()
        for e in self.entries:
            for text in (e.question, " ".join(e.keywords), e.topic, e.subtopic, e.answer, e.explanation):
                words.update(split_words(text.lower()))
        return frozenset(spelling(w) for w in words if has_diacritics(w))

    def _near_miss_level(self, sample: int = 64) -> float:
        """Median, over up to ``sample`` entries spread through the KB, of the best sparse score the entry's
        own title (``entry_title``) gets from the OTHER entries: how close unrelated entries of this KB come
        to each other (near-duplicate questions, a shared answer template, one topic) — the level a message
        about something the KB lacks reaches."""
        n = len(self.entries)
        if n < 2:
            return 0.0
        best = []
        for pos in np.unique(np.linspace(0, n - 1, min(sample, n)).astype(int)):
            title = entry_title(self.entries[pos])
            if not title.strip():
                continue
            scores = self.scores(title)
            scores[pos] = 0.0
            best.append(float(scores.max()))
        return float(np.median(best)) if best else 0.0

    def _informative_titles(self) -> sp.csr_matrix | None:
        fam = self.families.get("syllable")
        if fam is None:
            return None
        hasher = HashingVectorizer(
            analyzer=_syllable_analyzer,
            n_features=fam.n_features,
            alternate_sign=False,
            norm=None,
            dtype=np.float32,
        )
        counts = hasher.transform([fold(entry_title(e)) for e in self.entries]).tocsr()
        counts.sum_duplicates()
        cols = counts.indices.astype(np.int64)
        pos = np.minimum(np.searchsorted(fam.columns, cols), len(fam.columns) - 1)
        known = fam.columns[pos] == cols
        data = np.where(known, np.maximum(fam.idf[pos] - 1.0, 0.0), 0.0).astype(np.float32)
        matrix = sp.csr_matrix(
            (data, pos.astype(np.int32), counts.indptr), shape=(len(self.entries), len(fam.columns))
        )
        matrix.eliminate_zeros()
        return normalize(matrix, norm="l1")

    def informative_coverage(self, positions: Sequence[int], folded: str) -> np.ndarray:
        """For the entries at ``positions``: ``title_coverage(pos, words of folded, informative=True)``, from the
        matrix built with the index (a message's fusion candidates in a fraction of a millisecond)."""
        out = np.zeros(len(positions), dtype=np.float32)
        fam = self.families.get("syllable")
        if self._title_matrix is None or fam is None or not len(positions):
            return out
        pos, present, _ = self._query_terms(fam, folded)
        cols = np.unique(pos[present])
        if not len(cols):
            return out
        query = np.zeros(self._title_matrix.shape[1], dtype=np.float32)
        query[cols] = 1.0
        return np.asarray(self._title_matrix[np.asarray(positions)] @ query, dtype=np.float32).ravel()

    def build_restorer(self) -> DiacriticRestorer:
        self.restorer = DiacriticRestorer(f for e in self.entries for f in spelling_fields(e))
        return self.restorer

    def __len__(self) -> int:
        return len(self.entries)

    def nbytes(self) -> int:
        """Memory of the matrices and idf vectors."""
        total = 0
        for fam in self.families.values():
            m = fam.matrix
            total += m.data.nbytes + m.indices.nbytes + m.indptr.nbytes + fam.idf.nbytes + fam.columns.nbytes
        return total

    @staticmethod
    def _query_terms(family: _Family, folded: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each distinct hashed term of a folded text in one family: its matrix column, whether any
        entry has it (else the column is meaningless), and its count."""
        counts: dict[int, int] = {}
        for term in family.analyzer(folded):
            col = hash_column(term, family.n_features)
            counts[col] = counts.get(col, 0) + 1
        ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tf = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        pos = np.minimum(np.searchsorted(family.columns, ids), len(family.columns) - 1)
        return pos, family.columns[pos] == ids, tf

    def query_vector(self, family: _Family, folded: str) -> tuple[np.ndarray, np.ndarray]:
        """Feature columns and L2-normalised weights of a folded query in one family."""
        pos, present, tf = self._query_terms(family, folded)  # features no entry has cannot score
        cols, counts = pos[present], tf[present]
        if len(cols) == 0:
            return cols, counts
        vals = (1.0 + np.log(counts)) * family.idf[cols]
        if len(vals) > self.max_query_terms:
            keep = np.argpartition(vals, -self.max_query_terms)[-self.max_query_terms :]
            cols, vals = cols[keep], vals[keep]
        return cols, (vals / np.linalg.norm(vals)).astype(np.float32)

    def unknown_count(self, query: str) -> int:
        """How many distinct syllables of the query no entry of this KB contains (a word like "gút" in a
        dental KB), counting the ``misspelled`` ones: a sign the message is about something the KB does not
        cover."""
        fam = self.families.get("syllable")
        if fam is None:
            return 0
        _, present, _ = self._query_terms(fam, fold(query))
        return int(np.count_nonzero(~present)) - len(self.chat_words(query)) + len(self.misspelled(query))

    def chat_words(self, query: str) -> set[str]:
        """The folded syllables of the query that no entry uses and that it writes as function words
        (``engine.text.FUNCTION_WORDS``: "ạ", "hoài", "em" in a KB without them): not counted as unknown."""
        said = {fold(w) for w in split_words(query) if function_word(w)}
        if not said:
            return set()
        return {w for w, v in self.syllable_weights(" ".join(said)).items() if v == 0}

    def misspelled(self, query: str) -> set[str]:
        """The folded syllables of the query that it writes with marks only in spellings no entry uses, while
        some entry has the folded form: "trĩ" (haemorrhoids) in a dental KB that has "trị" (treatment), "chân"
        (leg) where the KB only has "chẩn" (diagnosis). Matching folded text hides such words; a word typed
        without marks is not judged."""
        if not self.spellings:
            return set()
        forms: dict[str, bool] = {}  # folded -> some marked form of it in the query is a KB spelling
        for word in split_words(query):
            if has_diacritics(word) and not function_word(word):
                folded = fold(word)
                forms[folded] = forms.get(folded, False) or spelling(word) in self.spellings
        weights = self.syllable_weights(" ".join(forms)) if forms else {}
        return {w for w, known in forms.items() if not known and weights.get(w, 0.0) > 0}

    def syllable_weights(self, folded: str) -> dict[str, float]:
        """Each distinct syllable of a folded text with its idf in this KB (0 for a syllable no entry has)."""
        fam = self.families.get("syllable")
        words = set(split_words(folded))
        if fam is None or not words:
            return dict.fromkeys(words, 0.0)
        out = {}
        for word in words:
            col = hash_column(word, fam.n_features)
            pos = min(int(np.searchsorted(fam.columns, col)), len(fam.columns) - 1)
            out[word] = float(fam.idf[pos]) if fam.columns[pos] == col else 0.0
        return out

    def keyword_coverage(self, pos: int, words: set[str]) -> float:
        """The best idf-weighted share of one of the entry's keyword phrases found in ``words`` (a query's),
        counting only the phrases that name the entry in words its title does not use: a clinic writes them as
        the other names of the entry's subject ("nhiễm toan ceton" for "Đường huyết rất cao, mệt lả, buồn nôn
        có nguy hiểm không?", "em bé đánh răng" for "Trẻ mấy tuổi thì bắt đầu chải răng?"). A phrase made of
        the title's own words ("răng khôn" for "Răng khôn mọc lệch có cần nhổ không?") adds nothing the title
        does not say and marks a subject the entry may share with siblings; so do keywords generated from the
        question. 0 for an entry without such a phrase (or without a question: its title is its keywords)."""
        phrases = self._phrases.get(pos)
        if phrases is None:
            entry = self.entries[pos]
            title = set(split_words(fold(entry_title(entry))))
            folded = {fold(k).strip() for k in entry.keywords} if entry.question.strip() else set()
            phrases = self._phrases[pos] = [
                (w, frozenset(w) - title)
                for w in (self.syllable_weights(k) for k in sorted(folded) if k)
                if set(w) - title and sum(w.values()) > 0 and not self._titled_elsewhere(set(w), pos)
            ]
        return max(
            (
                sum(w for word, w in phrase.items() if word in words) / sum(phrase.values())
                for phrase, own in phrases
                if own <= words  # the message names the subject the keyword's way
            ),
            default=0.0,
        )

    def _titled_elsewhere(self, words: set[str], pos: int) -> bool:
        """Whether the title of an entry other than the one at ``pos`` has every one of ``words``: a keyword
        phrase that repeats another entry's question names that entry, not this one (a keyword copied from the
        wrong row)."""
        if self._title_words is None:
            index: dict[str, set[int]] = {}
            for p, entry in enumerate(self.entries):
                for word in set(split_words(fold(entry_title(entry)))):
                    index.setdefault(word, set()).add(p)
            self._title_words = index
        holders: set[int] | None = None
        for word in words:
            these = self._title_words.get(word, set())
            holders = set(these) if holders is None else holders & these
            if not holders - {pos}:
                return False
        return bool(holders and holders - {pos})

    def title_coverage(self, pos: int, words: set[str], *, informative: bool = False) -> float:
        """The idf-weighted share of the title (``entry_title``) of the entry at ``pos`` whose folded syllables
        are in ``words`` (a query's); each title's weights are computed once per index. ``informative``: each
        weight minus the idf smoothing's +1, so a word most entries share ("có", "không", "bị") weighs about
        nothing and an entry is not covered by a message's function words alone."""
        title = self._titles.get(pos)
        if title is None:
            title = self._titles[pos] = self.syllable_weights(fold(entry_title(self.entries[pos])))
        shift = 1.0 if informative else 0.0
        total = sum(max(0.0, w - shift) for w in title.values())
        if total <= 0:
            return 0.0
        return sum(max(0.0, w - shift) for word, w in title.items() if word in words) / total

    def scores(self, query: str) -> np.ndarray:
        """Score of every entry (position order) for a query; 0 where nothing matches."""
        n = len(self.entries)
        out = np.zeros(n, dtype=np.float32)
        folded = fold(query)
        for fam in self.families.values():
            cols, vals = self.query_vector(fam, folded)
            if len(cols) == 0:
                continue
            m = fam.matrix
            starts = m.indptr[cols]
            lengths = m.indptr[cols + 1] - starts
            total = int(lengths.sum())
            if total == 0:
                continue
            if total > _DIRECT_MAX_POSTINGS:  # long posting lists: scipy's compiled column product wins
                out += fam.weight * (m[:, cols] @ vals)
                continue
            # matrix[:, cols] @ vals straight from the CSC arrays: the posting list of each query column,
            # weighted by the query's value for it, summed per entry (scipy's per-call overhead is ~10x this
            # on a clinic-sized KB)
            at = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
            weights = m.data[at] * np.repeat(vals, lengths)
            out += fam.weight * np.bincount(m.indices[at], weights=weights, minlength=n).astype(np.float32)
        return out

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top-k (entry id, score) pairs, best first; entries scoring 0 are left out."""
        scores = self.scores(query)
        return self.top(scores, k)

    def top(self, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
        if len(scores) == 0 or k <= 0:
            return []
        k = min(k, len(scores))
        part = np.argpartition(-scores, k - 1)[:k]
        order = part[np.argsort(-scores[part], kind="stable")]
        return [(int(self.ids[p]), float(scores[p])) for p in order if scores[p] > 0]
