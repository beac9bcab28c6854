"""Per-role re-estimation of the calibration (``engine.retrieval.adaptation``): the fit, its shrinkage, identity
on the reference, the self-supervised queries, and "absent" searches equal to searches of a KB without the
entry. The store double is ``tests.unit.test_retrieval_core.ListKBStore`` (the database boundary only)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.retrieval import adaptation
from engine.retrieval.adaptation import Adjustment, RoleCalibration, SelfRow
from engine.retrieval.calibration import FEATURES, probability
from engine.retrieval.search import KBSearch
from engine.text import has_diacritics
from engine.types import KBEntry
from tests.unit.test_retrieval_core import ListKBStore


def synthetic(a: float, b: float, n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.uniform(-4, 4, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(a * z + b)))).astype(float)
    return z, y, np.ones(n)


def test_fit_recovers_known_parameters():
    z, y, w = synthetic(0.7, -0.5)
    a, b = adaptation.fit_platt(z, y, w)
    assert a == pytest.approx(0.7, abs=0.08) and b == pytest.approx(-0.5, abs=0.12)


def test_prior_shrinks_small_samples_toward_it():
    z, y, w = synthetic(0.5, -1.0, n=60, seed=3)
    free = adaptation.fit_platt(z, y, w)
    shrunk = adaptation.fit_platt(z, y, w, prior=(1.0, 0.0), strength=100.0)
    strong = adaptation.fit_platt(z, y, w, prior=(1.0, 0.0), strength=1e6)
    dist = [math.dist(p, (1.0, 0.0)) for p in (free, shrunk, strong)]
    assert dist[0] > dist[1] > dist[2]
    assert strong == pytest.approx((1.0, 0.0), abs=1e-3)


def rows_like(a: float, b: float, n: int = 300, seed: int = 1, kind: str = "question") -> list[SelfRow]:
    """Self rows of one kind whose global probability (the real ``probability``, current coefficients)
    relates to correctness as sigmoid(a * logit + b): half answerable, half unanswerable (never right)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(2 * n):
        feats = {f: 0.0 for f in FEATURES}
        feats["lead"] = float(rng.uniform(0, 1))
        feats["entry_cov"] = float(rng.uniform(0, 1))
        row = SelfRow(False, i < n, feats, words=8, kind=kind)
        z = adaptation._logit(row.probability("hybrid"))
        if row.answerable:
            row.right = bool(rng.random() < 1 / (1 + math.exp(-(a * z + b + 1.0))))
        out.append(row)
    return out


def test_the_reference_itself_gets_the_identity():
    rows = rows_like(0.8, 0.4) + rows_like(0.5, -1.5, seed=4, kind="keyword")
    ref = adaptation.reference_fit(rows, "hybrid")
    assert set(ref) == {"question", "keyword"}
    adj = adaptation.relative_adjustment(rows, "hybrid", ref)
    assert adj.a == pytest.approx(1.0, abs=1e-3) and adj.b == pytest.approx(0.0, abs=1e-3)


def test_a_kb_of_harder_query_kinds_is_not_mistaken_for_a_worse_kb():
    """Keyword queries are harder than questions everywhere: a KB whose self queries are mostly keywords,
    behaving as the reference's keywords do, keeps (nearly) the identity."""
    ref = adaptation.reference_fit(
        rows_like(0.8, 0.4) + rows_like(0.5, -1.5, seed=4, kind="keyword"), "hybrid"
    )
    keyword_kb = rows_like(0.5, -1.5, seed=5, kind="keyword") + rows_like(0.8, 0.4, n=40, seed=6)
    adj = adaptation.relative_adjustment(keyword_kb, "hybrid", ref)
    assert abs(adj.b) < 0.3 and abs(adj.a - 1) < 0.3


def test_noise_and_easier_kbs_leave_probabilities_alone():
    """Only a KB whose own queries fare clearly worse than the reference's moves: another sample of the
    reference's kind is within noise, and an easier KB is never made more confident (answers only get rarer)."""
    ref = adaptation.reference_fit(rows_like(0.8, 0.4, seed=1), "hybrid")
    assert adaptation.relative_adjustment(rows_like(0.8, 0.4, seed=7), "hybrid", ref).identity
    assert adaptation.relative_adjustment(rows_like(0.8, 3.0, n=600, seed=8), "hybrid", ref).identity


def test_a_kb_where_self_queries_fail_more_lowers_probabilities_within_bounds():
    ref_rows = rows_like(0.8, 0.4, seed=1)
    worse = rows_like(0.8, -4.0, n=600, seed=2)
    ref = adaptation.reference_fit(ref_rows, "hybrid")
    adj = adaptation.relative_adjustment(worse, "hybrid", ref)
    assert adj(0.5) < 0.5 and adj(0.6) < 0.6  # a borderline top entry is now declined
    assert adaptation.A_RANGE[0] <= adj.a <= adaptation.A_RANGE[1]
    assert adaptation.B_RANGE[0] <= adj.b <= adaptation.B_RANGE[1]
    # a tiny sample of the same KB moves less: the prior holds it near the reference
    small = adaptation.relative_adjustment(worse[:30] + worse[600:630], "hybrid", ref)
    assert abs(small.b) < abs(adj.b)


