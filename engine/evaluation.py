"""Retrieval evaluation: the file formats of DESIGN.md section 9 and the metrics (P@1, MRR@k, hit@k).

The orchestration that loads a corpus into the real store lives in ``bot.evaluate`` (it needs the database);
everything here is pure so the metrics themselves can be checked exactly.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from engine.types import KBEntry


@dataclass(slots=True)
class Query:
    query_id: str
    query: str


def read_corpus(path: Path, role: str) -> list[KBEntry]:
    entries = []
    with open(path, encoding="utf-8-sig") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not row.get("code"):
                raise ValueError(f"{path}:{n}: entry without a code")
            keywords = row.get("keywords") or ""
            if isinstance(keywords, str):
                keywords = [k.strip() for k in keywords.split(";") if k.strip()]
            entries.append(
                KBEntry(
                    id=0,
                    role=role,
                    code=str(row["code"]),
                    question=row.get("question") or "",
                    answer=row.get("answer") or "",
                    topic=row.get("topic") or "",
                    subtopic=row.get("subtopic") or "",
                    keywords=list(keywords),
                )
            )
    return entries


def read_queries(path: Path) -> list[Query]:
    with open(path, encoding="utf-8-sig") as fh:
        return [Query(str(r["query_id"]), r["query"]) for r in (json.loads(x) for x in fh if x.strip())]


def read_qrels(path: Path) -> dict[str, set[str]]:
    qrels: dict[str, set[str]] = {}
    with open(path, encoding="utf-8-sig", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if float(row.get("rel") or 1) > 0:
                qrels.setdefault(row["query_id"], set()).add(row["code"])
    return qrels


def metrics(
    ranked: dict[str, list[str]], qrels: dict[str, set[str]], k: int, latencies_ms: Iterable[float] = ()
) -> dict[str, float | int]:
    """P@1, MRR@k and hit@k over the queries that have a relevance judgement."""
    judged = [qid for qid in ranked if qrels.get(qid)]
    p1 = mrr = hit = 0.0
    for qid in judged:
        codes = ranked[qid][:k]
        relevant = qrels[qid]
        rank = next((i for i, code in enumerate(codes, 1) if code in relevant), None)
        if rank is not None:
            hit += 1
            mrr += 1.0 / rank
            p1 += rank == 1
    n = len(judged)
    lat = sorted(latencies_ms)
    return {
        "n": n,
        "p@1": round(p1 / n, 4) if n else 0.0,
        f"mrr@{k}": round(mrr / n, 4) if n else 0.0,
        f"hit@{k}": round(hit / n, 4) if n else 0.0,
        "ms_per_query_p50": round(statistics.median(lat), 2) if lat else 0.0,
    }
