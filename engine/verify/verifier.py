"""The offline verifier: retrieve evidence for a claim and apply the conservative rule of ``offline``."""

from __future__ import annotations

from engine.verify.offline import offline_verdict
from engine.verify.search import GuidelineSearch
from engine.verify.types import Claim, Verdict

TOP_K = 3


class OfflineVerifier:
    """No LLM: evidence is retrieved and shown; the status follows ``engine.verify.offline``."""

    def __init__(self, search: GuidelineSearch, top_k: int = TOP_K) -> None:
        self.search = search
        self.top_k = top_k

    async def verify(self, claim: Claim, keywords: str | None = None) -> Verdict:
        evidence = await self.search.search(claim.query(keywords), self.top_k)
        if keywords and keywords.strip():
            # the clinician's keywords alone may find what the sentence did not; keep the best of both
            extra = await self.search.search(keywords, self.top_k)
            seen = {e.chunk_id for e in evidence}
            merged = evidence + [e for e in extra if e.chunk_id not in seen]
            evidence = sorted(merged, key=lambda e: -e.score)[: self.top_k]
        verdict = offline_verdict(claim.text, evidence)
        verdict.source = "offline"
        return verdict