def test_adjustment_is_monotone_and_applied_before_the_off_topic_guard():
    adj = Adjustment(1.3, 1.0)
    ps = [0.05, 0.2, 0.5, 0.8, 0.95]
    assert [adj(p) for p in ps] == sorted(adj(p) for p in ps)
    assert Adjustment()(0.37) == pytest.approx(0.37)
    feats = {f: 0.0 for f in FEATURES} | {"lead": 0.6, "entry_cov": 0.9, "query_cov": 0.9}
    raw = probability("hybrid", feats, unknown_words=0, sparse=0.6, dense=0.9, query_words=8)
    assert probability("hybrid", feats, sparse=0.6, dense=0.9, query_words=8, adjust=adj) == pytest.approx(
        adj(raw)
    )
    # an off-topic message (unknown words, no evidence in either leg) stays capped whatever the adjustment
    capped = probability("hybrid", feats, unknown_words=2, sparse=0.1, dense=0.82, query_words=8, adjust=adj)
    assert capped <= 0.3


def test_role_calibration_applies_only_to_its_model_and_procedure():
    cal = RoleCalibration(
        "r", "fp", embedding_model="m1", params={"hybrid": Adjustment(1.1, 0.2), "sparse": Adjustment()}
    )
    assert cal.for_mode("hybrid", "m1") == Adjustment(1.1, 0.2)
    assert cal.for_mode("hybrid", "m2") is None  # measured with another model's vectors
    assert cal.for_mode("sparse", None) == Adjustment()
    cal.procedure = adaptation.PROCEDURE - 1
    assert cal.for_mode("sparse", None) is None


def entries(n: int, role: str = "r") -> list[KBEntry]:
    subjects = [
        "răng khôn",
        "niềng răng",
        "sâu răng",
        "tẩy trắng",
        "nhổ răng",
        "viêm lợi",
        "hôi miệng",
        "trám răng",
    ]
    out = []
    for i in range(n):
        s = subjects[i % len(subjects)]
        out.append(
            KBEntry(
                id=i + 1,
                role=role,
                code=f"C{i:03d}",
                question=f"{s} loại {i} có cần điều trị ngay không?",
                answer=f"Với {s} loại {i}, bác sĩ khám rồi mới quyết định. Nên đi khám sớm.",
                keywords=[f"{s} {i}", f"loại {i}"],
            )
        )
    out.append(
        KBEntry(
            id=n + 1,
            role=role,
            code="ANS",
            question="",
            answer="Chảy máu chân răng khi đánh răng thường do viêm lợi. Hãy đi khám.",
        )
    )
    return out


def test_self_queries_perturb_questions_keywords_and_answers():
    kb = entries(30)
    qs = adaptation.self_queries(kb)
    assert {q.kind for q in qs} == {"question", "keyword", "answer"}
    assert qs == adaptation.self_queries(kb)  # deterministic
    by_id = {e.id: e for e in kb}
    questions = [q for q in qs if q.kind == "question"]
    assert all(len(q.text.split()) < len(by_id[q.entry_id].question.split()) for q in questions)
    assert any(not has_diacritics(q.text) for q in questions) and any(
        has_diacritics(q.text) for q in questions
    )
    assert len(adaptation.self_queries(entries(300))) <= 2 * adaptation.MAX_ENTRIES


async def test_absent_searches_like_the_kb_without_the_entry():
    kb = entries(40)
    search = KBSearch(ListKBStore(kb), embedder=None, version_check_seconds=3600)
    without = KBSearch(ListKBStore([e for e in kb if e.id != 5]), embedder=None, version_check_seconds=3600)
    query = "nho rang loai 4 can dieu tri khong"  # entry 5's question
    assert (await search.search("r", query, mode="sparse")).hits[0].entry.id == 5
    a = await search.search("r", query, mode="sparse", absent=(5,))
    b = await without.search("r", query, mode="sparse")
    assert 5 not in [h.entry.id for h in a.hits]
    assert a.hits[0].entry.id == b.hits[0].entry.id
    assert a.hits[0].features["lead"] == pytest.approx(b.hits[0].features["lead"], abs=0.02)
    assert a.score == pytest.approx(b.score, abs=0.02)  # idf and the near-miss level differ by one entry


async def test_a_tiny_kb_keeps_the_global_model():
    search = KBSearch(ListKBStore(entries(10)), embedder=None, version_check_seconds=3600)
    cal = await adaptation.calibrate(search, "r", modes=("sparse",))
    assert cal.status == "global" and not cal.params
    assert "too few" in cal.reason


async def test_a_clinic_sized_kb_is_re_estimated_and_applied_by_the_searcher():
    store = ListKBStore(entries(60))
    search = KBSearch(store, embedder=None, version_check_seconds=3600)
    cal = await adaptation.calibrate(
        search, "r", modes=("sparse",), reference={"sparse": rows_like(0.8, 0.4)}
    )
    assert cal.status == "adjusted" and set(cal.params) == {"sparse"}
    assert cal.n_queries >= adaptation.MIN_QUERIES
    assert cal.fingerprint == adaptation.kb_fingerprint(store.entries)
    search.set_calibration("r", cal)
    res = await search.search("r", "sau rang loai 2 co can dieu tri", mode="sparse")
    top = res.hits[0]
    assert top.calibration == "role" and res.calibration["source"] == "role"
    assert top.score == pytest.approx(cal.params["sparse"](top.raw_score))
