"""The nodes of the medical flow (DESIGN.md §5) and ``StructuredNode``, the typed LLM building block.

Shared-store keys read: ``deps`` (EngineDeps), ``role``, ``input``, ``conversation_id``, optional ``history``
(list of Turn). Keys written: ``query``, ``input_error``, ``red_flag``, ``red_flag_categories``, ``triage``
(what triage found, for the trace), ``emergency_card`` (a clinician role's card, after the answer), ``history``,
``summary``, ``input_type``, ``classification_confidence``, ``classification_reason``, ``rag_questions``,
``is_follow_up``, ``retrieval_query``, ``retrieved`` (list[Hit]), ``retrieval_score``, ``retrieval_timings``,
``pruning``, ``decision``, ``answer_parts``, ``suggestion_questions``, ``citations``, ``confidence``,
``answer_source``, ``usage`` (llm.Usage), ``explain`` (final text, disclaimer last) and ``trace`` (core).
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from engine import followups, prompts, triage
from engine.answers import curated_answer, source_line
from engine.classify import Intent, classify, fold, has_question
from engine.core import Node, register
from engine.deps import EngineDeps
from engine.intents import SERVICE_INTENTS
from engine.llm import LLMClient, LLMError, Usage, extract_json, strict_schema
from engine.roles import Role, get_role
from engine.safety import InvalidInput, normalize_input, validate_input
from engine.types import Hit, KBEntry, Turn

log = logging.getLogger(__name__)

CLINIC_INTENTS = frozenset((*SERVICE_INTENTS, "english"))

ROUTES = {
    "medical_question": "retrieve_kb",
    "greeting": "greeting",
    "topic_suggest": "topic_suggest",
    "statement": "statement",
    "nonsense": "nonsense",
    # Messages about the clinic (engine.intents): each its own route, so a staff handoff can take some over.
    **{intent: intent for intent in (*SERVICE_INTENTS, "english")},
}
InputType = Literal[
    "medical_question",
    "greeting",
    "topic_suggest",
    "statement",
    "nonsense",
    "booking",
    "human",
    "complaint",
    "praise",
    "clinic_info",
    "thanks",
    "goodbye",
    "english",
]


def deps_of(shared: dict[str, Any]) -> EngineDeps:
    return shared["deps"]


def role_of(shared: dict[str, Any]) -> Role:
    return get_role(shared.get("role") or "", deps_of(shared).roles)


def say(shared: dict[str, Any], text: str) -> None:
    if text:
        shared.setdefault("answer_parts", []).append(text)


def usage_of(shared: dict[str, Any]) -> Usage:
    return shared.setdefault("usage", Usage())


def history_text(turns: list[Turn]) -> str:
    if not turns:
        return "(none)"
    return "\n".join(f"User: {t.user_text}\nBot: {t.bot_text[:300]}" for t in turns)


def unique_questions(entries: list[KBEntry], exclude: set[str] = frozenset(), limit: int = 10) -> list[str]:
    out: list[str] = []
    seen = {fold(q) for q in exclude}
    for e in entries:
        q = (e.question or "").strip()
        if q and fold(q) not in seen:
            seen.add(fold(q))
            out.append(q)
        if len(out) >= limit:
            break
    return out


def dedup_hits(hits: list[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out = []
    for h in hits:
        if h.entry.code not in seen:
            seen.add(h.entry.code)
            out.append(h)
    return out


# ----- StructuredNode -----------------------------------------------------------------------------------


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


# ----- input, safety, memory ---------------------------------------------------------------------------


@register
class IngestQuery(Node):
    """NFC, control characters, whitespace; 1–1000 characters. Never stops the flow: the red-flag check runs
    next on the full text, so an emergency in an over-long message is still caught."""

    async def prep(self, shared: dict[str, Any]) -> str:
        return shared.get("input") or ""

    async def exec(self, raw: str) -> tuple[str, str | None]:
        try:
            return validate_input(raw), None
        except InvalidInput as exc:
            return normalize_input(raw), str(exc)

    async def post(self, shared: dict[str, Any], prep: str, res: tuple[str, str | None]) -> str:
        shared["query"], shared["input_error"] = res
        return "default"


@register
class RedFlagCheck(Node):
    """Emergencies first: the 115 answer and nothing that delays it.

    Reads the raw input (before the length check): an emergency in an over-long message is still caught. A
    clinician's role goes on to the clinical answer, and Finalize puts the emergency card after it."""

    actions = ("default", "emergency", "invalid")

    async def prep(self, shared: dict[str, Any]) -> str:
        return shared.get("input") or shared.get("query") or ""

    async def exec(self, text: str) -> triage.Triage:
        return triage.triage(text)

    async def post(self, shared: dict[str, Any], prep: str, res: triage.Triage) -> str:
        shared["red_flag"] = res.is_emergency
        shared["red_flag_categories"] = list(res.categories)
        shared["triage"] = res.as_trace()
        if role_of(shared).clinician:
            if res.is_emergency or res.topics:
                shared["emergency_card"] = triage.answer(res, clinician=True)
        elif res.is_emergency:
            shared["input_type"] = "emergency"
            shared["confidence"] = 1.0
            clinic = deps_of(shared).config.clinic
            say(shared, triage.answer(res, clinic_phone=clinic.phone or None, clinic_name=clinic.name or None))
            return "emergency"
        if shared.get("input_error"):
            shared["input_type"] = "invalid"
            say(shared, shared["input_error"])
            return "invalid"
        return "default"


