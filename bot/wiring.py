"""Wiring: builds the engine (searcher, memory, optional LLM, config) and the ChatService for a runtime.

Every channel and CLI command gets its ChatService here, so they all answer with the same engine.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from bot.access import StaffRule
from bot.fair_use import FairUse, Limits
from bot.llm_selfcheck import start_background_check
from bot.runtime import Runtime
from bot.service import ChatService
from db.settings import Settings
from db.stores import PgKBStore, PgMemoryStore
from engine import triage
from engine.deps import EngineConfig, EngineDeps
from engine.embedding import CachedEmbedder
from engine.flows import run_medical_flow
from engine.llm import LLMClient, LLMConfig
from engine.llm_check import parse_override, steps_from
from engine.roles import load_roles
from engine.searcher import ClinicSearcher
from kb_import.cli import make_cached_embedder

log = logging.getLogger(__name__)


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


def embedder_for(runtime: Runtime) -> CachedEmbedder:
    """The configured embedder behind the database embedding cache (one per runtime)."""
    cached = runtime.extras.get("embedder")
    if cached is None:
        cached = make_cached_embedder(runtime.settings, runtime.pool)
        runtime.extras["embedder"] = cached
    return cached


def searcher_for(runtime: Runtime) -> ClinicSearcher:
    searcher = runtime.extras.get("searcher")
    if searcher is None:
        # The KB version is checked on every search (one indexed row): an import in any process is seen
        # by the very next question.
        searcher = ClinicSearcher(PgKBStore(runtime.pool), embedder_for(runtime), version_check_seconds=0)
        runtime.extras["searcher"] = searcher
    return searcher


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
        llm=llm_client(settings),
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
