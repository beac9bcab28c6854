"""The engine's ``Searcher``: hybrid KB search plus the browsing the conversation nodes need.

``ClinicSearcher`` is ``KBSearch`` (``engine.retrieval.search``) with two views of a role's KB taken from the
same in-memory index (so they refresh with it): a topic list for TopicSuggestResponse and a topic-spread
sample of questions for ClarifyQuestionNode.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from engine.retrieval.search import KBSearch
from engine.types import KBEntry

PER_TOPIC = 3


def group_by_topic(entries: list[KBEntry]) -> list[tuple[str, list[KBEntry]]]:
    """Topics (ĐỀ MỤC) in KB order, each with up to ``PER_TOPIC`` entries, different subtopics first."""
    groups: OrderedDict[str, list[KBEntry]] = OrderedDict()
    for entry in entries:
        if entry.question.strip():
            groups.setdefault(entry.topic.strip() or "Khác", []).append(entry)
    result = []
    for topic, items in groups.items():
        seen: set[str] = set()
        first = [e for e in items if not (e.subtopic in seen or seen.add(e.subtopic))]  # type: ignore[func-returns-value]
        rest = [e for e in items if e not in first]
        result.append((topic, (first + rest)[:PER_TOPIC]))
    return result


def spread_sample(entries: list[KBEntry], n: int) -> list[KBEntry]:
    """Up to ``n`` entries with a question, taken round-robin across topics (deterministic)."""
    groups: OrderedDict[str, list[KBEntry]] = OrderedDict()
    for entry in entries:
        if entry.question.strip():
            groups.setdefault(entry.topic, []).append(entry)
    picked: list[KBEntry] = []
    depth = 0
    while len(picked) < n and any(depth < len(g) for g in groups.values()):
        for items in groups.values():
            if depth < len(items) and len(picked) < n:
                picked.append(items[depth])
        depth += 1
    return picked


class ClinicSearcher(KBSearch):
    async def sample_questions(self, role: str, n: int) -> list[KBEntry]:
        return spread_sample((await self.index(role)).entries, n)

    async def topics(self, role: str) -> list[tuple[str, list[KBEntry]]]:
        return group_by_topic((await self.index(role)).entries)

    async def topic_of(self, role: str, codes: Sequence[str]) -> str:
        by_code = {e.code: e for e in (await self.index(role)).entries}
        return next((by_code[c].topic for c in codes if c in by_code and by_code[c].topic.strip()), "")
