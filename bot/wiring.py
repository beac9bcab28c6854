"""The composition root, second layer: the application services, each built once per
:class:`~bot.runtime.Runtime` on the resources of the first layer (``bot.runtime``: pool, embedder, LLM client).

* :func:`searcher_for` / :func:`engine_deps` — the KB searcher and what the medical flow runs on;
* :func:`chat_service` — the channel-independent ChatService every channel (Telegram, Zalo, console) answers
  through; :func:`build_service` builds a fresh one (tests build several on one runtime);
* :func:`verification_for` — the article-check service of ``/verify`` and ``medbot verify``;
* :func:`attach_handoff` — whether and how the ChatService hands patients off to the clinic's staff.

Entry points (``bot.main``, the command modules of ``bot.cli``) take these and hand them to the channels;
channels and features never build them and never import this module, so every arrow runs from the entry
points down (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from bot.access import StaffRule
from bot.fair_use import FairUse, Limits
from bot.handoff import HandoffDesk, StaffDesk
from bot.llm_selfcheck import current_check, start_background_check
from bot.runtime import Runtime, embedder_for, llm_for
from bot.service import ChatService
from bot.verify_service import VerificationService, build_verifier
from bot.web.console.services import ConsoleServices
from db.settings import Settings
from db.stores import PgKBStore, PgMemoryStore
from engine import triage
from engine.deps import EngineConfig, EngineDeps
from engine.flows import run_medical_flow
from engine.llm_check import parse_override, steps_from
from engine.roles import load_roles
from engine.searcher import ClinicSearcher

log = logging.getLogger(__name__)


def searcher_for(runtime: Runtime) -> ClinicSearcher:
    # The KB version is checked on every message (one indexed row, read as the message comes in, once per
    # message: engine.retrieval.search.one_kb_check_per_message): an import in any process is seen by the very
    # next question.
    return runtime.once(
        "searcher",
        lambda: ClinicSearcher(
            PgKBStore(runtime.pool),
            embedder_for(runtime),
            version_check_seconds=0,
            query_adapter=runtime.settings.query_adapter,
        ),
    )


def llm_steps(settings: Settings) -> dict[str, bool]:
    """LLM step switches: off where the last ``medbot llm check`` of the configured model and endpoint found a
    step hurts or breaks (MEDBOT_DATA_DIR/llm_check.json), the admin's LLM_STEPS over them. Logged when a step
    is off."""
    if not settings.llm_enabled:
        return {}
    steps = steps_from(current_check(settings), parse_override(settings.llm_steps))
    off = sorted(name for name, on in steps.items() if not on)
    if off:
        log.warning(
            "LLM steps switched off: %s (medbot llm check / LLM_STEPS): offline there", ", ".join(off)
        )
    return steps


def handoff_possible(settings: Settings) -> bool:
    """Whether a process may hand a patient off: a Telegram staff group, or the console as the staff's desk."""
    return (settings.staff_chat_id is not None and settings.telegram_bot_token is not None) or (
        settings.console_handoff
    )


def attach_handoff(
    runtime: Runtime,
    service: ChatService,
    *,
    desk: StaffDesk | None = None,
    kicks: Mapping[str, Callable[[], object]] | None = None,
) -> bool:
    """Attach the staff handoff (``bot.handoff.HandoffDesk``) to ``service``, or not: the one place that decides.

    ``desk``: the Telegram staff group, as the process reaches it (``bot.telegram.staff.TelegramDesk`` under
    ``medbot run`` with ``STAFF_CHAT_ID``; an outbox-only ``QueuedDesk`` under ``medbot web``); ``kicks``: per
    patient channel this process can deliver to, its outbox kicker. A handoff opens only for those channels.
    With ``CONSOLE_HANDOFF`` a desk is attached even without a staff group (staff answer from the console;
    handoffs have no topic); without both, none is, and the flow's own reply (the clinic's phone) goes out.

    What each process gets: the Telegram app (``medbot run`` with a token, webhook or polling): the staff
    group's desk when ``STAFF_CHAT_ID`` is set, and kicks for Telegram and (same webhook app) Zalo; the Zalo-only
    app: no staff group (it has no Telegram bot), a kick for Zalo, so it hands off with ``CONSOLE_HANDOFF`` only;
    ``medbot web``: no kicks (it serves no patient and opens no handoff): its console replies and closes are
    queued in the outbox and sent by the worker's outbox jobs (Telegram every 15 s, Zalo every 30 s), and
    posted in the topic through the outbox too. Returns whether a desk was attached."""
    settings = runtime.settings
    if desk is None and not settings.console_handoff:
        service.handoff = None
        return False
    names = {key: role.name for key, role in load_roles().items()}
    service.handoff = HandoffDesk(desk, names, dict(kicks or {}), console=settings.console_handoff)
    log.info(
        "handoff.ready staff_chat=%s console=%s channels=%s",
        getattr(desk, "chat_id", None),
        settings.console_handoff,
        ",".join(sorted(service.handoff.kicks)) or "-",
    )
    return True


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
            # the staff handoff's routes (bot/handoff.py; attach_handoff attaches the desk)
            handoff=handoff_possible(settings),
        ),
    )


async def build_service(runtime: Runtime) -> ChatService:
    """A new ChatService on the runtime's engine (entry points take the shared one: :func:`chat_service`)."""
    deps = engine_deps(runtime)
    start_background_check(runtime, deps)  # only under ``medbot run`` (armed there), when the check is due

    async def answer(shared: dict[str, Any]) -> dict[str, Any]:
        return await run_medical_flow(deps, shared)

    roles = load_roles()
    # the triage model loads (or fits, once per data and code) in the background; the rules decide meanwhile
    triage.default_model().warm_up(data_folder=runtime.settings.medbot_data_dir)
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
        history_turns=deps.config.history_turns,
    )


async def chat_service(runtime: Runtime) -> ChatService:
    """The runtime's ChatService, built once: every channel of the process answers through it."""
    if "chat_service" not in runtime.extras:
        runtime.extras["chat_service"] = await build_service(runtime)
    return runtime.extras["chat_service"]  # type: ignore[no-any-return]


def verification_for(runtime: Runtime) -> VerificationService:
    """The runtime's article-check service (guideline search on the shared embedder), built once."""
    return runtime.once(
        "verification",
        lambda: VerificationService(
            runtime.pool, build_verifier(runtime.pool, embedder_for(runtime), llm_for(runtime))
        ),
    )


def console_services(runtime: Runtime, service: ChatService) -> ConsoleServices:
    """What the clinic console's pages use: the runtime's services and ``service``, the ChatService the
    process's channels answer through (so "try it" answers exactly as a patient is answered)."""
    return ConsoleServices(
        pool=runtime.pool,
        settings=runtime.settings,
        chat=service,
        embedder=embedder_for(runtime),
        verification=verification_for(runtime),
    )
