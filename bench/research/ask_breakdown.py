"""Research, not run by ``make bench``: where the time of one ``medbot ask`` goes, per component.

    python bench/research/ask_breakdown.py [--size 10000] [--queries 300] [--out breakdown.json]

The set-up of ``bench_ask`` (its database ``medbot_bench``, the sample KB plus ``--size`` generated entries in
``patient_dental``, its messages), then one warm process answers the messages through
``ChatService.handle_text`` while the repository functions it calls (conversation, memory, KB version, the
stored exchange), the query embedding and the searches are timed by wrappers that call the real functions, the
engine's trace gives each node's time, the search its own timings (``retrieval_timings``) and ``gc.callbacks``
the collector's pauses (``embed_query`` is the search's wait for its vector: a prefetched embedding's own work
runs in the background). Prints p50/p95/mean per component, calls per message, and what the slowest tenth of
the messages spent where. Works on the code before and after the ``ask`` latency work (it wraps whichever
repository functions the service uses), so the same script measures both sides of an A/B.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bot.service as service_module
import db.stores as stores_module
from bench import bench_ask as B
from bot.runtime import open_runtime
from bot.wiring import build_service, embedder_for, searcher_for
from db import kb
from db.settings import load_settings
from engine.embedding import passage_text
from kb_import.job import ImportOptions, run_import
from kb_import.sample import SAMPLE_PATH

spent: dict[str, float] = defaultdict(float)  # this message's ms per component (and "#n" call counts)


def timed(owner: Any, name: str, label: str) -> None:
    """Replace ``owner.name`` (an async function) by one that adds its wall time to ``spent[label]``."""
    real: Callable[..., Awaitable[Any]] = getattr(owner, name)

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return await real(*args, **kwargs)
        finally:
            spent[label] += (time.perf_counter() - t) * 1000
            spent[label + "#n"] += 1

    setattr(owner, name, wrapper)


async def run(size: int, n_queries: int) -> list[dict[str, Any]]:
    settings = load_settings(database_url=await B.bench_url(), openai_api_key=None)
    runtime = await open_runtime(settings, pool_size=10)
    try:
        pool, embedder = runtime.pool, embedder_for(runtime)
        for role in sorted(set(await kb.roles(pool)) | {B.ROLE}):
            await kb.delete_role(pool, role)
        await run_import(pool, [SAMPLE_PATH], ImportOptions(requested_by="bench"), embedder=embedder)
        sample = await kb.active_entries(pool, B.ROLE)
        sample_vectors = await embedder.embed_passages([passage_text(e.question, e.answer) for e in sample])
        entries, combos = B.generate(size)
        vectors = np.vstack([sample_vectors, B.composed_vectors(combos, await B.component_vectors(embedder))])
        await kb.replace_role(pool, B.ROLE, [*sample, *entries], vectors, embedder.name)
        await pool.execute("VACUUM ANALYZE kb_entries")
        service, searcher = await build_service(runtime), searcher_for(runtime)
        await searcher.ready(B.ROLE)
        embedder.clear_query_cache()

        conversations = service_module.conversations
        for name in ("open_with_memory", "store_exchange"):
            if hasattr(conversations, name):
                timed(conversations, name, f"db.{name}")
        openers = getattr(service_module, "OPEN_CONVERSATION", None)  # the code before the ask latency work
        if openers is not None:
            holder = type("Openers", (), dict(openers))
            timed(holder, "active", "db.active_conversation")
            openers["active"] = holder.active
        timed(stores_module.conversations, "memory", "db.memory")
        timed(stores_module.kb, "version", "db.kb_version")
        timed(embedder, "embed_query", "embed_query")
        timed(searcher, "search", "search")
        gc_started = [0.0]

        def on_gc(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                gc_started[0] = time.perf_counter()
            else:
                spent["gc"] += (time.perf_counter() - gc_started[0]) * 1000

        gc.callbacks.append(on_gc)
        observed: list[dict[str, Any]] = []
        answer = service.answer

        async def observe(shared: dict[str, Any]) -> Any:  # the real flow; keeps the shared store
            out = await answer(shared)
            observed.append(shared)
            return out

        service.answer = observe
        user = await service.user("console", f"ask:{B.ROLE}")
        await service.erase(user)
        user = await service.user("console", f"ask:{B.ROLE}")
        await service.set_role(user, B.ROLE)
        messages = B.queries(n_queries)
        for text, _ in messages[:10]:
            await service.handle_text(user, text, channel="console")
        rows = []
        for text, _ in messages:
            spent.clear()
            t = time.perf_counter()
            reply = await service.handle_text(user, text, channel="console")
            row: dict[str, Any] = {"total": (time.perf_counter() - t) * 1000, **spent}
            shared = observed[-1]
            for record in shared.get("trace", []):
                row["node." + record["node"]] = row.get("node." + record["node"], 0.0) + record["ms"]
            for key, ms in (shared.get("retrieval_timings") or {}).items():
                if isinstance(ms, int | float):
                    row["search." + key] = ms
            row.update(text=text, citations=list(reply.citations), input_type=shared.get("input_type"))
            rows.append(row)
        gc.callbacks.remove(on_gc)
        return rows
    finally:
        await runtime.close()


def report(rows: list[dict[str, Any]]) -> str:
    numeric = sorted({k for r in rows for k, v in r.items() if isinstance(v, float) and not k.endswith("#n")})
    lines = [f"{'component (ms)':30} {'p50':>7} {'p95':>7} {'mean':>7}"]
    for key in numeric:
        v = [float(r.get(key, 0.0)) for r in rows]
        lines.append(f"{key:30} {np.percentile(v, 50):7.2f} {np.percentile(v, 95):7.2f} {np.mean(v):7.2f}")
    for key in sorted({k for r in rows for k in r if k.endswith("#n")}):
        lines.append(f"calls per message {key[:-2]}: {np.mean([r.get(key, 0) for r in rows]):.2f}")
    total = np.array([r["total"] for r in rows])
    slow = [r for r in rows if r["total"] >= np.percentile(total, 90)]
    means = {k: round(float(np.mean([r.get(k, 0.0) for r in slow])), 1) for k in numeric}
    lines.append(f"slowest tenth ({len(slow)} messages), mean ms: {means}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ask_breakdown")
    ap.add_argument("--size", type=int, default=10_000, help="generated entries added to the role")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--out", type=Path, help="write every message's row as JSON")
    args = ap.parse_args(argv)
    rows = asyncio.run(run(args.size, args.queries))
    print(report(rows))
    if args.out:
        args.out.write_text(json.dumps(rows, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
