"""A burst of Zalo webhook events: time to acknowledge and time waiting for a database connection (``make bench``,
or ``python -m bench.bench_zalo_burst``).

Setup: the real Zalo webhook app (``bot.zalo.webhook.build_app``: signature check, triage, the dedupe claim,
the chat lock, the real engine of ``bot/wiring.py`` offline with a query embedding per message, the fair-use
counter, PostgreSQL memory) in this process, on a pool sized as ``medbot run`` sizes it for Zalo
(``pool_share(ZALO_CONCURRENCY)`` + ``POOL_RESERVE``); the shipped sample KB; the embedded PostgreSQL (database
``medbot_bench_zalo``, recreated) or ``BENCH_DATABASE_URL``. A child process plays Zalo: the fake Zalo OpenAPI
(testkit/fakes/zalo_server.py, which receives the answers) and the sender of the burst, so that neither costs
this process's event loop anything.

Load: ``--events`` patients (200) who have picked their role send one question each, all at the same moment,
each a different paraphrase of a sample-KB question (no embedding is reused). Before it, not measured and a
few events at a time: every patient picks a role, and 10 other patients ask 3 questions each (model load,
indexes, the diacritic restorer).

Figures: time to acknowledge = from the child starting the POST to its 200 (the webhook answers once the
patient's answer has been sent); connection wait = every ``pool.acquire`` of this process during the burst,
from the call to getting a connection (asyncpg's pool is wrapped for the bench only). ``unbounded`` is the
webhook as it was before ``ZALO_CONCURRENCY`` (no bound, the Zalo-only pool of 10): it is given
``--deadline`` seconds, and what is not acknowledged by then is reported as such.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402
from asyncpg.pool import Pool  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from bench.bench_webhook import ROLES, cold_messages, sample_database  # noqa: E402
from bot.runtime import open_runtime  # noqa: E402
from bot.wiring import chat_service  # noqa: E402
from bot.zalo.webhook import CHANNEL_KEY, POOL_RESERVE, build_app, pool_share, sign  # noqa: E402
from db.settings import load_settings  # noqa: E402
from engine.embedding import DEFAULT_BACKEND  # noqa: E402
from testkit.fakes.zalo_server import FakeZalo  # noqa: E402

OA_SECRET = "bench-oa-secret"
RESULTS = ROOT / "bench" / "results" / "zalo_burst.json"
WARM_USERS = 10
WARM_BATCH = 5

# ------------------------------------------------------------------------------ connection waits (bench only)

WAITS: list[float] = []
_original_acquire = Pool._acquire


async def _timed_acquire(self: Pool, limit: float | None) -> Any:
    started = time.perf_counter()
    try:
        return await _original_acquire(self, limit)
    finally:
        WAITS.append(time.perf_counter() - started)


Pool._acquire = _timed_acquire  # type: ignore[method-assign]

# ---------------------------------------------------------------------------------------- the Zalo side


def event(app_id: str, user_id: str, text: str, n: int) -> dict[str, Any]:
    return {
        "app_id": app_id,
        "user_id_by_app": f"app-{user_id}",
        "event_name": "user_send_text",
        "timestamp": str(int(time.time() * 1000) + n),
        "recipient": {"id": "oa-1"},
        "sender": {"id": user_id},
        "message": {"msg_id": f"{user_id}-{n}-{time.time_ns()}", "text": text},
    }


async def client() -> int:
    """The child process: the fake Zalo OpenAPI and the sender of bursts, driven by JSON lines on stdin."""
    fake = FakeZalo()
    await fake.start()
    print(json.dumps({"base_url": fake.base_url, "app_id": fake.app_id, "app_secret": fake.app_secret,
                      "access_token": fake.access_token, "refresh_token": fake.refresh_token}), flush=True)  # fmt: skip
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    counter = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        while line := await reader.readline():
            cmd = json.loads(line)
            if cmd["cmd"] == "stop":
                break
            before = len(fake.messages)
            bodies = []
            for user_id, text in cmd["messages"]:
                counter += 1
                body = json.dumps(event(fake.app_id, user_id, text, counter), ensure_ascii=False).encode()
                ts = json.loads(body)["timestamp"]
                bodies.append((body, sign(fake.app_id, body, ts, OA_SECRET)))

            async def post(url: str, body: bytes, signature: str) -> tuple[int, float]:
                started = time.perf_counter()
                headers = {"Content-Type": "application/json", "X-ZEvent-Signature": signature}
                try:
                    async with http.post(url, data=body, headers=headers) as resp:
                        await resp.read()
                        return resp.status, (time.perf_counter() - started) * 1000
                except aiohttp.ClientError:
                    return 599, (time.perf_counter() - started) * 1000

            tasks = [asyncio.create_task(post(cmd["url"], b, s)) for b, s in bodies]
            done, pending = await asyncio.wait(tasks, timeout=cmd["deadline"])
            for task in pending:
                task.cancel()
            results = [t.result() for t in done]
            try:
                await fake.wait_for_messages(before + len(bodies), within=max(1.0, cmd["deadline"] / 10))
            except TimeoutError:
                pass
            print(json.dumps({
                "statuses": [s for s, _ in results], "ack_ms": [ms for _, ms in results],
                "unacknowledged": len(pending), "answers": len(fake.messages) - before,
            }), flush=True)  # fmt: skip
    await fake.stop()
    return 0


# ------------------------------------------------------------------------------------------- the bot side


def pct(values: list[float], q: float, digits: int) -> float:
    ordered = sorted(values)
    return (
        round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], digits) if ordered else 0.0
    )


def summary(values_ms: list[float], digits: int = 1) -> dict[str, float]:
    return {"p50": pct(values_ms, 0.5, digits), "p95": pct(values_ms, 0.95, digits),
            "max": round(max(values_ms, default=0.0), digits)}  # fmt: skip


class Child:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, cmd: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(cmd, ensure_ascii=False) + "\n").encode())
        await self.proc.stdin.drain()

    async def call(self, cmd: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        await self.send(cmd)
        return json.loads(await self.proc.stdout.readline())


async def run_once(db_url: str, mode: str, concurrency: int, events: int, deadline: float) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.bench_zalo_burst", "--client", cwd=ROOT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    child = Child(proc)
    assert proc.stdout is not None
    zalo = json.loads(await proc.stdout.readline())
    settings = load_settings(
        database_url=db_url, openai_api_key=None, zalo_app_id=zalo["app_id"],
        zalo_app_secret=SecretStr(zalo["app_secret"]), zalo_oa_secret=SecretStr(OA_SECRET),
        zalo_oa_access_token=SecretStr(zalo["access_token"]), zalo_oa_refresh_token=SecretStr(zalo["refresh_token"]),
        zalo_api_base=zalo["base_url"], zalo_oauth_base=zalo["base_url"], zalo_concurrency=concurrency,
    )  # fmt: skip
    # 10: the old Zalo-only pool
    pool_size = 10 if mode == "unbounded" else pool_share(settings) + POOL_RESERVE
    runtime = await open_runtime(settings, pool_size=pool_size)
    await runtime.pool.execute(
        "TRUNCATE users, processed_updates, rate_counters, channel_tokens RESTART IDENTITY CASCADE"
    )
    app = await build_app(runtime, await chat_service(runtime))  # the services from the composition root
    channel = app[CHANNEL_KEY]
    if mode == "unbounded":
        channel.slots = asyncio.Semaphore(1_000_000)
    slots = channel.slots._value
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/zalo/webhook"  # type: ignore[union-attr]

    # Not measured, in batches of WARM_BATCH (the unbounded webhook hangs on more distinct senders at once than
    # its pool has connections): every patient of the burst picks a role, and patients of their own ask a few
    # questions (model, indexes, restorer, pool connections).
    warm = [f"w{i}" for i in range(WARM_USERS)]
    patients = [f"p{i}" for i in range(events)]

    async def in_batches(messages: list[tuple[str, str]]) -> int:
        ok = 0
        for start in range(0, len(messages), WARM_BATCH):
            batch = messages[start : start + WARM_BATCH]
            done = await child.call({"cmd": "burst", "url": url, "messages": batch, "deadline": 60})
            assert done["statuses"] == [200] * len(batch), done
            ok += len(batch)
        return ok

    await in_batches([(u, f"#role:{ROLES[i % 2][0]}") for i, u in enumerate(warm + patients)])
    rng, seen = random.Random(events), set()
    texts = {role: cold_messages(questions, events + 3 * WARM_USERS, rng, seen) for role, questions in ROLES}

    def questions(users: list[str], offset: int) -> list[tuple[str, str]]:
        return [(u, texts[ROLES[i % 2][0]][offset + i // 2]) for i, u in enumerate(users)]

    warmed = await in_batches(questions(warm * 3, 0))
    await asyncio.sleep(2)  # the diacritic restorer is built in the background after the index
    load0 = os.getloadavg()[0]
    WAITS.clear()
    started = time.monotonic()
    burst = await child.call({"cmd": "burst", "url": url, "messages": questions(patients, 3 * WARM_USERS),
                              "deadline": deadline})  # fmt: skip
    wall = time.monotonic() - started
    waits_ms = [w * 1000 for w in WAITS]
    load1 = os.getloadavg()[0]

    await child.send({"cmd": "stop"})
    await proc.wait()
    try:
        await asyncio.wait_for(runner.cleanup(), 10)
        await asyncio.wait_for(runtime.close(), 10)
    except TimeoutError:  # the unbounded webhook's handlers may still hold every connection
        runtime.pool.terminate()
    ok = burst["statuses"].count(200)
    return {
        "mode": mode,
        "zalo_concurrency": concurrency if mode != "unbounded" else None,
        "slots": slots if mode != "unbounded" else None,
        "pool_size": pool_size,
        "events": events,
        "acknowledged_200": ok,
        "unacknowledged_after_deadline": burst["unacknowledged"],
        "answered": burst["answers"],
        "warmup_questions": warmed,
        "seconds": round(wall, 2),
        "ack_ms": summary(burst["ack_ms"]),
        "connection_wait_ms": summary(waits_ms, 3),
        "connection_acquires": len(waits_ms),
        "connection_waits_over_100ms": sum(w > 100 for w in waits_ms),
        "connection_waits_over_1s": sum(w > 1000 for w in waits_ms),
        "load_avg_1m": [round(load0, 2), round(load1, 2)],
    }


async def amain(args: argparse.Namespace) -> int:
    os.environ.pop("OPENAI_API_KEY", None)  # offline mode, whatever the caller's shell has
    os.environ["EMBEDDING_BACKEND"] = args.backend
    load_before = os.getloadavg()
    db_url = await sample_database("medbot_bench_zalo")
    rows = []
    for mode in args.modes:
        for concurrency in [1] if mode == "unbounded" else args.concurrency:
            print(f"run: {mode} ZALO_CONCURRENCY={concurrency}", flush=True)
            rows.append(await run_once(db_url, mode, concurrency, args.events, args.deadline))
    print(f"{'mode':>9} {'slots':>5} {'pool':>4} {'200s':>5} {'answered':>8} | ack ms p50 {'p95':>6} {'max':>6} | "
          f"conn wait ms p50 {'p95':>6} {'max':>6} {'>1s':>4} | load 1m")  # fmt: skip
    for r in rows:
        a, c = r["ack_ms"], r["connection_wait_ms"]
        print(f"{r['mode']:>9} {r['slots'] or '-':>5} {r['pool_size']:>4} {r['acknowledged_200']:>5} "
              f"{r['answered']:>8} | {a['p50']:>10} {a['p95']:>6} {a['max']:>6} | {c['p50']:>16} {c['p95']:>6} "
              f"{c['max']:>6} {r['connection_waits_over_1s']:>4} | {r['load_avg_1m'][0]}→{r['load_avg_1m'][1]}")  # fmt: skip
    meta = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "engine": "real (bot/wiring.py build_service → run_medical_flow), offline, local query embedding",
        "kb": "kb_import/sample (patient_dental + patient_diabetes patients)",
        "embedding_backend": args.backend,
        "deadline_s": args.deadline,
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"meta": meta, "runs": rows}, indent=2, ensure_ascii=False) + "\n")
    print(f"written {RESULTS.relative_to(ROOT)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[4, 8, 16], help="ZALO_CONCURRENCY values"
    )
    parser.add_argument(
        "--modes", nargs="+", choices=["bounded", "unbounded"], default=["bounded", "unbounded"]
    )
    parser.add_argument("--deadline", type=float, default=60.0, help="seconds a burst is given")
    parser.add_argument(
        "--backend", default=DEFAULT_BACKEND, help="EMBEDDING_BACKEND (default: the product's)"
    )
    args = parser.parse_args(argv if argv is not None else [])
    if args.client:
        return asyncio.run(client())
    return asyncio.run(amain(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
