"""``StructuredNode``, the typed LLM building block of the flow, and what it shares with the nodes built on it:
the message's LLM time budget (``llm_deadline``), the per-step switches (``step_on``), the record of where
the model and the offline path disagreed (``disagree``) and the errors that send a step offline.

Framework only: the medical steps built on it are ``engine.nodes`` (classification, pruning) and
``engine.reply_nodes`` (composing the answer).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ValidationError

from engine import prompts
from engine.core import Node
from engine.llm import LLMClient, LLMError, Usage, extract_json, strict_schema
from engine.shared import deps_of, usage_of

log = logging.getLogger(__name__)


class GuardrailViolation(ValueError):
    """The model answered, but not acceptably. Retried at once with the error fed back.

    The message (``str()``: what logs, traces and the fallback's error show) names only what was wrong —
    error types and field names — never the values, because the model's values echo or paraphrase the
    patient's message. ``detail`` is the fuller explanation fed back to the model (which wrote the values)."""

    retry_now = True

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message


def schema_errors(exc: ValidationError, limit: int = 3) -> tuple[str, str]:
    """(log-safe summary, detail for the model) of a validation error of the model's output: the summary has
    the field path and error type of each error (``input_type: literal_error``), the detail adds pydantic's
    message (``Input should be 'greeting' or …``); neither includes the rejected value."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)[:limit]
    paths = [".".join(str(part) for part in e["loc"]) or "(root)" for e in errors]
    summary = "; ".join(f"{path}: {e['type']}" for path, e in zip(paths, errors, strict=True))
    detail = "; ".join(f"{path}: {e['msg']}" for path, e in zip(paths, errors, strict=True))
    return f"JSON does not match the schema ({summary})", f"JSON does not match the schema: {detail}"


class NoLLM(RuntimeError):
    """The step does not call the model (none configured, not allowed, switched off, breaker open, budget
    spent before the first call): the offline result, and not an error."""

    retryable = False


class BudgetSpent(RuntimeError):
    """The message's LLM time budget ran out while the step was trying: the offline result goes out."""

    retryable = False


LLM_STEPS = ("classify", "expand", "prune", "compose")


def llm_deadline(shared: dict[str, Any]) -> float:
    """The monotonic time by which every LLM step of this message must be done (``run_medical_flow`` sets it
    from ``EngineConfig.llm_budget``; a node run alone starts the budget now)."""
    if "llm_deadline" not in shared:
        shared["llm_deadline"] = time.monotonic() + deps_of(shared).config.llm_budget
    return float(shared["llm_deadline"])


def step_on(shared: dict[str, Any], step: str) -> bool:
    return deps_of(shared).config.llm_steps.get(step, True)


def disagree(shared: dict[str, Any], node: Node, record: dict[str, Any]) -> None:
    """The LLM and the offline path disagreed: kept in the shared store and in the node's trace record."""
    shared.setdefault("disagreements", []).append(record)
    node.trace_extra.setdefault("disagreements", []).append(record)


@dataclass(slots=True)
class Structured:
    value: Any
    source: Literal["llm", "offline", "skipped"]
    error: str | None = None


class StructuredNode(Node):
    """An LLM step with a typed output: prompt templates → JSON → pydantic model → guardrails.

    The server is asked to enforce the output's JSON schema when it supports structured outputs
    (``engine.llm``); the reply is validated either way. A violation (no JSON, invalid fields, too long, a
    guardrail) is fed back to the model and retried at once; transport failures (429, 5xx, timeouts, empty
    output) are retried with backoff (429: Retry-After) — all within the message's time budget
    (``llm_deadline``): each call's timeout is what is left of it, and when it is spent the step stops.
    When attempts run out — or the step does not call the model at all (no LLM configured, the message's
    ``llm_allowed`` is False, the step switched off, the circuit breaker open) — ``offline(prep)`` produces
    the result instead. The trace record carries ``llm``: the step's model time, tokens, calls and outcome.
    """

    step: ClassVar[str] = ""
    output_model: ClassVar[type[BaseModel]]
    system_template: ClassVar[str]
    user_template: ClassVar[str]
    max_output_chars: ClassVar[int] = 6000
    max_tokens: ClassVar[int | None] = None
    _schemas: ClassVar[dict[type[BaseModel], dict[str, Any]]] = {}

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        if cls.output_model not in StructuredNode._schemas:
            StructuredNode._schemas[cls.output_model] = strict_schema(cls.output_model.model_json_schema())
        return StructuredNode._schemas[cls.output_model]

    def context(self, shared: dict[str, Any]) -> dict[str, Any]:
        return dict(shared)

    def guardrails(self, out: Any, prep: dict[str, Any]) -> list[str]:
        """Problems with a schema-valid output, fed back to the model and logged: name fields and limits,
        never quote the output's values (they echo the patient's message)."""
        return []

    def skip(self, prep: dict[str, Any]) -> Any | None:
        """A value to use without calling the LLM at all (e.g. nothing to prune), or None."""
        return None

    def steps_on(self, shared: dict[str, Any]) -> bool:
        """Whether the switches let this step call the model."""
        return step_on(shared, self.step)

    async def offline(self, prep: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def apply(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str | None:
        return None

    def unavailable(self, shared: dict[str, Any]) -> str | None:
        """Why this step will not call the model for this message, or None."""
        deps = deps_of(shared)
        if deps.llm is None:
            return "no LLM configured"
        if shared.get("llm_allowed") is False:  # set by the caller per message (fair use, …)
            return "LLM not allowed for this message"
        if not self.steps_on(shared):
            return "step switched off"
        return None

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        cfg = deps.config
        self.max_retries, self.wait, self.max_wait = cfg.llm_attempts, cfg.llm_wait, cfg.llm_max_wait
        deadline = llm_deadline(shared)
        if deps.llm is not None:  # the client's own timeout (capped by the budget) fires first
            self.timeout = min(deps.llm.config.timeout, max(0.0, deadline - time.monotonic())) + 5
        self.usage = Usage()
        self.llm_ms = 0.0
        self.calls = 0
        self.structured_calls = 0
        self.feedback: list[dict[str, str]] = []
        ctx = self.context(shared)
        why_not = self.unavailable(shared)
        messages = []
        if why_not is None:  # offline: no prompt to render
            messages = [
                {"role": "system", "content": prompts.render(self.system_template, ctx)},
                {"role": "user", "content": prompts.render(self.user_template, ctx)},
            ]
        return {
            "llm": deps.llm if why_not is None else None,
            "why_not": why_not,
            "deadline": deadline,
            "ctx": ctx,
            "messages": messages,
        }

    def retry_delay(self, attempt: int, exc: BaseException) -> float:
        # Never sleep past the budget: the next attempt then sees it spent and the offline answer goes out.
        remaining = getattr(self, "_deadline", float("inf")) - time.monotonic()
        return max(0.0, min(super().retry_delay(attempt, exc), remaining))

    async def exec(self, prep: dict[str, Any]) -> Structured:
        skipped = self.skip(prep)
        if skipped is not None:
            return Structured(skipped, "skipped")
        llm: LLMClient | None = prep["llm"]
        if llm is None:
            raise NoLLM(prep["why_not"] or "no LLM configured")
        self._deadline = prep["deadline"]
        remaining = prep["deadline"] - time.monotonic()
        if remaining <= 0.05:
            if self.calls == 0:
                raise NoLLM("time budget spent")
            raise BudgetSpent(f"time budget spent after {self.calls} call(s)")
        if self.calls == 0 and not llm.breaker.allow():
            raise NoLLM("circuit breaker open")
        self.calls += 1
        t0 = time.perf_counter()
        try:
            reply = await llm.complete(
                prep["messages"] + self.feedback,
                max_tokens=self.max_tokens,
                schema=self.json_schema(),
                schema_name=self.step or self.name,
                time_limit=remaining,
            )
        except LLMError as exc:
            if exc.usage:
                self.usage.add(exc.usage)
            raise
        finally:
            self.llm_ms += (time.perf_counter() - t0) * 1000
        self.usage.add(reply.usage)
        self.structured_calls += reply.structured
        try:
            if len(reply.text) > self.max_output_chars:
                raise GuardrailViolation(f"reply longer than {self.max_output_chars} characters")
            try:
                data = extract_json(reply.text)
            except ValueError as exc:
                raise GuardrailViolation(f"not valid JSON ({exc})") from exc
            try:
                out = self.output_model.model_validate(data)
            except ValidationError as exc:
                raise GuardrailViolation(*schema_errors(exc)) from exc
            problems = self.guardrails(out, prep)
            if problems:
                raise GuardrailViolation("; ".join(problems))
        except GuardrailViolation as exc:
            self.feedback = [
                {"role": "assistant", "content": reply.text[:2000]},
                {"role": "user", "content": prompts.render(prompts.REFINE, {"error": exc.detail})},
            ]
            raise
        return Structured(out, "llm")

    async def exec_fallback(self, prep: dict[str, Any], exc: BaseException) -> Structured:
        if not isinstance(exc, NoLLM):
            log.warning(
                "%s: LLM failed after %d attempt(s), offline fallback: %r", self.name, self.cur_retry + 1, exc
            )
        if self.calls and prep["llm"] is not None:  # the model was tried and did not deliver
            prep["llm"].breaker.failure()
        return Structured(
            await self.offline(prep), "offline", None if isinstance(exc, NoLLM) else str(exc)[:200]
        )

    async def post(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str | None:
        usage_of(shared).add(self.usage)
        if res.source == "llm" and prep["llm"] is not None:
            prep["llm"].breaker.success()
        not_called = self.last_error if isinstance(self.last_error, NoLLM) else None
        if not_called is not None:
            self.last_error = None  # offline mode is not an error
        if self.step and deps_of(shared).llm is not None:
            record: dict[str, Any] = {
                "step": self.step,
                "source": res.source,
                "calls": self.calls,
                "ms": round(self.llm_ms, 1),
                "tokens": self.usage.as_dict(),
                "structured": bool(self.structured_calls),
            }
            if not_called is not None:
                record["not_called"] = str(not_called)
            self.trace_extra["llm"] = record
            shared.setdefault("llm_steps", {})[self.step] = record
        return await self.apply(shared, prep, res)
