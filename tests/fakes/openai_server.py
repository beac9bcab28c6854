"""A local OpenAI-compatible HTTP server for tests: real ``POST /v1/chat/completions`` over aiohttp.

Scriptable per test: ``server.push(...)`` queues replies served in order (then ``default``, an HTTP 500, so
an exhausted script shows the client's error path). A reply is either

* a ``Reply``: a good completion, an HTTP error with headers (429 + Retry-After), a slow reply (for client
  timeouts), a malformed body, or an empty message, with or without a ``usage`` block; or
* an agent step: an assistant message dict (``tool_calls(...)`` or ``answer(...)``), or a callable that
  receives the request body and returns one (the verifier's tool loop).

Every request body is kept in ``server.requests`` for assertions. Driven through the real
``openai.AsyncOpenAI`` client pointed at ``server.base_url``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
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


Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
_ids = itertools.count(1)


def tool_calls(*calls: tuple[str, Any]) -> dict[str, Any]:
    """An assistant message calling tools; arguments may be a dict (JSON-encoded) or a raw string."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for name, args in calls
        ],
    }


def answer(content: str | dict[str, Any]) -> dict[str, Any]:
    """A final assistant message (a dict is sent as JSON text)."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": "assistant", "content": text}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The decoded tool messages of a request, oldest first."""
    return [json.loads(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


def completion_body(reply: Reply, model: str, message: dict[str, Any] | None = None) -> dict[str, Any]:
    message = message or {"role": "assistant", "content": reply.content}
    body: dict[str, Any] = {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                "logprobs": None,
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
        self.script: list[Reply | Step] = []
        self.default = Reply(status=500, content=None)
        self.requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    def push(self, *replies: Reply | Step) -> None:
        self.script.extend(replies)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        reply = self.script.pop(0) if self.script else self.default
        if not isinstance(reply, Reply):  # an agent step
            message = reply(body) if callable(reply) else reply
            return web.json_response(completion_body(Reply(), body.get("model", "fake"), message))
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