@register
class LoadMemory(Node):
    """The last turns and the summary of the conversation (memory store), unless the caller passed them."""

    max_retries = 2
    wait = 0.05
    timeout = 3.0

    async def prep(self, shared: dict[str, Any]) -> tuple[Any, Any, int]:
        deps = deps_of(shared)
        if shared.get("history") is not None or deps.memory is None or shared.get("conversation_id") is None:
            return None, None, deps.config.history_turns
        return deps.memory, shared["conversation_id"], deps.config.history_turns

    async def exec(self, prep: tuple[Any, Any, int]) -> tuple[list[Turn] | None, str, bool | None]:
        memory, conv, n = prep
        if memory is None:
            return None, "", None
        load = getattr(memory, "load", None)  # a store that reads it all in one round trip
        if load is not None:
            turns, summary, *answered = await load(conv, n)
            return list(turns), summary, (bool(answered[0]) if answered else None)
        return list(await memory.recent_turns(conv, n)), await memory.summary(conv), None

    async def exec_fallback(self, prep: Any, exc: BaseException) -> tuple[list[Turn] | None, str, bool | None]:
        log.warning("memory unavailable: %r", exc)
        return [], "", None

    async def post(self, shared: dict[str, Any], prep: Any, res: tuple[list[Turn] | None, str, bool | None]) -> str:
        turns, summary, answered = res
        if turns is not None:
            shared["history"] = turns
        shared.setdefault("history", [])
        shared["history"] = list(shared["history"])[-prep[2] :]
        shared["summary"] = summary or shared.get("summary", "")
        if answered is None:  # a store that cannot tell: the turns it returned
            answered = any(t.citations for t in shared["history"])
        shared["answered_before"] = answered
        return "default"


# ----- classification -------------------------------------------------------------------------------------


class Classification(BaseModel):
    input_type: InputType
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = Field(default="", max_length=400)
    rag_questions: list[str] = Field(default_factory=list, max_length=5)


# The offline classifier's decision stands at this confidence or above: the model cannot turn a confident
# greeting, thanks or medical question into something else (it still adds rag_questions to a medical one).
OFFLINE_SURE = 0.85


def offline_sure(intent: Intent) -> bool:
    return intent.input_type in CLINIC_INTENTS or intent.confidence >= OFFLINE_SURE


