"""The Zalo test harness: the real engine (``bot.wiring.build_service``) and database, the webhook app on a
random port (real HTTP), a fake Zalo OpenAPI, and signed fixture events built with the real signing rule."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
from aiohttp import web

from bot.runtime import Runtime
from bot.service import ChatService
from bot.wiring import build_service, console_services
from bot.zalo.webhook import CHANNEL_KEY, ZaloChannel, build_app, sign
from db.settings import Settings, load_settings
from db.stores import PgEmbeddingCache
from engine.embedding import CachedEmbedder, E5Embedder
from engine.types import KBEntry
from kb_import.add import add_entries
from testkit.fakes.zalo_server import FakeZalo

OA_SECRET = "oa-secret-key"
ROLE = "patient_dental"
_E5: E5Embedder | None = None
_ids = itertools.count(1)


def shared_e5() -> E5Embedder:
    """One model per test session (loading it is the slow part)."""
    global _E5
    if _E5 is None:
        _E5 = E5Embedder()
    return _E5


PARA = (
    "Người đang niềng răng cần chải răng sau mỗi bữa ăn bằng bàn chải lông mềm và bàn chải kẽ, chải kỹ quanh "
    "từng mắc cài và dưới dây cung, mỗi lần ít nhất hai phút. Nên dùng chỉ nha khoa có đầu luồn hoặc máy tăm "
    "nước để làm sạch kẽ răng, súc miệng bằng nước súc miệng có fluor trước khi ngủ, hạn chế đồ ngọt, nước "
    "có ga và thức ăn cứng, dai như kẹo dẻo hay xương. Tái khám đúng hẹn để bác sĩ siết dây và kiểm tra "
    "tình trạng nướu."
)  # ~450 characters
LONG_ANSWER = "\n\n".join(f"Phần {i}. {PARA}" for i in range(1, 8))  # ~3,200 characters, 7 paragraphs
LONG_QUESTION = "Người đang niềng răng chăm sóc răng miệng hằng ngày như thế nào?"

ENTRIES = [
    ("D001", "Răng bị ê buốt khi uống nước lạnh là bệnh gì?", "Ê buốt răng thường do mòn men răng hoặc tụt "
     "nướu làm lộ ngà răng. Bạn nên dùng kem đánh răng chống ê buốt và đi khám nha sĩ.", "ê buốt; nhạy cảm"),
    ("D002", "Sau khi nhổ răng khôn nên ăn gì?", "Trong 24 giờ đầu nên ăn đồ mềm, nguội như cháo, súp; "
     "không súc miệng mạnh, không hút thuốc.", "nhổ răng khôn; ăn uống"),
    ("D003", "Bao lâu nên đi lấy cao răng một lần?", "Thông thường 6 tháng một lần, sớm hơn nếu nhiều cao "
     "răng hoặc viêm nướu.", "cao răng; cạo vôi"),
    ("D004", "Trẻ mấy tuổi thì nên đi khám răng lần đầu?", "Nên đưa trẻ đi khám khi mọc chiếc răng đầu tiên "
     "hoặc muộn nhất lúc 1 tuổi.", "trẻ em; khám răng"),
    ("D005", "Niềng răng mất bao lâu?", "Thường từ 18 đến 30 tháng tuỳ mức độ lệch lạc.", "niềng răng; thời gian"),
    ("D006", "Ê buốt răng sau khi tẩy trắng có sao không?", "Ê buốt nhẹ vài ngày sau tẩy trắng là thường gặp.",
     "tẩy trắng; ê buốt"),
    ("D099", LONG_QUESTION, LONG_ANSWER, "niềng răng; vệ sinh; chải răng"),
]  # fmt: skip


async def seed_kb(
    pool: asyncpg.Pool, embedder: CachedEmbedder, entries: list[tuple[str, str, str, str]]
) -> None:
    """The harness's dental entries ``(code, question, answer, "keyword; keyword")``, topic "Nha khoa"."""
    dental = [
        KBEntry(id=0, role=ROLE, code=code, question=question, answer=answer, topic="Nha khoa",
                keywords=[k.strip() for k in keywords.split(";")])
        for code, question, answer, keywords in entries
    ]  # fmt: skip
    await add_entries(pool, embedder, dental)


