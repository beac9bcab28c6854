"""The engine's ``Searcher``: hybrid KB search plus the browsing the conversation nodes need.

``ClinicSearcher`` is ``KBSearch`` (``engine.retrieval.search``) with views of a role's KB taken from the
same in-memory index (so they refresh with it): a topic list for TopicSuggestResponse (every topic, with a few
entries each, and all the questions of one topic) and a topic-spread sample of questions for
ClarifyQuestionNode. The grouping is computed once per index build (a role's index is replaced, never
changed, when its KB changes).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from engine.retrieval.search import KBSearch
from engine.types import KBEntry

PER_TOPIC = 3


def entries_by_topic(entries: list[KBEntry]) -> OrderedDict[str, list[KBEntry]]:
    """Every entry with a question, grouped by topic (ĐỀ MỤC) in KB order."""
    groups: OrderedDict[str, list[KBEntry]] = OrderedDict()
    for entry in entries:
        if entry.question.strip():
            groups.setdefault(entry.topic.strip() or "Khác", []).append(entry)
    return groups


def group_by_topic(entries: list[KBEntry]) -> list[tuple[str, list[KBEntry]]]:
    """Topics (ĐỀ MỤC) in KB order, each with up to ``PER_TOPIC`` entries, different subtopics first."""
    result = []
    for topic, items in entries_by_topic(entries).items():
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
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._grouped: dict[
            str, tuple[object, list[tuple[str, list[KBEntry]]], dict[str, list[KBEntry]]]
        ] = {}

    async def _groups(self, role: str) -> tuple[list[tuple[str, list[KBEntry]]], dict[str, list[KBEntry]]]:
        index = await self.index(role)
        cached = self._grouped.get(role)
        if cached is None or cached[0] is not index:
            cached = (index, group_by_topic(index.entries), dict(entries_by_topic(index.entries)))
            self._grouped[role] = cached
        return cached[1], cached[2]

    async def sample_questions(self, role: str, n: int) -> list[KBEntry]:
        return spread_sample((await self.index(role)).entries, n)

    async def topics(self, role: str) -> list[tuple[str, list[KBEntry]]]:
        return (await self._groups(role))[0]

    async def topic_entries(self, role: str, topic: str) -> list[KBEntry]:
        """Every entry of ``topic`` with a question, in KB order ([] for an unknown topic)."""
        return list((await self._groups(role))[1].get(topic, []))

    async def topic_of(self, role: str, codes: Sequence[str]) -> str:
        by_code = {e.code: e for e in (await self.index(role)).entries}
        return next((by_code[c].topic for c in codes if c in by_code and by_code[c].topic.strip()), "")
