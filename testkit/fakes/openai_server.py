"""A local OpenAI-compatible HTTP server for tests: real ``POST /v1/chat/completions`` and ``POST /v1/embeddings``
over aiohttp.

Scriptable per test: ``server.push(...)`` queues replies served in order (then ``model``'s reply when a
stand-in model is set, else ``default``, an HTTP 500, so an exhausted script shows the client's error path).
A reply is either

* a ``Reply``: a good completion, an HTTP error with headers (429 + Retry-After), a slow reply (for client
  timeouts), a malformed body, or an empty message, with or without a ``usage`` block; or
* an agent step: an assistant message dict (``tool_calls(...)`` or ``answer(...)``), or a callable that
  receives the request body and returns one (the verifier's tool loop).

Every request body is kept in ``server.requests`` for assertions. ``structured`` says whether the server
supports structured outputs: True (default) accepts ``response_format`` (the scripted reply is what a
schema-constrained model would send); False answers a request carrying ``response_format`` with HTTP 400, as
servers without the feature do. Driven through the real
``openai.AsyncOpenAI`` client pointed at ``server.base_url``.

``/v1/embeddings`` answers as the OpenAI API does (``data`` items with ``index``, float lists or base64 of
little-endian float32 when ``encoding_format`` is ``base64``, ``usage``) from a deterministic stand-in model:
each word is a fixed random direction and a text the normalised sum of its words, so texts sharing words are
close. ``embedding_seed`` is the model's weights (change it: the server's model changed under the same name),
``embedding_dim`` its dimension, ``embedding_status`` an HTTP error to answer with (503: the server is down).
Bodies are kept in ``server.embedding_requests``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

from testkit.fakes.local_http import serve


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
    # A reply the test holds mid-flight: ``arrived`` is set when its request comes in, and the answer waits
    # until ``gate`` is set (a client killed meanwhile never gets it).
    arrived: asyncio.Event | None = None
    gate: asyncio.Event | None = None


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
        # A stand-in model answering every request the script does not (testkit/fakes/flow_model.py).
        self.model: Callable[[dict[str, Any]], Reply | Step] | None = None
        self.requests: list[dict[str, Any]] = []
        self.structured = True
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.embedding_seed = 0
        self.embedding_dim = 384
        self.embedding_status = 200
        self.embedding_requests: list[dict[str, Any]] = []

    def push(self, *replies: Reply | Step) -> None:
        self.script.extend(replies)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if not self.structured and "response_format" in body:
            err = {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}}
            return web.json_response(err, status=400)
        if self.script:
            reply = self.script.pop(0)
        else:
            reply = self.model(body) if self.model is not None else self.default
        if not isinstance(reply, Reply):  # an agent step
            message = reply(body) if callable(reply) else reply
            return web.json_response(completion_body(Reply(), body.get("model", "fake"), message))
        if reply.arrived is not None:
            reply.arrived.set()
        if reply.gate is not None:
            await reply.gate.wait()
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            err = {"error": {"message": f"fake error {reply.status}", "type": "server_error", "code": None}}
            return web.json_response(err, status=reply.status, headers=reply.headers)
        if reply.raw is not None:
            return web.Response(text=reply.raw, content_type="application/json", headers=reply.headers)
        return web.json_response(completion_body(reply, body.get("model", "fake")), headers=reply.headers)

    def embed(self, text: str) -> np.ndarray:
        """The stand-in model's vector of ``text`` (unit length)."""
        vector = np.zeros(self.embedding_dim, np.float64)
        for word in re.findall(r"\w+", text.lower()):
            seed = int.from_bytes(
                hashlib.sha256(f"{self.embedding_seed}:{word}".encode()).digest()[:8], "little"
            )
            vector += np.random.default_rng(seed).normal(size=self.embedding_dim)
        norm = np.linalg.norm(vector)
        return (vector / norm if norm else vector).astype(np.float32)

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.embedding_requests.append(body)
        if self.embedding_status != 200:
            err = {"error": {"message": "model not loaded", "type": "server_error", "code": None}}
            return web.json_response(err, status=self.embedding_status)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for i, text in enumerate(texts):
            vector = self.embed(text)
            if body.get("encoding_format") == "base64":
                value: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
            else:
                value = [float(x) for x in vector]
            data.append({"object": "embedding", "index": i, "embedding": value})
        tokens = sum(len(t.split()) for t in texts)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        self._runner, root = await serve(app)
        self.base_url = f"{root}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def chat_json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)
