"""The composition root: every service a process uses is built here, once per :class:`~bot.runtime.Runtime`.

An entry point (``medbot run`` in ``bot.main``, ``medbot worker`` in ``bot.worker.cli``, each command of
``bot.cli``) opens a runtime (settings, database URL, pool) and takes from here what it hands on:

* :func:`embedder_for` — the configured embedder behind the database cache (one per process: the Telegram
  dispatcher, the worker's jobs, imports and the verifier share it);
* :func:`llm_for` — the LLM client, or None offline;
* :func:`searcher_for` / :func:`engine_deps` — the KB searcher and what the medical flow runs on;
* :func:`chat_service` — the channel-independent ChatService every channel (Telegram, Zalo, console) answers
  through; :func:`build_service` builds a fresh one (tests build several on one runtime);
* :func:`verification_for` — the article-check service of ``/verify`` and ``medbot verify``;
* :func:`job_context` — what the worker's jobs receive.

Channels and features never build these themselves and never import this module: they receive what they
need as arguments, so every arrow runs from the entry points down (docs/architecture.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from bot.access import StaffRule
from bot.fair_use import FairUse, Limits
from bot.llm_selfcheck import start_background_check
from bot.runtime import Runtime
from bot.service import ChatService
from bot.verify_service import VerificationService, build_verifier
from db.job_context import JobContext
from db.settings import Settings
from db.stores import PgKBStore, PgMemoryStore
from db.worker_settings import WorkerSettings
from engine import triage
from engine.deps import EngineConfig, EngineDeps
from engine.embedding import CachedEmbedder
from engine.flows import run_medical_flow
from engine.llm import LLMClient, LLMConfig
from engine.llm_check import parse_override, steps_from
from engine.roles import load_roles
from engine.searcher import ClinicSearcher
from kb_import.embedders import make_cached_embedder

log = logging.getLogger(__name__)
T = TypeVar("T")


def _once(runtime: Runtime, key: str, build: Callable[[], T]) -> T:
    """``runtime.extras[key]``, built by ``build`` on first use."""
    if key not in runtime.extras:
        runtime.extras[key] = build()
    return runtime.extras[key]  # type: ignore[no-any-return]


def llm_client(settings: Settings) -> LLMClient | None:
    """The LLM client when OPENAI_API_KEY is set, else None (offline mode)."""
    if not settings.llm_enabled:
        return None
    assert settings.openai_api_key is not None
    return LLMClient(
        LLMConfig(
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value(),
            model=settings.openai_model,
            timeout=settings.llm_timeout,
        )
    )


def llm_for(runtime: Runtime) -> LLMClient | None:
    """The runtime's LLM client (None offline), built once."""
    return _once(runtime, "llm", lambda: llm_client(runtime.settings))


def embedder_for(runtime: Runtime) -> CachedEmbedder:
    """The configured embedder behind the database embedding cache (one per runtime)."""
    return _once(runtime, "embedder", lambda: make_cached_embedder(runtime.settings, runtime.pool))


def searcher_for(runtime: Runtime) -> ClinicSearcher:
    # The KB version is checked on every search (one indexed row): an import in any process is seen by the
    # very next question.
    return _once(
        runtime,
        "searcher",
        lambda: ClinicSearcher(PgKBStore(runtime.pool), embedder_for(runtime), version_check_seconds=0),
    )


def llm_steps(settings: Settings) -> dict[str, bool]:
    """LLM step switches: off where the last ``medbot llm check`` found a step hurts or breaks
    (MEDBOT_DATA_DIR/llm_check.json), the admin's LLM_STEPS over them. Logged when a step is off."""
    if not settings.llm_enabled:
        return {}
    report = None
    try:
        report = json.loads((settings.medbot_data_dir / "llm_check.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    steps = steps_from(report, parse_override(settings.llm_steps))
    off = sorted(name for name, on in steps.items() if not on)
    if off:
        log.warning("LLM steps switched off: %s (medbot llm check / LLM_STEPS): offline there", ", ".join(off))
    return steps


def engine_deps(runtime: Runtime) -> EngineDeps:
    settings = runtime.settings
    return EngineDeps(
        searcher=searcher_for(runtime),
        memory=PgMemoryStore(runtime.pool),
        llm=llm_for(runtime),
        config=EngineConfig(
            score_threshold=settings.score_threshold,
            disclaimer=settings.disclaimer,
            prune_threshold=settings.prune_threshold,
            clinic=settings.clinic,
            llm_budget=settings.llm_budget_seconds,
            llm_steps=llm_steps(settings),
        ),
    )


async def build_service(runtime: Runtime) -> ChatService:
    """A new ChatService on the runtime's engine (entry points take the shared one: :func:`chat_service`)."""
    deps = engine_deps(runtime)
    start_background_check(runtime, deps)  # only under ``medbot run`` (armed there), when the check is due

    async def answer(shared: dict[str, Any]) -> dict[str, Any]:
        return await run_medical_flow(deps, shared)

    roles = load_roles()
    triage.default_model().warm_up()  # the triage model fits in the background; the rules decide meanwhile
    embedder_for(runtime).warm_up()  # the embedding model loads in the background too
    return ChatService(
        runtime.pool,
        answer,
        default_role=runtime.settings.default_role,
        roles=list(roles),
        clinician_roles=frozenset(key for key, role in roles.items() if role.clinician),
        staff=StaffRule.from_settings(runtime.settings),
        disclaimer=runtime.settings.disclaimer,
        clinic=runtime.settings.clinic,
        fair_use=FairUse(Limits.from_settings(runtime.settings), runtime.settings.clinic),
    )


async def chat_service(runtime: Runtime) -> ChatService:
    """The runtime's ChatService, built once: every channel of the process answers through it."""
    if "chat_service" not in runtime.extras:
        runtime.extras["chat_service"] = await build_service(runtime)
    return runtime.extras["chat_service"]  # type: ignore[no-any-return]


def verification_for(runtime: Runtime) -> VerificationService:
    """The runtime's article-check service (guideline search on the shared embedder), built once."""
    return _once(
        runtime,
        "verification",
        lambda: VerificationService(
            runtime.pool, build_verifier(runtime.pool, runtime.settings, embedder=embedder_for(runtime))
        ),
    )


def job_context(runtime: Runtime, worker: WorkerSettings, *, manual: bool = False) -> JobContext:
    """What the worker's jobs receive: the pool, the settings and the runtime's embedder (built on first use,
    so a worker whose embedding backend is misconfigured still runs every job that does not embed)."""
    return JobContext(
        pool=runtime.pool,
        settings=runtime.settings,
        worker=worker,
        manual=manual,
        embedder_factory=lambda: embedder_for(runtime),
    )
