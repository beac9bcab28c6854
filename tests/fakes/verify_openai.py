"""A scriptable fake of the OpenAI chat completions API (aiohttp, real HTTP) for the verifier's agent loop.

Each test scripts the replies: ``server.reply(step, ...)`` where a step is a message dict (``tool_calls(...)``
or ``answer(...)``) or a callable receiving the request body and returning one. Every request body is kept
in ``server.requests``. When the script is exhausted the server answers HTTP 500 (so a test sees the
client's error path). Driven through the real ``openai.AsyncOpenAI`` client pointed at ``server.base_url``.

MERGE NOTE: ``tests/fakes/openai_server.py`` (engine colleague) is the shared fake; this private one can be
folded into it (same wire format) at merge.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

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


class FakeOpenAI:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    def reply(self, *steps: Step) -> None:
        self.steps.extend(steps)

    async def _completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if not self.steps:
            return web.json_response(
                {"error": {"message": "script exhausted", "type": "server_error"}}, status=500
            )
        step = self.steps.pop(0)
        message = step(body) if callable(step) else step
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return web.json_response(
            {
                "id": f"chatcmpl-{next(_ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
