"""In-test stand-ins for the stores the engine declares: a token-overlap searcher over a list of KBEntry and
a dict-backed conversation memory. The production ones (engine.retrieval, db) are tested on their own."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.classify import fold
from engine.types import Hit, KBEntry, Turn

STOP = set(
    "co khong bi thi sao la gi nao cua va voi cho toi em minh ban con nhu the duoc can nen lam a oi nhe "
    "da roi nua hay ma de".split()
)


def tokens(text: str) -> set[str]:
    return {t for t in fold(text).split() if t not in STOP}


@dataclass
class Result:
    hits: list[Hit]
    score: float
    timings: dict[str, Any] = field(default_factory=dict)


class ListSearcher:
    """score = share of the query's content tokens found in the entry (question, keywords, topic)."""

    def __init__(self, entries: list[KBEntry], fail: int = 0) -> None:
        self.entries = entries
        self.calls: list[dict[str, Any]] = []
        self.fail = fail  # the next N searches raise

    def _score(self, q: set[str], e: KBEntry) -> float:
        doc = tokens(f"{e.question} {' '.join(e.keywords)} {e.topic} {e.subtopic}")
        return len(q & doc) / len(q) if q else 0.0

    async def search(
        self,
        role: str,
        query: str,
        extra_queries: Sequence[str] = (),
        k: int | None = None,
        mode: str = "hybrid",
        exclude: Sequence[str] | set[str] = (),
    ) -> Result:
        self.calls.append({"role": role, "query": query, "extra": tuple(extra_queries), "k": k})
        if self.fail:
            self.fail -= 1
            raise ConnectionError("search backend down")
        best: dict[str, Hit] = {}
        for q in (query, *extra_queries):
            qt = tokens(q)
            for e in self.entries:
                if e.role != role or e.code in exclude:
                    continue
                s = self._score(qt, e)
                if s > 0 and (e.code not in best or s > best[e.code].score):
                    best[e.code] = Hit(entry=e, score=s)
        hits = sorted(best.values(), key=lambda h: (-h.score, h.entry.code))[: k or 7]
        return Result(hits, hits[0].score if hits else 0.0, {"total_ms": 0.1})

    async def sample_questions(self, role: str, n: int) -> list[KBEntry]:
        pool = [e for e in self.entries if e.role == role and e.question]
        return random.Random(0).sample(pool, min(n, len(pool)))

    async def topics(self, role: str) -> list[tuple[str, list[KBEntry]]]:
        groups: dict[str, list[KBEntry]] = {}
        for e in self.entries:
            if e.role == role:
                groups.setdefault(e.topic, []).append(e)
        return [(t, es[:3]) for t, es in groups.items()]


class DictMemory:
    def __init__(self) -> None:
        self.turns: dict[int, list[Turn]] = {}

    def add(self, conversation_id: int, turn: Turn) -> None:
        self.turns.setdefault(conversation_id, []).append(turn)

    async def recent_turns(self, conversation_id: int, limit: int = 3) -> list[Turn]:
        return self.turns.get(conversation_id, [])[-limit:]

    async def summary(self, conversation_id: int) -> str:
        return ""


def _e(i: int, role: str, code: str, topic: str, question: str, answer: str, kw: str = "") -> KBEntry:
    return KBEntry(
        id=i,
        role=role,
        code=code,
        question=question,
        answer=answer,
        topic=topic,
        keywords=[k.strip() for k in kw.split(";") if k.strip()],
    )


