"""LLM access through any OpenAI-compatible endpoint (the ``openai`` AsyncOpenAI client).

The client is created with ``max_retries=0``: retries, backoff and fallbacks are the engine's job (the node
that calls the LLM), so behaviour is ours and visible in the trace. Every failure becomes an ``LLMError``
that says whether a retry makes sense and, for 429, how long the server asked us to wait (Retry-After).

``extract_json`` pulls the first JSON value out of model text (code fences, prose before or after, trailing
commas). Token usage is taken from the response, or estimated as characters / 4 when the provider sends none.

Structured outputs: ``complete(..., schema=...)`` asks the server to enforce a JSON schema
(``response_format={"type": "json_schema", "json_schema": {..., "strict": true}}``, which OpenAI, llama.cpp's
server, vLLM and Ollama understand). Whether the server supports it is learnt from the first such call and
remembered for the life of the client (one per process): a 400/404/422/501 to a request that carried a schema,
before any schema request ever succeeded, is followed by the same call without it; when that one succeeds the
server does "not support" it and the caller's own extraction and refine loop does the work from then on (when
it fails too, the error was not about the schema — a prompt over the context size — and nothing is learnt). ``LLMConfig.structured`` forces it
(True: always send, False: never). ``strict_schema`` turns a pydantic model's schema into the strict subset
(every property required, no extra properties, no length keywords, which strict mode rejects).

``CircuitBreaker``: after ``threshold`` consecutive failed LLM steps (a step failed when it fell back to the
offline result: errors, timeouts, replies it could not use) the model is not called for ``cooldown`` seconds;
then one step is let through (half-open) and its outcome closes or re-opens the breaker. One per client.
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LLMConfig:
    base_url: str | None
    api_key: str
    model: str
    timeout: float = 30.0
    temperature: float = 0.2
    max_tokens: int = 900
    structured: bool | None = None  # None: detect whether the server enforces a JSON schema


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.estimated = self.estimated or other.estimated
        self.calls += other.calls

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt_tokens,
            "completion": self.completion_tokens,
            "total": self.total_tokens,
            "estimated": self.estimated,
            "calls": self.calls,
        }


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asked for: its id (echoed in the tool message), name and raw arguments."""

    id: str
    name: str
    arguments: str

    def as_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(slots=True)
class LLMReply:
    text: str
    usage: Usage
    ms: float
    structured: bool = False  # the server was asked to enforce the JSON schema
    tool_calls: list[ToolCall] = field(default_factory=list)  # only when the request declared tools


