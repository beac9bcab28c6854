"""A local OpenAI-compatible HTTP server for tests: real ``POST /v1/chat/completions`` over aiohttp.

Scriptable per test: ``server.push(Reply(...), ...)`` queues replies served in order (then ``default``).
A reply can be a good completion, an HTTP error with headers (429 + Retry-After), a slow reply (for client
timeouts), a malformed body, or an empty message, with or without a ``usage`` block. Every request body is
kept in ``server.requests`` for assertions.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    content: str | None = "{}"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (server-side latency)
    usage: dict[str, int] | None = field(
        default_factory=lambda: {"prompt_tokens": 11, "completion_tokens": 7}
    )
    raw: str | None = None  # a body sent verbatim (malformed JSON...)


def completion_body(reply: Reply, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": "stop",
            }
        ],
    }
    if reply.usage is not None:
        u = dict(reply.usage)
        u["total_tokens"] = u.get("prompt_tokens", 0) + u.get("completion_tokens", 0)
        body["usage"] = u
    return body


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.default = Reply(status=500, content=None)
        self.requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        reply = self.script.pop(0) if self.script else self.default
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            err = {"error": {"message": f"fake error {reply.status}", "type": "server_error", "code": None}}
            return web.json_response(err, status=reply.status, headers=reply.headers)
        if reply.raw is not None:
            return web.Response(text=reply.raw, content_type="application/json", headers=reply.headers)
        return web.json_response(completion_body(reply, body.get("model", "fake")), headers=reply.headers)

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def chat_json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)
