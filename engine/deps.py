"""What the medical flow needs from the outside world, declared as small protocols plus a config bundle.

``Searcher`` is implemented by ``engine.retrieval.search.KBSearch`` (wired by the channel / CLI);
``MemoryStore`` comes from ``engine.types`` (implemented in ``db``). Tests use the production ones (on the
sample KB in PostgreSQL, see tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.clinic import ClinicProfile
from engine.llm import LLMClient
from engine.roles import Role, load_roles
from engine.types import Hit, KBEntry, MemoryStore

DEFAULT_DISCLAIMER = (
    "⚕️ Thông tin chỉ mang tính tham khảo, không thay thế cho việc khám và chẩn đoán trực tiếp của bác sĩ."
)


class SearchResultLike(Protocol):
    hits: list[Hit]  # best first; Hit.score = calibrated probability that the entry is right
    score: float  # top calibrated score, 0 when there are no hits
    timings: dict[str, Any]
    vectors: dict[str, Any]  # cleaned text → query vector, for another role's search of the same message


class Searcher(Protocol):
    """KB search for one role's KB (``engine.retrieval.search.KBSearch`` in production)."""

    async def search(
        self,
        role: str,
        query: str,
        extra_queries: Sequence[str] = (),
        k: int | None = None,
        mode: str = "hybrid",
        exclude: Collection[str] = (),
        absent: Collection[int] = (),
        vectors: Mapping[str, Any] | None = None,
    ) -> SearchResultLike: ...

    async def sample_questions(self, role: str, n: int) -> list[KBEntry]:
        """Up to ``n`` active entries of the role with a non-empty question, spread over topics."""
        ...

    async def topic_of(self, role: str, codes: Sequence[str]) -> str:
        """The topic (ĐỀ MỤC) of the first of these entries that has one; "" when none does."""
        ...

    async def topics(self, role: str) -> list[tuple[str, list[KBEntry]]]:
        """Every topic (ĐỀ MỤC) of the role with a few of its entries (≈3, different subtopics first)."""
        ...

    async def topic_entries(self, role: str, topic: str) -> list[KBEntry]:
        """Every entry of one topic (ĐỀ MỤC) that has a question, in KB order."""
        ...


@dataclass(slots=True)
class EngineConfig:
    score_threshold: float = 0.5  # fused calibrated score needed to answer from the best entry
    # below this, nothing retrieved is related: say so and offer topics (unless both legs single one entry out:
    # engine.nodes.singled_out)
    clarify_threshold: float = 0.15
    disclaimer: str = DEFAULT_DISCLAIMER
    clinic: ClinicProfile = field(default_factory=ClinicProfile)  # CLINIC_* settings (engine/clinic.py)
    top_k: int = 7
    candidate_k: int = 20  # candidates gathered when an LLM will prune them
    prune_threshold: int = 15
    prune_keep: int = 7
    min_suggestions: int = 5
    n_topics: int = 10  # questions offered when there is no match and no topic list
    history_turns: int = 3
    llm_attempts: int = 3  # LLM node attempts (first try + retries)
    llm_wait: float = 0.5  # base backoff before the 2nd attempt, doubled each time, with jitter
    llm_max_wait: float = 10.0
    # Seconds per message for every LLM step together (LLM_BUDGET_SECONDS): when they are spent the offline
    # result goes out. A small reserve is kept for the offline steps after the last LLM call.
    llm_budget: float = 8.0
    # LLM steps switched on (classify, expand = rag_questions, prune, compose): ``medbot llm check`` switches
    # off the ones that hurt, the admin can override (engine/llm_steps.py).
    llm_steps: dict[str, bool] = field(default_factory=dict)
    # A staff handoff is available (STAFF_CHAT_ID): the "human" and "complaint" routes lead to StaffHandoff
    # (engine.flows.HANDOFF_FLOW), which marks the message for the caller to hand over.
    handoff: bool = False
    search_timeout: float = 5.0


@dataclass(slots=True)
class EngineDeps:
    searcher: Searcher
    memory: MemoryStore | None = None
    llm: LLMClient | None = None
    config: EngineConfig = field(default_factory=EngineConfig)
    roles: dict[str, Role] = field(default_factory=load_roles)