@dataclass
class Zalo:
    fake: FakeZalo
    settings: Settings
    runtime: Runtime
    service: ChatService
    channel: ZaloChannel
    url: str
    http: httpx.AsyncClient

    def event(self, user_id: str, text: str | None = None, *, name: str = "user_send_text",
              msg_id: str | None = None, **extra: Any) -> dict[str, Any]:  # fmt: skip
        """A Zalo webhook event as Zalo sends it."""
        event: dict[str, Any] = {
            "app_id": self.settings.zalo_app_id,
            "user_id_by_app": f"app-{user_id}",
            "event_name": name,
            "timestamp": str(int(time.time() * 1000) + next(_ids)),
            "recipient": {"id": "oa-1"},
        }
        if name in ("follow", "unfollow"):
            event.update({"oa_id": "oa-1", "follower": {"id": user_id}, "source": "oa_profile"})
        else:
            event["sender"] = {"id": user_id}
            message: dict[str, Any] = {"msg_id": msg_id or f"m{next(_ids)}"}
            if text is not None:
                message["text"] = text
            event["message"] = message
        event.update(extra)
        return event

    def signature(self, body: bytes, event: dict[str, Any]) -> str:
        assert self.settings.zalo_app_id is not None
        return sign(self.settings.zalo_app_id, body, str(event["timestamp"]), OA_SECRET)

    async def post(self, event: dict[str, Any], *, signature: str | None = "auto",
                   body: bytes | None = None) -> httpx.Response:  # fmt: skip
        raw = body if body is not None else json.dumps(event, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json"}
        if signature == "auto":
            headers["X-ZEvent-Signature"] = self.signature(raw, event)
        elif signature is not None:
            headers["X-ZEvent-Signature"] = signature
        return await self.http.post(f"{self.url}/zalo/webhook", content=raw, headers=headers)

    async def say(self, user_id: str, text: str) -> httpx.Response:
        response = await self.post(self.event(user_id, text))
        assert response.status_code == 200, response.text
        return response

    async def choose_role(self, user_id: str, role: str = ROLE) -> None:
        await self.say(user_id, f"#role:{role}")


@asynccontextmanager
async def zalo_harness(pool: asyncpg.Pool, *, seed: bool = True, **settings: Any) -> AsyncIterator[Zalo]:
    fake = FakeZalo()
    await fake.start()
    config = load_settings(
        zalo_app_id=fake.app_id,
        zalo_app_secret=fake.app_secret,
        zalo_oa_secret=OA_SECRET,
        zalo_oa_access_token=fake.access_token,
        zalo_oa_refresh_token=fake.refresh_token,
        zalo_api_base=fake.base_url,
        zalo_oauth_base=fake.base_url,
        score_threshold=0.05,
        openai_api_key=None,
        **settings,
    )
    runtime = Runtime(settings=config, url="", pool=pool)
    embedder = CachedEmbedder(shared_e5(), PgEmbeddingCache(pool))
    runtime.extras["embedder"] = embedder
    if seed:
        await seed_kb(pool, embedder, ENTRIES)
    service = await build_service(runtime)
    app = await build_app(runtime, service, console_services(runtime, service))
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    http = httpx.AsyncClient(timeout=60)
    try:
        yield Zalo(fake, config, runtime, service, app[CHANNEL_KEY], f"http://127.0.0.1:{port}", http)
    finally:
        await http.aclose()
        await runner.cleanup()
        await fake.stop()


async def count_rows(pool: asyncpg.Pool) -> dict[str, int]:
    tables = ["users", "messages", "conversations", "processed_updates", "suggestion_sets", "feedback"]
    return {t: int(await pool.fetchval(f"SELECT count(*) FROM {t}")) for t in tables}
