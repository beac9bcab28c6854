"""Webhook throughput and p95 reply latency on loopback (``make bench``, or ``python -m bench.bench_webhook``).

Setup: the fake Telegram Bot API (tests/fakes) acting as Telegram + load balancer, 1 and 2 ``medbot run``
webhook worker processes, a small sample dental KB, offline mode (no LLM key), the embedded PostgreSQL
(database ``medbot_bench``, recreated) or ``BENCH_DATABASE_URL``.

Load: ``--chats`` chats each sending ``--messages`` questions; like Telegram, the fake delivers one update
per chat at a time and different chats concurrently. Latency = from the fake starting the webhook POST to
the bot's reply arriving at the fake (sendMessage). Throughput = messages / wall time of the run.
Everything (bot workers, fake, PostgreSQL) shares this machine's cores, so figures are a lower bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from db import kb  # noqa: E402
from db.pool import create_pool  # noqa: E402
from engine.types import KBEntry  # noqa: E402
from tests.e2e.conftest import TOKEN, bot_processes  # noqa: E402
from tests.fakes.telegram_server import FakeTelegram  # noqa: E402

SAMPLE_KB = [
    ("B001", "Răng bị ê buốt khi uống nước lạnh thì làm sao?", "Dùng kem đánh răng cho răng nhạy cảm, khám nha sĩ.", "Răng nhạy cảm"),
    ("B002", "Có nên lấy cao răng định kỳ không?", "Nên lấy cao răng 6 tháng một lần.", "Vệ sinh"),
    ("B003", "Trẻ em mấy tuổi thì nên đi khám răng lần đầu?", "Khi mọc chiếc răng đầu tiên.", "Nha khoa trẻ em"),
    ("B004", "Niềng răng mất bao lâu thì xong?", "Thường từ 18 đến 24 tháng.", "Chỉnh nha"),
    ("B005", "Răng khôn mọc lệch có cần nhổ không?", "Cần chụp phim để bác sĩ đánh giá.", "Răng khôn"),
    ("B006", "Chảy máu chân răng khi đánh răng là bệnh gì?", "Thường do viêm nướu; nên lấy cao răng.", "Nướu"),
    ("B007", "Tẩy trắng răng có hại men răng không?", "Đúng chỉ định thì an toàn.", "Thẩm mỹ"),
    ("B008", "Bị hôi miệng kéo dài phải làm gì?", "Vệ sinh lưỡi, lấy cao răng, khám nha sĩ.", "Hôi miệng"),
    ("B009", "Trám răng có đau không?", "Thường không đau, có thể gây tê.", "Điều trị"),
    ("B010", "Bao lâu nên thay bàn chải đánh răng?", "Khoảng 3 tháng một lần.", "Vệ sinh"),
    ("B011", "Bọc răng sứ giữ được bao lâu?", "Trung bình 10–15 năm nếu chăm sóc tốt.", "Phục hình"),
    ("B012", "Cấy ghép implant có đau không?", "Được gây tê, sau đó đau nhẹ vài ngày.", "Implant"),
]  # fmt: skip


async def _database() -> str:
    from tests.conftest import TEST_DATA_DIR, TUNING, recreate_database

    url = os.environ.get("BENCH_DATABASE_URL")
    if not url:
        from db.embedded import ensure_server

        url = await asyncio.to_thread(ensure_server, TEST_DATA_DIR, tuning=TUNING)
    db_url = await recreate_database(url, "medbot_bench")
    from db import migrate

    await migrate.upgrade(db_url)
    pool = await create_pool(db_url, max_size=2)
    for code, q, a, topic in SAMPLE_KB:
        await kb.add_entry(
            pool, KBEntry(id=0, role="patient_dental", code=code, question=q, answer=a, topic=topic)
        )
    await pool.close()
    return db_url


async def run_once(db_url: str, workers: int, chats: int, messages: int) -> dict[str, Any]:
    pool = await create_pool(db_url, max_size=1)
    await pool.execute(
        "TRUNCATE users, processed_updates RESTART IDENTITY CASCADE"
    )  # same start for each run
    await pool.close()
    async with FakeTelegram(TOKEN) as fake:
        logs = ROOT / "bench" / "results" / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        if True:
            async with bot_processes(db_url, fake, logs) as start:
                procs = [await start(wait_webhook=False, admin_ids="") for _ in range(workers)]
                fake.webhook_targets = [p.webhook for p in procs]
                await fake.wait_for(lambda: fake.webhook_secret is not None, 60, "setWebhook")
                chat_ids = [700_000 + i for i in range(chats)]
                # Warm-up: every chat picks its role (not measured).
                for c in chat_ids:
                    await fake.send_text(c, "/start patient_dental")
                for c in chat_ids:
                    await fake.wait_for_messages(c, 1, 60)
                sent: dict[int, list[int]] = {c: [] for c in chat_ids}
                started = time.monotonic()
                for k in range(messages):
                    for c in chat_ids:
                        q = SAMPLE_KB[(c + k) % len(SAMPLE_KB)][1]
                        sent[c].append(await fake.send_text(c, q))
                for c in chat_ids:
                    await fake.wait_for_messages(c, 1 + messages, 300)
                wall = time.monotonic() - started
    latencies = []
    for c in chat_ids:
        replies = fake.messages[c][1:]
        for update_id, reply in zip(sent[c], replies, strict=True):
            latencies.append((reply.sent_at - fake.delivery_started[update_id]) * 1000)
    latencies.sort()
    total = chats * messages
    return {
        "workers": workers,
        "chats": chats,
        "messages": total,
        "seconds": round(wall, 2),
        "msg_per_s": round(total / wall, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        "max_ms": round(latencies[-1], 1),
    }


async def amain(args: argparse.Namespace) -> int:
    db_url = await _database()
    rows = [await run_once(db_url, w, args.chats, args.messages) for w in args.workers]
    header = f"{'workers':>7} {'chats':>6} {'messages':>8} {'seconds':>8} {'msg/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
    print(header)
    for r in rows:
        print(
            f"{r['workers']:>7} {r['chats']:>6} {r['messages']:>8} {r['seconds']:>8} {r['msg_per_s']:>8} "
            f"{r['p50_ms']:>8} {r['p95_ms']:>8} {r['max_ms']:>8}"
        )
    out = ROOT / "bench" / "results" / "webhook.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"cpus": os.cpu_count(), "python": platform.python_version(), "engine": "interim (bot/wiring.py)"}
    out.write_text(json.dumps({"meta": meta, "runs": rows}, indent=2, ensure_ascii=False) + "\n")
    print(f"written {out.relative_to(ROOT)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20, help="messages per chat")
    return asyncio.run(amain(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
