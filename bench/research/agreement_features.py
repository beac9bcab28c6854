"""Candidate "does an entry fit" and agreement features for the calibration (issue 21, fourteenth round;
research).

Recorded as the twelfth round's candidates are (``separation_features.recording``, which this block wraps):
under ``x_``-prefixed keys of the top hit's features, so ``calibration.probability`` (which reads only
``calibration.FEATURES``) and the product's decision are unchanged. Only the top candidate (``i == 0``) gets them.

- ``x_top`` / ``x_qhash``: the top entry's id and a CRC32 of the message as searched, so rows of the same message
  searched two ways (with and without the query adapter; typed and with every mark removed) can be joined and
  their top entries compared (``agreement``);
- ``x_qcov_best``: the best ``query_cov`` (idf-weighted share of the message's known words found in an entry's
  fields) among the first ``WINDOW`` candidates, and ``x_qcov_share``: the top entry's over that best;
- ``x_tcov`` / ``x_tcov_share``: the same coverage over the entry's title fields only (question, keywords, topic;
  an answer-only entry's title, ``entry_title``), and the top entry's over the best among the first ``WINDOW``:
  a long answer covers many of a message's words by chance, a title does not;
- ``x_keycov``: the share of the message's ``KEY`` highest-idf known words found in the top entry's fields (a
  right answer covers the message's key terms), ``x_keycov_best`` the best among the first ``WINDOW``;
- ``x_nq``: the message states a quantity (``numbers.quantities``), ``x_nmatch``: the top entry's title states
  one that agrees with it, ``x_nconflict``: the title conflicts (``numbers.conflicts``), on the reranked top.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from bench.research import separation_features
from engine.retrieval import numbers
from engine.retrieval import search as search_mod
from engine.retrieval.sparse import entry_fields, entry_title
from engine.text import fold, split_words

WINDOW = 10
KEY = 3


def _entry(index, entry_id: int):  # type: ignore[no-untyped-def]
    pos = index.position.get(entry_id)
    return None if pos is None else index.entries[pos]


def _fields(index, entry_id: int) -> set[str]:  # type: ignore[no-untyped-def]
    entry = _entry(index, entry_id)
    return set() if entry is None else set(split_words(" ".join(entry_fields(entry).values())))


def _title_fields(index, entry_id: int) -> set[str]:  # type: ignore[no-untyped-def]
    entry = _entry(index, entry_id)
    if entry is None:
        return set()
    f = entry_fields(entry)
    text = " ".join((f["question"], f["keywords"], f["topic"]))
    if not entry.question.strip():
        text += " " + entry_title(entry)
    return set(split_words(fold(text)))


def extras(index, ranked, entry, query: dict[str, float], message: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    known = {w: v for w, v in query.items() if v > 0}
    total = sum(known.values())
    key = set(sorted(known, key=lambda w: -known[w])[:KEY])

    def cov(fields: set[str]) -> float:
        return sum(v for w, v in known.items() if w in fields) / total if total > 0 else 0.0

    def kcov(fields: set[str]) -> float:
        return len(key & fields) / len(key) if key else 0.0

    per = [_fields(index, f.entry_id) for f in ranked[:WINDOW]]
    mine = _fields(index, entry.id)
    best = max((cov(f) for f in per), default=0.0)
    tper = [_title_fields(index, f.entry_id) for f in ranked[:WINDOW]]
    tmine = _title_fields(index, entry.id)
    tbest = max((cov(f) for f in tper), default=0.0)
    said = numbers.quantities(message)
    title = numbers.quantities(entry_title(entry))
    return {
        "x_top": float(entry.id),
        "x_qhash": float(zlib.crc32(message.encode("utf-8"))),
        "x_qcov_best": best,
        "x_qcov_share": cov(mine) / best if best > 0 else 0.0,
        "x_tcov": cov(tmine),
        "x_tcov_share": cov(tmine) / tbest if tbest > 0 else 0.0,
        "x_keycov": kcov(mine),
        "x_keycov_best": max((kcov(f) for f in per), default=0.0),
        "x_nq": float(bool(said)),
        "x_nmatch": float(any(m.agrees(t) for m in said for t in title)),
        "x_nconflict": float(bool(said) and numbers.conflicts(said, title)),
    }


@contextmanager
def recording() -> Iterator[None]:
    """Every search in this block adds the twelfth round's and these ``x_`` features to its top hit's."""
    with separation_features.recording():
        inner = search_mod.candidate_features

        def wrapped(index, ranked, i, entry, query, mode):  # type: ignore[no-untyped-def]
            feats = inner(index, ranked, i, entry, query, mode)
            if i == 0:
                feats.update(extras(index, ranked, entry, query, separation_features._CURRENT_QUERY[0]))
            return feats

        search_mod.candidate_features = wrapped
        try:
            yield
        finally:
            search_mod.candidate_features = inner
