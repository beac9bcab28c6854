"""`medbot eval retrieval` on a tiny corpus with known answers prints exactly the expected metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import asyncpg

from engine.evaluation import metrics
from tests.conftest import ROOT

CORPUS = [
    {"code": "A1", "question": "Răng bị ê buốt khi uống nước lạnh phải làm sao?", "answer": ""},
    {"code": "A2", "question": "Trẻ mấy tuổi thì nên đi khám răng lần đầu?", "answer": ""},
    {
        "code": "A3",
        "question": "",
        "answer": "Người bệnh tiểu đường nên ăn nhiều rau xanh, hạn chế đồ ngọt và tinh bột trắng.",
    },
    {"code": "A4", "question": "Niềng răng mất bao lâu?", "answer": ""},
]
QUERIES = [
    {
        "query_id": "q1",
        "query": "Chào bác sĩ, răng em bị ê buốt khi uống nước lạnh phải làm sao ạ? Em cảm ơn.",
    },
    {"query_id": "q2", "query": "tre may tuoi thi nen di kham rang lan dau"},
    {"query_id": "q3", "query": "người bị tiểu đường nên ăn rau xanh và hạn chế đồ ngọt thế nào?"},
    {"query_id": "q4", "query": "Thuốc hạ sốt cho trẻ dùng liều bao nhiêu?"},  # its answer is not in the KB
]
QRELS = "query_id\tcode\trel\nq1\tA1\t1\nq2\tA2\t1\nq3\tA3\t1\nq4\tZ9\t1\n"


def test_metrics_are_exact_on_hand_ranked_lists() -> None:
    ranked = {"a": ["X", "R"], "b": ["R"], "c": ["X", "Y", "Z"]}
    qrels = {"a": {"R"}, "b": {"R"}, "c": {"R"}}
    m = metrics(ranked, qrels, k=2)
    assert m["n"] == 3
    assert m["p@1"] == round(1 / 3, 4)
    assert m["mrr@2"] == round((0.5 + 1) / 3, 4)
    assert m["hit@2"] == round(2 / 3, 4)


def _write(tmp: Path) -> tuple[Path, Path, Path]:
    corpus, queries, qrels = tmp / "corpus.jsonl", tmp / "queries.jsonl", tmp / "qrels.tsv"
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in CORPUS), encoding="utf-8")
    queries.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in QUERIES), encoding="utf-8")
    qrels.write_text(QRELS, encoding="utf-8")
    return corpus, queries, qrels


def _run(db_url: str, files: tuple[Path, Path, Path], *extra: str) -> dict[str, object]:
    corpus, queries, qrels = files
    env = {**os.environ, "DATABASE_URL": db_url}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli",
            "eval",
            "retrieval",
            "--corpus",
            str(corpus),
            "--queries",
            str(queries),
            "--qrels",
            str(qrels),
            "--k",
            "10",
            *extra,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


async def test_eval_retrieval_cli_exact_metrics_and_cache(
    db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    files = _write(tmp_path)
    first = _run(db_url, files)
    assert first["n"] == 4
    assert first["p@1"] == 0.75  # q1-q3 right at rank 1 (q3 through a blank-question entry's answer)
    assert first["mrr@10"] == 0.75
    assert first["hit@10"] == 0.75
    assert first["mode"] == "hybrid"
    assert first["embedded_now"] == 4
    for key in ("n", "p@1", "mrr@10", "hit@10", "ms_per_query_p50", "mode"):
        assert key in first

    # The second run embeds nothing (cache), and the isolated role was removed afterwards.
    second = _run(db_url, files, "--mode", "sparse")
    assert second["embedded_now"] == 0
    assert second["p@1"] == 0.75
    assert await db.fetchval("SELECT count(*) FROM kb_entries") == 0
