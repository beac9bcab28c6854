"""LLM mode against offline (issue 20): answer accuracy and latency of the medical flow offline, with a
well-behaved fake model, and with weak, garbage, slow and failing fake models (``testkit/fakes/flow_model.py``
served by the local OpenAI-compatible ``testkit.fakes.openai_server.FakeOpenAI``: the real ``openai`` client,
the real flow, the sample KB in the development database searched by the production ClinicSearcher).

    python -m bench llm          (``make bench`` runs it with the others)
    python bench/bench_llm.py [--budget 3] [--delay 30] [--error-rate 0.3] [--heldout 120] [--concurrency 8]

The labelled set: every question of the sample KB's patient roles (expected: that entry cited) and the first
``--heldout`` messages of ``tests/data/intents_heldout.jsonl`` (expected: the labelled input type; a
medical question there is right when it is routed to retrieval). A message is one fresh conversation.

Latency is the flow's own ``latency_ms`` (no database writes). Runs are sequential except the slow model's,
which sends ``--concurrency`` messages at once (each waits on the model, not the CPU) — its latency includes
that contention. The slow run uses ``--budget`` (LLM_BUDGET_SECONDS); the others the same budget, which the
fast models never reach. Writes bench/results/llm.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import SecretStr

from bench.output import write_json
from bot.runtime import Runtime, open_runtime
from bot.setup import setup
from bot.wiring import engine_deps
from db.settings import load_settings
from engine.flows import run_medical_flow
from engine.result import FlowResult
from testkit.fakes.flow_model import FlowModel
from testkit.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "tests" / "data" / "intents_heldout.jsonl"
OUT = ROOT / "bench" / "results" / "llm.json"
ROLES = ("patient_dental", "patient_diabetes")


async def labelled_set(runtime: Runtime, heldout: int) -> list[dict[str, Any]]:
    rows = await runtime.pool.fetch(
        "SELECT role, code, question FROM kb_entries WHERE active AND role = ANY($1::text[]) "
        "AND coalesce(question, '') <> '' ORDER BY role, code",
        list(ROLES),
    )
    items = [
        {"role": r["role"], "text": r["question"], "label": "medical_question", "code": r["code"]}
        for r in rows
    ]
    lines = [json.loads(x) for x in HELDOUT.read_text(encoding="utf-8").splitlines() if x.strip()][:heldout]
    items += [{"role": "patient_dental", "text": x["text"], "label": x["label"], "code": None} for x in lines]
    return items


def right(item: dict[str, Any], out: FlowResult) -> bool:
    if item["code"] is not None:
        return out.input_type == "medical_question" and out.citations[:1] == [item["code"]]
    return out.input_type == item["label"]


@dataclass
class Mode:
    model: FlowModel | None  # None: offline (no LLM key)
    concurrency: int = 1
    structured: bool = True  # whether the server accepts ``response_format``


async def run_mode(
    runtime: Runtime, items: list[dict[str, Any]], mode: Mode, budget: float
) -> dict[str, Any]:
    settings = runtime.settings
    server: FakeOpenAI | None = None
    if mode.model is not None:
        server = FakeOpenAI()
        server.model, server.structured = mode.model, mode.structured
        settings = settings.model_copy(
            update={
                "openai_api_key": SecretStr("bench"),
                "openai_base_url": await server.start(),
                "openai_model": "fake",
                "llm_budget_seconds": budget,
            }
        )
    deps = engine_deps(Runtime(settings=settings, url=runtime.url, pool=runtime.pool, extras=runtime.extras))
    deps.memory = None
    sem = asyncio.Semaphore(mode.concurrency)
    results: list[dict[str, Any]] = [{} for _ in items]

    async def one(i: int, item: dict[str, Any]) -> None:
        async with sem:
            out = await run_medical_flow(deps, {"role": item["role"], "input": item["text"]})
        results[i] = {
            "ok": right(item, out),
            "ms": out.latency_ms,
            "tokens": out.usage.total_tokens,
            "fallbacks": sum(1 for s in out.llm.values() if s["source"] == "offline" and s["calls"]),
            "got": [out.input_type, out.citations[:1]],
        }

    try:
        await asyncio.gather(*(one(i, item) for i, item in enumerate(items)))
    finally:
        if deps.llm is not None:
            await deps.llm.aclose()
        if server is not None:
            await server.stop()
    ms = sorted(r["ms"] for r in results)
    kb = [r for r, it in zip(results, items, strict=True) if it["code"] is not None]
    intents = [r for r, it in zip(results, items, strict=True) if it["code"] is None]
    return {
        "n": len(items),
        "accuracy": round(sum(r["ok"] for r in results) / len(items), 4),
        "kb_accuracy": round(sum(r["ok"] for r in kb) / max(1, len(kb)), 4),
        "intent_accuracy": round(sum(r["ok"] for r in intents) / max(1, len(intents)), 4),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1),
        "max_ms": round(ms[-1], 1),
        "tokens_per_message": round(sum(r["tokens"] for r in results) / len(items), 1),
        "llm_calls": len(server.requests) if server is not None else 0,
        "step_fallbacks": sum(r["fallbacks"] for r in results),
        "structured": None if deps.llm is None else deps.llm.structured,
        "breaker": None if deps.llm is None else deps.llm.breaker.as_dict(),
        "wrong": [
            {"text": it["text"], "expected": it["code"] or it["label"], "got": r["got"]}
            for r, it in zip(results, items, strict=True)
            if not r["ok"]
        ][:40],
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings()
    await setup(settings)
    runtime = await open_runtime(settings)
    try:
        items = await labelled_set(runtime, args.heldout)
        labels = {it["text"]: it["label"] for it in items}
        distractors = [it["text"] for it in items if it["code"] is not None]
        modes = {
            "offline": Mode(None),
            "good": Mode(FlowModel("good", labels=labels)),
            "good_no_structured": Mode(FlowModel("good", labels=labels), structured=False),
            "weak": Mode(FlowModel("weak", labels=labels, distractors=distractors)),
            "garbage": Mode(FlowModel("garbage")),
            f"failing_{args.error_rate:g}": Mode(
                FlowModel("good", labels=labels, error_rate=args.error_rate)
            ),
            f"slow_{args.delay:g}s": Mode(
                FlowModel("slow", labels=labels, delay=args.delay), args.concurrency
            ),
        }
        out: dict[str, Any] = {"budget_s": args.budget, "embedding_backend": settings.embedding_backend}
        for name, mode in modes.items():
            out[name] = await run_mode(runtime, items, mode, args.budget)
            r = out[name]
            print(f"{name:<22} acc {r['accuracy']:.1%} (kb {r['kb_accuracy']:.1%}, intents "
                  f"{r['intent_accuracy']:.1%})  p50 {r['p50_ms']:>7.0f} ms  p95 {r['p95_ms']:>7.0f} ms  "
                  f"calls {r['llm_calls']:>4}  fallbacks {r['step_fallbacks']:>4}", flush=True)  # fmt: skip
        return out
    finally:
        await runtime.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=3.0, help="LLM_BUDGET_SECONDS for every run")
    parser.add_argument("--delay", type=float, default=30.0, help="the slow model's seconds per reply")
    parser.add_argument(
        "--error-rate", type=float, default=0.3, help="share of HTTP 500s of the failing model"
    )
    parser.add_argument("--heldout", type=int, default=120, help="held-out intent messages to include")
    parser.add_argument("--concurrency", type=int, default=8, help="messages at once for the slow model")
    args = parser.parse_args(sys.argv[1:])
    result = asyncio.run(run(args))
    offline = result["offline"]["accuracy"]
    worse = [k for k, v in result.items() if isinstance(v, dict) and v.get("accuracy", 1) < offline]
    slow = next(v for k, v in result.items() if k.startswith("slow_"))
    print(f"never below offline ({offline:.1%}): {'yes' if not worse else 'NO: ' + ', '.join(worse)}")
    print(f"slow model p95 {slow['p95_ms'] / 1000:.2f} s within the {args.budget:g} s budget: "
          f"{'yes' if slow['p95_ms'] <= args.budget * 1000 else 'NO'}")  # fmt: skip
    write_json(OUT, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