class LLMError(RuntimeError):
    """A failed LLM call. ``retryable``: worth another attempt; ``retry_after``: seconds asked by the server."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = True,
        retry_after: float | None = None,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.usage = usage


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class CircuitBreaker:
    """Stops calling a model that keeps failing: closed → open after ``threshold`` consecutive failures →
    half-open after ``cooldown`` seconds (one trial let through) → closed on a success, open again on a
    failure. ``clock`` is injectable for tests (monotonic seconds)."""

    def __init__(
        self, threshold: int = 3, cooldown: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threshold, self.cooldown, self.clock = threshold, cooldown, clock
        self.failures = 0
        self.opened_at: float | None = None
        self.trial_out = False
        self.opened_count = 0

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        return "half_open" if self.clock() - self.opened_at >= self.cooldown else "open"

    def allow(self) -> bool:
        """May a step call the model now? In half-open state only one trial at a time."""
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and not self.trial_out:
            self.trial_out = True
            return True
        return False

    def success(self) -> None:
        if self.opened_at is not None:
            log.info("LLM circuit breaker closed: the model answered again")
        self.failures, self.opened_at, self.trial_out = 0, None, False

    def failure(self) -> None:
        self.failures += 1
        if self.opened_at is not None or self.failures >= self.threshold:
            if self.opened_at is None or self.trial_out:
                self.opened_count += 1
                log.warning(
                    "LLM circuit breaker open: %d failed step(s) in a row, offline for %.0f s",
                    self.failures,
                    self.cooldown,
                )
            self.opened_at, self.trial_out = self.clock(), False

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "failures": self.failures, "opened": self.opened_count}


_UNSUPPORTED_SCHEMA_STATUS = (400, 404, 422, 501)
_DROP_KEYWORDS = frozenset(
    (
        "title",
        "default",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "description",
    )
)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The strict-mode subset of a JSON schema (pydantic's ``model_json_schema()``): every object lists all
    its properties as required and allows no others; keywords strict mode rejects are dropped (the pydantic
    model still validates them after the reply)."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items() if k not in _DROP_KEYWORDS}
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out

    return walk(schema)


def _openai() -> ModuleType:
    """The ``openai`` package, imported on first use: about 0.4 s of imports that a process without an LLM
    (most bots offline, every ``medbot import`` or ``medbot kb``) never needs."""
    import openai  # lazy: heavy third-party client, only for processes that call a model

    return openai


def openai_client(base_url: str | None, api_key: str | None, timeout: float, *, max_retries: int) -> Any:
    """The one place an ``openai.AsyncOpenAI`` is built: the chat client below and the embedding client
    (``kb_import.embedders``) differ only in endpoint, key, timeout and retries."""
    return _openai().AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries)


class LLMClient:
    """Chat completions with our error model. One instance per process; safe for concurrent use."""

    def __init__(self, config: LLMConfig, breaker: CircuitBreaker | None = None) -> None:
        self.config = config
        self._client = openai_client(config.base_url, config.api_key, config.timeout, max_retries=0)
        # Whether the server enforces a JSON schema: None until the first schema request tells.
        self.structured: bool | None = config.structured
        self.breaker = breaker or CircuitBreaker()

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        schema: dict[str, Any] | None = None,
        schema_name: str = "output",
        time_limit: float | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> LLMReply:
        """One chat completion. ``schema``: a strict JSON schema the server is asked to enforce when it
        supports structured outputs; ``time_limit``: this call's timeout in seconds (at most the client's);
        ``tools``: function declarations (OpenAI tool calling, ``tool_choice`` "auto"): the reply's
        ``tool_calls`` then lists what the model asked for, and an empty text with tool calls is a reply."""
        openai = _openai()  # imported already: this client was built with it
        t0 = time.perf_counter()
        prompt_chars = sum(len(m.get("content") or "") for m in messages)
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "max_tokens": max_tokens or self.config.max_tokens,
            "temperature": self.config.temperature if temperature is None else temperature,
        }
        if tools:
            kwargs["tools"], kwargs["tool_choice"] = tools, "auto"
        if time_limit is not None:
            kwargs["timeout"] = max(0.01, min(time_limit, self.config.timeout))
        structured = schema is not None and self.structured is not False
        if structured:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        try:
            try:
                resp = await self._client.chat.completions.create(**kwargs)
            except openai.APIStatusError as exc:
                if not (
                    structured and self.structured is None and exc.status_code in _UNSUPPORTED_SCHEMA_STATUS
                ):
                    raise
                # The same request without the schema tells whether the schema was the problem: if it fails
                # too (a prompt over the context size answers 400 either way), nothing is learnt.
                kwargs.pop("response_format")
                structured = False
                resp = await self._client.chat.completions.create(**kwargs)
                log.info(
                    "LLM server answered HTTP %d to a JSON-schema request and 200 without the schema: "
                    "structured outputs off, JSON extraction and refine instead",
                    exc.status_code,
                )
                self.structured = False
        except openai.RateLimitError as exc:
            retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
            raise LLMError("LLM rate limited (429)", retry_after=retry_after) from exc
        except openai.APITimeoutError as exc:
            raise LLMError("LLM timeout") from exc
        except openai.APIConnectionError as exc:
            raise LLMError(f"LLM connection error: {exc}") from exc
        except openai.APIStatusError as exc:
            retryable = exc.status_code >= 500 or exc.status_code in (408, 409)
            raise LLMError(f"LLM HTTP {exc.status_code}", retryable=retryable) from exc
        except openai.OpenAIError as exc:  # malformed body and other client-side surprises
            raise LLMError(f"LLM error: {type(exc).__name__}: {exc}") from exc
        ms = (time.perf_counter() - t0) * 1000
        if structured and self.structured is None:
            log.info("LLM server accepts JSON-schema requests: structured outputs on")
            self.structured = True
        text = ""
        calls: list[ToolCall] = []
        if resp.choices and resp.choices[0].message:
            message = resp.choices[0].message
            text = message.content or ""
            calls = [
                ToolCall(c.id, c.function.name, c.function.arguments or "")
                for c in message.tool_calls or []
                if getattr(c, "function", None) is not None
            ]
        if resp.usage is not None and (resp.usage.prompt_tokens or resp.usage.completion_tokens):
            usage = Usage(resp.usage.prompt_tokens or 0, resp.usage.completion_tokens or 0, False, 1)
        else:
            usage = Usage(max(1, prompt_chars // 4), estimate_tokens(text), True, 1)
        if not text.strip() and not calls:
            raise LLMError("LLM returned an empty reply", usage=usage)
        return LLMReply(text=text, usage=usage, ms=ms, structured=structured, tool_calls=calls)


_FENCE = re.compile(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def extract_json(text: str) -> Any:
    """The first JSON object or array in model output. Raises ``ValueError`` when there is none."""
    if not text or not text.strip():
        raise ValueError("empty reply")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for cand in candidates:
        for i, ch in enumerate(cand):
            if ch not in "{[":
                continue
            for attempt in (cand[i:], _TRAILING_COMMA.sub(r"\1", cand[i:])):
                try:
                    value, _ = decoder.raw_decode(attempt)
                    return value
                except json.JSONDecodeError:
                    continue
    raise ValueError("no JSON value found in the reply")
