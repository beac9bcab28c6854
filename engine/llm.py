"""LLM access through any OpenAI-compatible endpoint (the ``openai`` AsyncOpenAI client).

The client is created with ``max_retries=0``: retries, backoff and fallbacks are the engine's job (the node
that calls the LLM), so behaviour is ours and visible in the trace. Every failure becomes an ``LLMError``
that says whether a retry makes sense and, for 429, how long the server asked us to wait (Retry-After).

``extract_json`` pulls the first JSON value out of model text (code fences, prose before or after, trailing
commas). Token usage is taken from the response, or estimated as characters / 4 when the provider sends none.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import openai


@dataclass(frozen=True, slots=True)
class LLMConfig:
    base_url: str | None
    api_key: str
    model: str
    timeout: float = 30.0
    temperature: float = 0.2
    max_tokens: int = 900


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


@dataclass(slots=True)
class LLMReply:
    text: str
    usage: Usage
    ms: float


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


class LLMClient:
    """Chat completions with our error model. One instance per process; safe for concurrent use."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url, api_key=config.api_key, timeout=config.timeout, max_retries=0
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMReply:
        t0 = time.perf_counter()
        prompt_chars = sum(len(m.get("content", "")) for m in messages)
        try:
            resp = await self._client.chat.completions.create(
                model=self.config.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens or self.config.max_tokens,
                temperature=self.config.temperature if temperature is None else temperature,
            )
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
        text = ""
        if resp.choices and resp.choices[0].message and resp.choices[0].message.content:
            text = resp.choices[0].message.content
        if resp.usage is not None and (resp.usage.prompt_tokens or resp.usage.completion_tokens):
            usage = Usage(resp.usage.prompt_tokens or 0, resp.usage.completion_tokens or 0, False, 1)
        else:
            usage = Usage(max(1, prompt_chars // 4), estimate_tokens(text), True, 1)
        if not text.strip():
            raise LLMError("LLM returned an empty reply", usage=usage)
        return LLMReply(text=text, usage=usage, ms=ms)


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