@register
class MainDecisionAgent(StructuredNode):
    """input_type + confidence + reason (+ rag_questions with an LLM); offline: classifier + rules.

    The offline classifier always runs first. A confident offline decision that is not a medical question (a
    greeting, thanks, a request about the clinic…) is final and the model is not asked; for the rest the
    model is asked, but a confident offline decision still wins over it (the disagreement is recorded) and
    the model's rag_questions are used when the message goes to retrieval (step "expand")."""

    step = "classify"
    actions = tuple(ROUTES.values())
    output_model = Classification
    system_template = prompts.CLASSIFY_SYSTEM
    user_template = prompts.CLASSIFY_USER
    max_output_chars = 3000
    max_tokens = 300

    def context(self, shared: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": role_of(shared),
            "query": shared["query"],
            "history_text": history_text(shared["history"]),
            "offline": classify(shared["query"]),
        }

    def steps_on(self, shared: dict[str, Any]) -> bool:
        return step_on(shared, "classify") or step_on(shared, "expand")

    def skip(self, prep: dict[str, Any]) -> Classification | None:
        offline: Intent = prep["ctx"]["offline"]
        if offline.input_type != "medical_question" and offline_sure(offline):
            return self.as_output(offline)
        return None

    def guardrails(self, out: Classification, prep: dict[str, Any]) -> list[str]:
        bad = [q for q in out.rag_questions if not q.strip() or len(q) > 300]
        return ["rag_questions must be non-empty and under 300 characters"] if bad else []

    @staticmethod
    def as_output(intent: Intent) -> Classification:
        return Classification(input_type=intent.input_type, confidence=intent.confidence, reason=intent.reason)

    async def offline(self, prep: dict[str, Any]) -> Classification:
        return self.as_output(prep["ctx"]["offline"])

    async def apply(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str:
        out: Classification = res.value
        offline: Intent = prep["ctx"]["offline"]
        if res.source == "llm":
            llm_type = out.input_type
            if not step_on(shared, "classify") or offline_sure(offline):
                # Only rag_questions are taken from the model (the classify step is off, or offline is sure).
                out = out.model_copy(
                    update={
                        "input_type": offline.input_type,
                        "confidence": offline.confidence,
                        "reason": offline.reason,
                    }
                )
            elif out.input_type != "medical_question" and out.confidence < 0.7:
                if offline.input_type == "medical_question" and offline.confidence >= 0.8:  # prefer retrieval
                    out = out.model_copy(update={"input_type": "medical_question", "reason": offline.reason})
            if llm_type != offline.input_type:
                disagree(
                    shared,
                    self,
                    {"step": "classify", "offline": offline.input_type, "llm": llm_type, "kept": out.input_type},
                )
            if not step_on(shared, "expand"):
                out = out.model_copy(update={"rag_questions": []})
        history: list[Turn] = shared.get("history") or []
        if out.input_type in ("statement", "nonsense", "topic_suggest") and last_medical_turn(history):
            query = shared["query"]
            if followups.refers_back(query) or (followups.elliptic(query) and has_question(query)):
                # "nó có tự lành được không?" means nothing alone; after an answer it is a follow-up.
                out = out.model_copy(update={"input_type": "medical_question", "reason": "hỏi tiếp câu trước"})
        topic = await tapped_topic(shared)
        if topic:
            out = out.model_copy(update={"input_type": "topic_suggest", "reason": "chọn một chủ đề"})
            shared["topic"] = topic
        if out.input_type != "medical_question" and (shared.get("triage") or {}).get("topics"):
            # It speaks of an emergency ("xử trí ngất trên ghế nha"): a medical question, whatever its length.
            reason = "nói về một tình huống cấp cứu"
            out = out.model_copy(update={"input_type": "medical_question", "reason": reason})
        shared["input_type"] = out.input_type
        shared["classification_confidence"] = round(out.confidence, 4)
        shared["classification_reason"] = out.reason
        shared["classification_source"] = "offline" if res.source == "skipped" else res.source
        shared["rag_questions"] = (
            [q.strip() for q in out.rag_questions if q.strip()][:3] if out.input_type == "medical_question" else []
        )
        return ROUTES[out.input_type]


_TOPIC_PREFIX = re.compile(r"^(?:xem\s*)?(?:chu\s*de|muc)\s*[:\-]?\s*")


async def tapped_topic(shared: dict[str, Any]) -> str | None:
    """The topic (ĐỀ MỤC) a message names: a topic button of the previous reply, or "chủ đề <name>"."""
    query = shared.get("query") or ""
    history: list[Turn] = shared.get("history") or []
    offered = {fold(q) for q in history[-1].suggestions} if history else set()
    folded = fold(query)
    named = _TOPIC_PREFIX.sub("", folded)
    if folded not in offered and named == folded:
        return None
    if len(named.split()) > 8:
        return None
    groups = await deps_of(shared).searcher.topics(role_of(shared).kb)
    return next((topic for topic, _ in groups if fold(topic) == named), None)


# ----- retrieval --------------------------------------------------------------------------------------------

def last_medical_turn(history: list[Turn]) -> Turn | None:
    for turn in reversed(history):
        if turn.input_type in ("", "medical_question"):
            return turn
    return None


def threshold_of(shared: dict[str, Any]) -> float:
    """The answer threshold: the role's override, else the settings'."""
    role = role_of(shared)
    return role.score_threshold if role.score_threshold is not None else deps_of(shared).config.score_threshold


@register
class RetrieveFromKB(Node):
    """Role-filtered search with the query and the rag_questions; a follow-up is decided on evidence
    (``engine.followups``). A message that refers back ("còn bị sưng thì sao?") or is elliptic is also searched
    with its context — the topic (ĐỀ MỤC) of the entry that answered the previous question, or that question
    itself when it was not answered from the KB — without the entry just given, and the better-supported
    reading wins; a message that stands on its own is answered as asked. A two-part question whose parts are
    each answered confidently by different entries keeps both (``second_part``)."""

    max_retries = 2
    wait = 0.05

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        cfg = deps.config
        self.timeout = cfg.search_timeout
        query, history = shared["query"], shared.get("history") or []
        rag = list(shared.get("rag_questions") or [])
        prev = last_medical_turn(history)
        refers = prev is not None and followups.refers_back(query)
        role = role_of(shared).kb
        contexts: list[str] = []
        own = followups.own_words(query) if refers and followups.is_correction(query) else query
        if prev is not None and (refers or followups.elliptic(query)):
            topic = await deps.searcher.topic_of(role, prev.citations) if prev.citations else ""
            # Read with the previous answer's topic, and with the previous question itself.
            contexts = [f"{topic or prev.user_text} {own}", f"{prev.user_text} {followups.own_words(query)}"]
        return {
            "searcher": deps.searcher,
            "role": role,
            "query": query,
            "own": own,
            "contexts": list(dict.fromkeys(contexts)),
            "refers": refers,
            "suggestions": list(history[-1].suggestions) if history else [],
            "extra": tuple(rag),
            "top_k": cfg.top_k,
            "k": cfg.candidate_k if (deps.llm is not None and rag) else cfg.top_k,
            "exclude": set(prev.citations) if prev else set(),
            "threshold": threshold_of(shared),
        }

    async def exec(self, p: dict[str, Any]) -> dict[str, Any]:
        """The searches only (retried on a store failure); reading their results is ``post``'s."""
        search, role = p["searcher"].search, p["role"]
        own = await search(role, p["own"], extra_queries=p["extra"], k=p["k"])
        out: dict[str, Any] = {"own": list(own.hits), "timings": dict(own.timings or {})}
        if p["extra"]:  # the model's rag_questions joined the search: what offline mode would have found
            out["plain"] = list((await search(role, p["own"], k=p["top_k"])).hits)
        if p["contexts"]:
            out["context"] = []
            for context in p["contexts"]:
                ctx = await search(role, context, extra_queries=p["extra"], k=p["k"], exclude=p["exclude"])
                out["context"].append(list(ctx.hits))
        elif len(parts := followups.split_parts(p["query"])) == 2 and own.hits:
            out["parts"] = [list((await search(role, part, k=3)).hits) for part in parts]
        return out

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> dict[str, Any]:
        log.error("retrieval failed for role %s: %r", p["role"], exc)
        return {"own": [], "timings": {"error": str(exc)[:200]}}

    async def post(self, shared: dict[str, Any], p: dict[str, Any], res: dict[str, Any]) -> str:
        hits = dedup_hits(res["own"])
        query, follow_up = p["own"], False
        if "context" in res:
            ctx_hits = [h for h in best_of(res["context"]) if h.entry.code not in p["exclude"]]
            reading = followups.choose(
                hits,
                ctx_hits,
                refers=p["refers"],
                threshold=p["threshold"],
                suggestions=p["suggestions"],
                query=p["query"],
            )
            shared["follow_up_reason"] = reading.reason
            if reading.follow_up:
                hits, query, follow_up = reading.hits, p["contexts"][0], True
        plain: list[Hit] = res.get("plain") or []
        if plain and not follow_up and plain[0].score >= p["threshold"]:
            hits = self.pin(shared, plain[0], hits)
        second = second_part(hits, res.get("parts") or [], p["threshold"])
        if second is not None:  # both parts answered: the second entry is a candidate too
            hits = [hits[0], second, *[h for h in hits[1:] if h.entry.code != second.entry.code]]
            shared["second_part"] = second
        shared["is_follow_up"] = follow_up
        shared["retrieval_query"] = query
        shared["retrieved"] = hits
        shared["retrieval_score"] = round(hits[0].score, 4) if hits else 0.0
        shared["retrieval_timings"] = res["timings"]
        return "default"


    def pin(self, shared: dict[str, Any], top: Hit, hits: list[Hit]) -> list[Hit]:
        """The offline top entry clears the threshold: it stays first whatever the rag_questions found."""
        shared["pinned"] = top.entry.code
        if hits and hits[0].entry.code == top.entry.code:
            return hits
        llm_top = hits[0].entry.code if hits else None
        disagree(shared, self, {"step": "expand", "offline": top.entry.code, "llm": llm_top, "kept": top.entry.code})
        return [top, *[h for h in hits if h.entry.code != top.entry.code]]


def best_of(readings: list[list[Hit]]) -> list[Hit]:
    """The hits of several readings of one message, each entry at its best score, best first."""
    best: dict[str, Hit] = {}
    for hit in (h for hits in readings for h in hits):
        if hit.entry.code not in best or hit.score > best[hit.entry.code].score:
            best[hit.entry.code] = hit
    return sorted(best.values(), key=lambda h: -h.score)


def second_part(hits: list[Hit], parts: list[list[Hit]], threshold: float) -> Hit | None:
    """The entry answering the other part of a two-part question, when both parts are answered confidently by
    different entries and the whole question's best entry answers one of them."""
    if not hits or len(parts) != 2 or any(not p or p[0].score < threshold for p in parts):
        return None
    first, other = parts[0][0], parts[1][0]
    if first.entry.code == other.entry.code:
        return None
    if hits[0].entry.code == first.entry.code:
        return other
    return first if hits[0].entry.code == other.entry.code else None


class PruneOut(BaseModel):
    keep_codes: list[str] = Field(min_length=1, max_length=30)


@register
class Pruning(StructuredNode):
    """When candidates exceed the threshold and an LLM is configured, it keeps the top N for composing.
    Any failure or invalid reply keeps the original list (deduplicated by code)."""

    step = "prune"
    output_model = PruneOut
    system_template = prompts.PRUNE_SYSTEM
    user_template = prompts.PRUNE_USER
    max_output_chars = 2000
    max_tokens = 200

    def context(self, shared: dict[str, Any]) -> dict[str, Any]:
        cfg = deps_of(shared).config
        hits = dedup_hits(shared.get("retrieved") or [])
        return {
            "hits": hits,
            "threshold": cfg.prune_threshold,
            "keep": cfg.prune_keep,
            "query": shared["query"],
            "rag_questions": "; ".join(shared.get("rag_questions") or []) or "(none)",
            "candidates_text": "\n".join(
                f"{h.entry.code}: {h.entry.question} — {h.entry.topic}" for h in hits
            ),
        }

    def skip(self, prep: dict[str, Any]) -> list[Hit] | None:
        ctx = prep["ctx"]
        if prep["llm"] is None or len(ctx["hits"]) <= ctx["threshold"]:
            return ctx["hits"]
        return None

    def guardrails(self, out: PruneOut, prep: dict[str, Any]) -> list[str]:
        known = {h.entry.code for h in prep["ctx"]["hits"]}
        unknown = [c for c in out.keep_codes if c not in known]
        return [f"keep_codes has {len(unknown)} unknown code(s); use only candidate codes"] if unknown else []

    async def offline(self, prep: dict[str, Any]) -> list[Hit]:
        return prep["ctx"]["hits"]

    async def apply(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str:
        hits: list[Hit] = prep["ctx"]["hits"]
        if res.source == "llm":
            by_code = {h.entry.code: h for h in hits}
            kept = dedup_hits([by_code[c] for c in res.value.keep_codes])[: prep["ctx"]["keep"]]
            pinned = shared.get("pinned")
            if pinned in by_code and (not kept or kept[0].entry.code != pinned):
                # The model may reorder and drop candidates, never the confident offline answer.
                llm_top = kept[0].entry.code if kept else None
                disagree(shared, self, {"step": "prune", "offline": pinned, "llm": llm_top, "kept": pinned})
                kept = [by_code[pinned], *[h for h in kept if h.entry.code != pinned]]
        else:
            kept = res.value
        shared["pruning"] = {
            "before": len(hits),
            "after": len(kept),
            "source": res.source,
            "error": res.error,
        }
        if res.source != "skipped":
            log.info("pruning %s: %d → %d candidates", res.source, len(hits), len(kept))
        shared["retrieved"] = kept
        shared["retrieval_score"] = round(max((h.score for h in kept), default=0.0), 4)
        return "default"


@register
class ScoreDecisionNode(Node):
    """Fused calibrated top score vs the threshold (role override, else settings):
    ≥ threshold → compose_answer; ≥ clarify_threshold → clarify; else topic_suggest (honest "no match")."""

    actions = ("compose_answer", "clarify", "topic_suggest")

    async def prep(self, shared: dict[str, Any]) -> tuple[float, float, float, bool]:
        cfg = deps_of(shared).config
        role = role_of(shared)
        threshold = role.score_threshold if role.score_threshold is not None else cfg.score_threshold
        hits: list[Hit] = shared.get("retrieved") or []
        answerable = bool(hits) and bool((hits[0].entry.answer or "").strip())
        return shared.get("retrieval_score", 0.0), threshold, cfg.clarify_threshold, answerable

    async def post(self, shared: dict[str, Any], prep: tuple[float, float, float, bool], _: Any) -> str:
        score, threshold, clarify_at, answerable = prep
        if score >= threshold and answerable:
            action = "compose_answer"
        elif score >= clarify_at and shared.get("retrieved"):
            action = "clarify"
        else:
            action = "topic_suggest"
            shared["no_match"] = True
        shared["decision"] = {"score": score, "threshold": threshold, "action": action}
        return action


# ----- answers ---------------------------------------------------------------------------------------------


class ComposeOut(BaseModel):
    explanation: str = Field(min_length=1, max_length=2500)
    suggestion_questions: list[str] = Field(default_factory=list, max_length=8)
    used_codes: list[str] = Field(default_factory=list)


def entry_label(e: KBEntry) -> str:
    """How an entry is introduced to the composing LLM: its code, and URGENT when it is marked so."""
    return f"[{e.code}] (URGENT)" if e.urgent else f"[{e.code}]"


@register
class ComposeAnswer(StructuredNode):
    """LLM: grounded answer from the retrieved entries + last turns, validated. Offline / fallback: the
    curated answer of the best entry (both entries of a two-part question, ``second_part``) framed by the
    persona (``engine.answers``); other hits as suggestions."""

    step = "compose"
    output_model = ComposeOut
    system_template = prompts.COMPOSE_SYSTEM
    user_template = prompts.COMPOSE_USER
    max_output_chars = 5000
    max_tokens = 900

    def context(self, shared: dict[str, Any]) -> dict[str, Any]:
        hits: list[Hit] = [h for h in shared["retrieved"] if (h.entry.answer or "").strip()][:5]
        second: Hit | None = shared.get("second_part")
        return {
            "role": role_of(shared),
            "query": shared["query"],
            "hits": hits,
            "entries": [hits[0].entry, second.entry] if second is not None and hits else [h.entry for h in hits[:1]],
            "clinic": deps_of(shared).config.clinic,
            "pinned": shared.get("pinned"),
            "history_text": history_text(shared.get("history") or []),
            "min_suggestions": deps_of(shared).config.min_suggestions,
            "entries_text": "\n\n".join(
                f"{entry_label(h.entry)} {h.entry.question}\n{h.entry.answer[:1500]}" for h in hits
            ),
        }

    def guardrails(self, out: ComposeOut, prep: dict[str, Any]) -> list[str]:
        known = {h.entry.code for h in prep["ctx"]["hits"]}
        problems = []
        if not out.used_codes or any(c not in known for c in out.used_codes):
            problems.append(f"used_codes must be a non-empty subset of {sorted(known)}")
        pinned = prep["ctx"]["pinned"]
        if pinned in known and pinned not in out.used_codes:  # the confident offline answer stays in
            problems.append(f"the answer must rely on entry {pinned} (used_codes must include it)")
        if not out.explanation.strip():
            problems.append("explanation is empty")
        return problems

    async def offline(self, prep: dict[str, Any]) -> ComposeOut:
        ctx = prep["ctx"]
        entries: list[KBEntry] = ctx["entries"]
        # The 2,500-character cap validates LLM output; a curated answer may be longer (the KB import allows
        # 8,000 characters, channels split long texts), so it is not validated against that cap.
        return ComposeOut.model_construct(
            explanation=curated_answer(ctx["role"], entries, ctx["query"], ctx["clinic"]),
            suggestion_questions=[],
            used_codes=[e.code for e in entries],
        )

    async def apply(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str:
        out: ComposeOut = res.value
        hits: list[Hit] = shared["retrieved"]
        explanation = out.explanation.strip()
        used = set(out.used_codes)
        if res.source == "llm":
            role: Role = prep["ctx"]["role"]
            if any(h.entry.sample for h in hits if h.entry.code in used):
                explanation = role.sample_intro + "\n\n" + explanation
            elif role.clinician and role.answer_intro:  # says the text is for health professionals
                explanation = role.answer_intro + "\n\n" + explanation
            used_entries = [h.entry for h in hits if h.entry.code in used]
            explanation += "\n\n" + source_line(role, used_entries)
        say(shared, explanation)
        related = [h.entry for h in hits if h.entry.code not in used]
        asked = {shared["query"]} | {h.entry.question for h in hits if h.entry.code in used}
        suggestions = [q.strip() for q in out.suggestion_questions if q.strip()]
        suggestions += unique_questions(related, exclude=asked | set(suggestions), limit=10)
        shared["suggestion_questions"] = suggestions[:5]
        shared["citations"] = list(out.used_codes)
        shared["confidence"] = shared.get("retrieval_score", 0.0)
        shared["answer_source"] = res.source
        return "default"


@register
class ClarifyQuestionNode(Node):
    """No confident match: say so honestly and offer ≥ 5 questions (retrieved first, then sampled)."""

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        return {
            "searcher": deps.searcher,
            "role": role_of(shared).kb,
            "n": deps.config.min_suggestions,
            "entries": [h.entry for h in shared.get("retrieved") or []],
            "query": shared["query"],
        }

    async def exec(self, p: dict[str, Any]) -> list[str]:
        questions = unique_questions(p["entries"], exclude={p["query"]}, limit=p["n"])
        if len(questions) < p["n"]:
            sampled = await p["searcher"].sample_questions(p["role"], p["n"] * 2)
            questions += unique_questions(
                sampled, exclude={p["query"], *questions}, limit=p["n"] - len(questions)
            )
        return questions

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> list[str]:
        return unique_questions(p["entries"], exclude={p["query"]}, limit=p["n"])

    async def post(self, shared: dict[str, Any], p: dict[str, Any], questions: list[str]) -> str:
        say(
            shared,
            "Mình chưa tìm thấy nội dung thật sự khớp với câu hỏi của bạn trong tài liệu của phòng khám, "
            "nên không muốn trả lời đoán. Có phải bạn muốn hỏi một trong những câu dưới đây không? "
            "Bạn cũng có thể hỏi lại chi tiết hơn (triệu chứng, thời gian, tuổi…).",
        )
        shared["suggestion_questions"] = questions
        shared["confidence"] = shared.get("retrieval_score", 0.0)
        return "default"


@register
class TopicSuggestResponse(Node):
    """Every topic (ĐỀ MỤC) of the role, listed and offered as buttons (channels page long lists); a topic
    button tapped (or "chủ đề <name>" typed, ``topic``) lists that topic's questions as buttons."""

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        return {"searcher": deps.searcher, "role": role_of(shared).kb, "topic": shared.get("topic")}

    async def exec(self, p: dict[str, Any]) -> tuple[list[str], list[KBEntry]]:
        if p["topic"]:
            return [p["topic"]], await p["searcher"].topic_entries(p["role"], p["topic"])
        groups = await p["searcher"].topics(p["role"])
        return [t or "Khác" for t, entries in groups if entries], []

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> tuple[list[str], list[KBEntry]]:
        log.warning("topics unavailable: %r", exc)
        return [], []

    async def post(self, shared: dict[str, Any], p: dict[str, Any], res: tuple[list[str], list[KBEntry]]) -> str:
        topics, entries = res
        kind = shared.get("input_type")
        if p["topic"] and entries:
            say(shared, f"Các câu hỏi về “{p['topic']}” mình có thể trả lời, bạn chọn câu muốn xem nhé:")
            shared["suggestion_questions"] = [e.question.strip() for e in entries]
            shared.setdefault("confidence", shared.get("classification_confidence", 0.0))
            return "default"
        if shared.get("no_match"):
            ask = deps_of(shared).config.clinic.ask_doctor_line()
            intro = (
                "Rất tiếc, tài liệu của phòng khám hiện chưa có nội dung phù hợp với câu hỏi này, "
                f"nên mình không thể trả lời chắc chắn. {ask} Bạn cũng có thể xem các chủ đề mình đang hỗ trợ:"
            )
        elif kind == "nonsense":
            intro = "Xin lỗi, mình chưa hiểu ý bạn. Bạn có thể hỏi về một trong các chủ đề sau:"
        elif kind == "greeting":
            intro = "Bạn có thể bắt đầu với một trong các chủ đề sau:"
        else:
            intro = "Đây là các chủ đề bạn có thể hỏi (bấm vào một chủ đề để xem các câu hỏi):"
        if not topics:
            say(shared, intro.rstrip(":") + ". (Hiện chưa có dữ liệu chủ đề cho chuyên khoa này.)")
        else:
            say(shared, intro + "\n" + "\n".join(f"• {t}" for t in topics))
        shared["suggestion_questions"] = topics
        shared.setdefault("confidence", shared.get("classification_confidence", 0.0))
        return "default"


_THANKS = re.compile(r"\b(cam on|thank|thanks|tks|tam biet|bye|hen gap lai)\b")


@register
class GreetingResponse(Node):
    """Hello → the role's greeting; thanks / goodbye → a short reply. Then the topics."""

    async def prep(self, shared: dict[str, Any]) -> tuple[str, Role]:
        return shared["query"], role_of(shared)

    async def post(self, shared: dict[str, Any], p: tuple[str, Role], _: Any) -> str:
        query, role = p
        if _THANKS.search(fold(query)):
            say(shared, "Không có gì ạ! Chúc bạn nhiều sức khỏe. Khi cần, bạn cứ nhắn cho mình nhé.")
        else:
            say(shared, role.greeting)
        return "default"


@register
class StatementResponse(Node):
    """Personal information or an acknowledgement: thank, remember (memory keeps the turn), offer questions."""

    max_retries = 1

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        return {
            "searcher": deps.searcher,
            "role": role_of(shared).kb,
            "query": shared["query"],
            "n": deps.config.min_suggestions,
        }

    async def exec(self, p: dict[str, Any]) -> list[str]:
        res = await p["searcher"].search(p["role"], p["query"], k=p["n"])
        questions = unique_questions([h.entry for h in res.hits], limit=p["n"])
        if len(questions) < p["n"]:
            sampled = await p["searcher"].sample_questions(p["role"], p["n"])
            questions += unique_questions(sampled, exclude=set(questions), limit=p["n"] - len(questions))
        return questions

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> list[str]:
        return []

    async def post(self, shared: dict[str, Any], p: dict[str, Any], questions: list[str]) -> str:
        # Memory keeps the last few turns only: the bot does not claim to have "noted" anything.
        say(shared, "Cảm ơn bạn đã chia sẻ. Bạn muốn hỏi thêm điều gì? Ví dụ:")
        shared["suggestion_questions"] = questions
        return "default"


MAX_SUGGESTIONS = 30  # a full topic list or one topic's questions; channels page them


def wants_disclaimer(shared: dict[str, Any]) -> bool:
    """Where the disclaimer matters: every emergency, and the first answer from the KB in a conversation —
    not under greetings, thanks, clinic information or a request to rephrase."""
    if shared.get("red_flag") or shared.get("emergency_card") or shared.get("input_type") == "emergency":
        return True
    return bool(shared.get("citations")) and not shared.get("answered_before")


@register
class Finalize(Node):
    """Joins the answer, ends it with the disclaimer line from settings where it matters (``wants_disclaimer``)."""

    async def post(self, shared: dict[str, Any], prep: Any, _: Any) -> None:
        parts = [p for p in shared.get("answer_parts", []) if p]
        if shared.get("emergency_card"):
            parts.append(shared["emergency_card"])
        disclaimer = deps_of(shared).config.disclaimer
        shared["disclaimer_shown"] = bool(disclaimer) and wants_disclaimer(shared)
        if shared["disclaimer_shown"]:
            parts.append(disclaimer)
        shared["explain"] = "\n\n".join(parts)
        questions = list(dict.fromkeys(shared.get("suggestion_questions") or []))
        shared["suggestion_questions"] = questions[:MAX_SUGGESTIONS]
        return None