SAMPLE = [
    _e(
        1,
        "patient_dental",
        "D001",
        "Răng khôn",
        "Răng khôn mọc lệch có cần nhổ không?",
        "Răng khôn mọc lệch thường nên nhổ nếu gây đau, sưng tái phát hoặc làm sâu răng bên cạnh.",
        "mọc lệch;nhổ",
    ),
    _e(
        2,
        "patient_dental",
        "D002",
        "Răng khôn",
        "Răng khôn bị sưng đau phải làm sao?",
        "Súc miệng nước muối ấm, giữ vệ sinh; nếu sưng kéo dài hoặc sốt cần đến nha sĩ khám.",
        "sưng;đau",
    ),
    _e(
        3,
        "patient_dental",
        "D003",
        "Răng khôn",
        "Nhổ răng khôn có đau không?",
        "Nhổ răng khôn được gây tê nên hầu như không đau trong lúc nhổ.",
        "nhổ;đau",
    ),
    _e(
        4,
        "patient_dental",
        "D004",
        "Nha chu",
        "Chảy máu chân răng khi đánh răng là bị gì?",
        "Thường do viêm nướu vì mảng bám; cần lấy cao răng và chải răng đúng cách.",
        "chảy máu;nướu",
    ),
    _e(
        5,
        "patient_dental",
        "D005",
        "Nha chu",
        "Hôi miệng có chữa được không?",
        "Phần lớn hôi miệng do mảng bám và cao răng, chữa được khi vệ sinh tốt.",
        "hôi miệng",
    ),
    _e(
        6,
        "patient_dental",
        "D006",
        "Chỉnh nha",
        "Niềng răng mất bao lâu?",
        "Thông thường từ 18 đến 24 tháng tùy mức độ.",
        "niềng răng",
    ),
    _e(
        7,
        "patient_dental",
        "D007",
        "Chỉnh nha",
        "Niềng răng có đau không?",
        "Có thể ê nhẹ vài ngày sau mỗi lần siết dây.",
        "niềng;đau",
    ),
    _e(
        8,
        "patient_dental",
        "D008",
        "Răng trẻ em",
        "Trẻ mấy tuổi nên đi khám răng lần đầu?",
        "Khi mọc chiếc răng đầu tiên hoặc trước 1 tuổi.",
        "trẻ em;khám",
    ),
    _e(
        9,
        "patient_dental",
        "D009",
        "Răng trẻ em",
        "Sâu răng sữa có cần trám không?",
        "Có, để giữ chỗ cho răng vĩnh viễn và tránh đau nhiễm trùng.",
        "sâu răng;trám",
    ),
    _e(
        10,
        "patient_dental",
        "D010",
        "Phục hình",
        "Bọc răng sứ giữ được bao lâu?",
        "Trung bình 10–15 năm nếu chăm sóc tốt.",
        "răng sứ",
    ),
    _e(
        11,
        "patient_dental",
        "D011",
        "Phục hình",
        "Cấy ghép implant có đau không?",
        "Được gây tê, sau phẫu thuật có thể ê nhẹ vài ngày.",
        "implant",
    ),
    _e(
        12,
        "patient_dental",
        "D012",
        "Tổng quát",
        "Sưng mắt cá chân là bệnh gì?",
        "Sưng mắt cá chân có nhiều nguyên nhân, nên khám nội khoa.",
        "sưng",
    ),
    _e(
        13,
        "patient_dental",
        "D013",
        "Ê buốt",
        "Răng ê buốt khi uống nước lạnh phải làm sao?",
        "Dùng kem đánh răng cho răng nhạy cảm và đi khám để tìm nguyên nhân.",
        "ê buốt",
    ),
    _e(
        20,
        "patient_diabetes",
        "T001",
        "Dinh dưỡng",
        "Người tiểu đường ăn trái cây được không?",
        "Được, chọn loại ít ngọt và ăn lượng vừa phải.",
        "trái cây",
    ),
    _e(
        21,
        "patient_diabetes",
        "T002",
        "Theo dõi",
        "Đường huyết bao nhiêu là bình thường?",
        "Lúc đói 4,4–7,2 mmol/L với đa số người bệnh.",
        "đường huyết",
    ),
    _e(
        22,
        "patient_diabetes",
        "T003",
        "Thuốc",
        "Tiêm insulin vào đâu?",
        "Bụng, đùi, cánh tay; xoay vòng vị trí tiêm.",
        "insulin",
    ),
]
