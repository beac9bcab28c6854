"""Data types of guideline verification and the store interface the engine declares (``db`` implements it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

VALID = "VALID"
FLAGGED = "FLAGGED"
UNCLEAR = "UNCLEAR"
STATUSES = (VALID, FLAGGED, UNCLEAR)

STATUS_VI = {
    VALID: "Phù hợp hướng dẫn",
    FLAGGED: "Cần xem lại",
    UNCLEAR: "Chưa đủ căn cứ",
    "HEADING": "Tiêu đề",
    "PENDING": "Chưa kiểm tra",
}


@dataclass(slots=True)
class GuidelineChunk:
    """One passage of a guideline document as retrieval sees it."""

    id: int
    document: str  # document title
    heading_path: list[str]
    text: str
    search_text: str = ""  # folded text (heading path + text) for the sparse index

    @property
    def heading(self) -> str:
        """The heading path below the document title (the title is shown as the document)."""
        path = self.heading_path[1:] if self.heading_path[:1] == [self.document] else self.heading_path
        return " › ".join(path)


@dataclass(slots=True)
class Evidence:
    """A guideline passage shown for a claim, with its retrieval scores."""

    chunk_id: int
    document: str
    heading: str
    text: str
    score: float  # relevance 0–1 for display (see engine.verify.search.relevance); order comes from fusion
    dense: float | None = None  # cosine similarity of the dense leg, when it found the chunk
    sparse: float | None = None  # TF-IDF cosine of the sparse leg

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["score"] = round(self.score, 4)
        for key in ("dense", "sparse"):
            if data[key] is not None:
                data[key] = round(data[key], 4)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        return cls(
            chunk_id=int(data.get("chunk_id", 0)),
            document=str(data.get("document", "")),
            heading=str(data.get("heading", "")),
            text=str(data.get("text", "")),
            score=float(data.get("score", 0.0)),
            dense=data.get("dense"),
            sparse=data.get("sparse"),
        )


@dataclass(slots=True)
class Verdict:
    """The verifier's result for one sentence."""

    status: str  # VALID | FLAGGED | UNCLEAR
    confidence: float  # 0–1: how sure the verifier is of *this status*
    reasoning: str  # Vietnamese, for the clinician
    evidence: list[Evidence] = field(default_factory=list)
    source: str = "offline"  # "offline" | "llm" | "llm-fallback"
    trace: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        self.confidence = max(0.0, min(1.0, float(self.confidence)))


class GuidelineStore(Protocol):
    """What guideline search needs from storage (``db.guidelines.PgGuidelineStore``)."""

    async def corpus_version(self) -> str:
        """Changes whenever any chunk is added, replaced or removed."""
        ...

    async def load_chunks(self) -> list[GuidelineChunk]: ...

    async def dense_search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Chunk ids with cosine similarity, best first."""
        ...


@dataclass(slots=True)
class Claim:
    """A sentence handed to a verifier, with the context the article gave it."""

    text: str
    section: str = ""
    context: dict[str, Any] = field(default_factory=dict)

    def query(self, keywords: str | None = None) -> str:
        """The search query: the clinician's keywords first when given, then the sentence."""
        return f"{keywords.strip()} {self.text}" if keywords and keywords.strip() else self.text


class Verifier(Protocol):
    async def verify(self, claim: Claim, keywords: str | None = None) -> Verdict: ...
