"""VerificationService: the channel-independent verification workflow used by the console and Telegram.

``start_session`` stores the article's sentences; ``current`` returns the item the clinician stands on,
computing and storing its verdict the first time; ``research`` re-runs the verifier with the clinician's
keywords (or guidance); ``accept``/``skip`` record the decision and move on; ``stop`` ends the session;
``report`` builds the Markdown/CSV report. All state is in PostgreSQL (``db.verification``), so any process
can continue a session after a restart, and a stale or doubled button press changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import asyncpg

from db import verification as repo
from db.guidelines import PgGuidelineStore
from db.verification import ACCEPTED, SKIPPED, Item, NewItem, Session
from engine.llm import LLMClient
from engine.types import Embedder
from engine.verify.agent import AgentVerifier
from engine.verify.article import Article
from engine.verify.report import Report, ReportRow
from engine.verify.search import GuidelineSearch
from engine.verify.types import Claim, Evidence, Verdict, Verifier
from engine.verify.verifier import OfflineVerifier

log = logging.getLogger("medbot.verify")


@dataclass(slots=True)
class ItemView:
    """The current sentence with its verdict, ready to render."""

    session_id: int
    idx: int
    number: int  # 1-based among the claims
    total: int  # number of claims in the article
    sentence: str
    section: str
    status: str
    confidence: float | None
    reasoning: str
    evidence: list[Evidence]
    source: str | None
    searches: list[str]


def _verdict_fields(item: Item) -> dict[str, Any]:
    """What the current-sentence view and the report row both show of a stored item."""
    return {
        "sentence": item.sentence,
        "section": item.section,
        "status": item.status,
        "confidence": item.confidence,
        "reasoning": item.reasoning,
        "evidence": [Evidence.from_json(e) for e in item.evidence],
        "source": item.verdict_source,
    }


def _claim(item: Item) -> Claim:
    return Claim(text=item.sentence, section=item.section, context=dict(item.context))


class VerificationService:
    def __init__(self, pool: asyncpg.Pool, verifier: Verifier) -> None:
        self.pool = pool
        self.verifier = verifier

    async def start_session(
        self,
        article: Article,
        *,
        user_id: int | None,
        article_name: str = "",
        channel: str = "console",
        meta: dict[str, Any] | None = None,
    ) -> Session:
        items = [
            NewItem(
                sentence=s.text,
                section=s.location,
                context={**s.context(), "title": article.title},
                is_heading=s.is_heading,
            )
            for s in article.items
        ]
        session = await repo.create_session(
            self.pool,
            user_id=user_id,
            title=article.title,
            article_name=article_name,
            channel=channel,
            items=items,
            meta=meta,
        )
        log.info(
            "verify.session_started id=%d items=%d claims=%d", session.id, len(items), len(article.claims)
        )
        return session

    async def session(self, session_id: int) -> Session | None:
        return await repo.get_session(self.pool, session_id)

    async def open_session(self, user_id: int) -> Session | None:
        """The user's open session, to resume after a restart."""
        return await repo.open_session_for_user(self.pool, user_id)

    async def _view(self, item: Item) -> ItemView:
        claims = [i for i in await repo.items(self.pool, item.session_id) if not i.is_heading]
        number = next((n for n, i in enumerate(claims, 1) if i.idx == item.idx), 0)
        return ItemView(
            session_id=item.session_id,
            idx=item.idx,
            number=number,
            total=len(claims),
            searches=list(item.searches),
            **_verdict_fields(item),
        )

    async def _store(
        self, item: Item, verdict: Verdict, search: str | None = None, guidance: str | None = None
    ) -> None:
        await repo.record_verdict(
            self.pool,
            item.session_id,
            item.idx,
            status=verdict.status,
            confidence=verdict.confidence,
            evidence=[e.to_json() for e in verdict.evidence],
            reasoning=verdict.reasoning,
            source=verdict.source,
            search=search,
            guidance=guidance,
        )

    async def current(self, session_id: int) -> ItemView | None:
        """The open item with its verdict (computed now if it was never computed); None when finished."""
        item = await repo.current_item(self.pool, session_id)
        if item is None:
            return None
        if item.status == "PENDING":
            verdict = await self.verifier.verify(_claim(item))
            await self._store(item, verdict)
            item = await repo.current_item(self.pool, session_id)
            assert item is not None
        return await self._view(item)

    async def research(self, session_id: int, keywords: str | None = None) -> ItemView | None:
        """Verify the open sentence again, with the clinician's keywords or guidance when given."""
        item = await repo.current_item(self.pool, session_id)
        if item is None:
            return None
        keywords = (keywords or "").strip() or None
        verdict = await self.verifier.verify(_claim(item), keywords)
        await self._store(item, verdict, search=keywords or "", guidance=keywords)
        item = await repo.current_item(self.pool, session_id)
        return await self._view(item) if item else None

    async def _decide(self, session_id: int, decision: str, idx: int | None) -> ItemView | None:
        if idx is None:
            item = await repo.current_item(self.pool, session_id)
            if item is None:
                return None
            idx = item.idx
        if not await repo.decide(self.pool, session_id, idx, decision):
            log.info("verify.stale_decision session=%d idx=%s", session_id, idx)
        return await self.current(session_id)

    async def accept(self, session_id: int, idx: int | None = None) -> ItemView | None:
        """Accept the verdict of item ``idx`` (default: the current one); returns the next item, or None."""
        return await self._decide(session_id, ACCEPTED, idx)

    async def skip(self, session_id: int, idx: int | None = None) -> ItemView | None:
        """Mark item ``idx`` as not a claim; returns the next item, or None."""
        return await self._decide(session_id, SKIPPED, idx)

    async def stop(self, session_id: int) -> Report:
        await repo.stop(self.pool, session_id)
        return await self.report(session_id)

    async def report(self, session_id: int) -> Report:
        session = await repo.get_session(self.pool, session_id)
        if session is None:
            raise LookupError(f"no verification session {session_id}")
        rows = [
            ReportRow(
                idx=i.idx,
                is_heading=i.is_heading,
                decision=i.decision,
                guidance=i.guidance,
                searches=[s for s in i.searches if s],
                **_verdict_fields(i),
            )
            for i in await repo.items(self.pool, session_id)
        ]
        return Report(
            title=session.title, article_name=session.article_name, session_status=session.status, rows=rows
        )


def build_verifier(pool: asyncpg.Pool, embedder: Embedder | None, llm: LLMClient | None) -> Verifier:
    """The verifier for the configuration: the LLM agent (on the engine's LLM client, the same one the chat
    uses) with the offline verifier as its fallback, or the offline verifier alone when there is no LLM."""
    search = GuidelineSearch(PgGuidelineStore(pool, embedder), embedder)
    offline = OfflineVerifier(search)
    if llm is None:
        return offline
    return AgentVerifier(llm, search, fallback=offline)
