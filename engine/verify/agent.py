"""The LLM verifier: a tool-using agent over the engine's LLM client (``engine.llm``, OpenAI tool calling).

One episode verifies one sentence. The model gets two tools:

* ``fetch_next_sentence()`` — the sentence under review with its context (section, list lead-in, previous
  sentence, article title) and the clinician's keywords or guidance, if any;
* ``search_guidelines(query, top_k)`` — hybrid search over the guideline chunks; each result carries a
  ``chunk_id`` the verdict must cite.

It ends the episode by answering (no tool call) with JSON
``{"status": "VALID|FLAGGED|UNCLEAR", "confidence": 0-1, "reasoning": "<Vietnamese>", "evidence_ids": [...]}``.

Every model request is one engine node (``ModelTurn``) run through the core's retry wrapper
(``engine.core.Node``: ``max_retries`` attempts with backoff, honouring the server's Retry-After, and only for
errors ``engine.llm`` marks retryable), so the verifier has no retry loop of its own; the node entries
(ms, retries, error) go into the verdict's trace. The client's circuit breaker is shared with the chat: while
it is open the offline verifier decides at once, and an episode that ends offline counts as a failed step.

Guards, each counted as a *bad attempt* and answered to the model as a tool message (never an exception):
a call to the agent itself (``verify_sentence``) or to an unknown tool, the same tool called again with the same
arguments (the earlier result is not recomputed), malformed arguments (not JSON, not an object, empty query,
non-integer ``top_k``), and a final answer that is not the JSON verdict. After ``MAX_BAD_ATTEMPTS`` (3) bad
attempts, or after ``max_iterations`` model turns, the loop stops and one *plain* request without tools asks
for the verdict from the evidence gathered so far; if that also fails (or the model cannot be reached), the
offline verifier decides. The result is honest by construction: a VALID or FLAGGED verdict that cites no
passage the search actually returned is downgraded to UNCLEAR.
"""

from __future__ import annotations

import json
import logging
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from engine.core import Node
from engine.llm import LLMClient, LLMError, LLMReply
from engine.llm import extract_json as llm_extract_json
from engine.verify.search import GuidelineSearch
from engine.verify.types import STATUSES, UNCLEAR, Claim, Evidence, Verdict, Verifier

log = logging.getLogger("medbot.verify.agent")

AGENT_NAME = "verify_sentence"
MAX_BAD_ATTEMPTS = 3
MAX_TOP_K = 8

SYSTEM_PROMPT = """Bạn là dược sĩ lâm sàng kiểm tra bài viết giáo dục sức khỏe theo hướng dẫn chuyên môn của phòng khám.
Quy trình: gọi fetch_next_sentence để lấy câu cần kiểm tra, gọi search_guidelines (có thể nhiều lần với từ khóa khác nhau) để tìm đoạn hướng dẫn liên quan, rồi trả lời.
Chỉ dựa vào các đoạn hướng dẫn tìm được, không dùng hiểu biết bên ngoài.
Kết luận:
- VALID: hướng dẫn xác nhận rõ nội dung câu (kể cả con số, liều, đơn vị).
- FLAGGED: hướng dẫn mâu thuẫn với câu (sai liều, sai chỉ định, chống chỉ định…).
- UNCLEAR: hướng dẫn không đề cập hoặc không đủ để kết luận.
Khi đã đủ thông tin, trả lời DUY NHẤT một đối tượng JSON, không kèm chữ nào khác:
{"status": "VALID|FLAGGED|UNCLEAR", "confidence": số từ 0 đến 1, "reasoning": "giải thích ngắn bằng tiếng Việt cho bác sĩ", "evidence_ids": [chunk_id của các đoạn làm căn cứ]}"""

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "fetch_next_sentence",
            "description": "Lấy câu tiếp theo của bài viết cần kiểm tra, kèm ngữ cảnh (mục, câu dẫn, câu trước).",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_guidelines",
            "description": "Tìm các đoạn trong hướng dẫn chuyên môn liên quan đến truy vấn (tiếng Việt).",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "nội dung cần tìm"},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "default": 4},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
]


class _BadCall(Exception):
    """A tool call the loop refuses; the message goes back to the model."""


class ModelTurn(Node):
    """One request to the model (``shared["messages"]``, with ``TOOLS`` unless ``plain``); the reply goes to
    ``shared["reply"]``. Retried by the core wrapper on retryable ``LLMError``s; a final failure raises."""

    max_retries = 2
    wait = 0.5
    actions = ("tools", "answer")

    def __init__(self, llm: LLMClient, *, plain: bool = False) -> None:
        super().__init__("verify_plain" if plain else "verify_turn")
        self.llm = llm
        self.plain = plain

    async def prep(self, shared: dict[str, Any]) -> list[dict[str, Any]]:
        return list(shared["messages"])

    async def exec(self, prep_res: list[dict[str, Any]]) -> LLMReply:
        return await self.llm.complete(prep_res, temperature=0, tools=None if self.plain else TOOLS)

    async def post(self, shared: dict[str, Any], prep_res: Any, exec_res: LLMReply) -> str:
        shared["reply"] = exec_res
        self.trace_extra = {"tokens": exec_res.usage.total_tokens, "model_ms": round(exec_res.ms, 1)}
        return "tools" if exec_res.tool_calls else "answer"


def extract_json(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in a reply (bare, fenced, or surrounded by prose); None if there is none."""
    try:
        value = llm_extract_json(text or "")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _canonical(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


@dataclass(slots=True)
class AgentVerifier:
    """``Verifier`` driven by an OpenAI-compatible chat model with tools, falling back to ``fallback``."""

    llm: LLMClient
    search: GuidelineSearch
    _: KW_ONLY
    fallback: Verifier
    max_iterations: int = 6
    max_bad_attempts: int = MAX_BAD_ATTEMPTS
    default_top_k: int = 4
    shown_evidence: int = 3
    name: str = AGENT_NAME
    turn: ModelTurn = field(init=False)
    plain_turn: ModelTurn = field(init=False)

    def __post_init__(self) -> None:
        self.turn = ModelTurn(self.llm)
        self.plain_turn = ModelTurn(self.llm, plain=True)

    async def verify(self, claim: Claim, keywords: str | None = None) -> Verdict:
        episode = _Episode(self, claim, keywords)
        breaker = self.llm.breaker
        if not breaker.allow():
            episode.trace.append({"event": "breaker_open"})
            return await episode.offline("mô hình ngôn ngữ tạm ngừng sau nhiều lỗi liên tiếp")
        try:
            verdict = await episode.run()
        except LLMError as exc:  # API down, timeout, refused request: the offline verdict still stands
            log.warning("verify_agent.failed error=%s", exc)
            episode.trace.append({"event": "api_error", "error": str(exc)})
            verdict = await episode.offline("không gọi được mô hình ngôn ngữ")
        if episode.steps:
            verdict.trace.append({"event": "model_steps", "steps": episode.steps})
        if verdict.source == "offline":
            breaker.failure()
        else:
            breaker.success()
        return verdict


class _Episode:
    def __init__(self, agent: AgentVerifier, claim: Claim, keywords: str | None) -> None:
        self.agent = agent
        self.claim = claim
        self.keywords = (keywords or "").strip() or None
        self.evidence: dict[int, Evidence] = {}  # every chunk any search returned, in order
        self.seen: dict[str, Any] = {}
        self.bad = 0
        self.trace: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []  # the model nodes' own entries (ms, retries, error, tokens)
        self.shared: dict[str, Any] = {"trace": self.steps}

    async def _ask(self, node: ModelTurn, messages: list[dict[str, Any]]) -> LLMReply:
        self.shared["messages"] = messages
        await node.run(self.shared)
        reply: LLMReply = self.shared.pop("reply")
        return reply

    # -- tools -------------------------------------------------------------------------------------------
    def _sentence(self) -> dict[str, Any]:
        ctx = self.claim.context
        return {
            "sentence": self.claim.text,
            "section": self.claim.section,
            "article_title": ctx.get("title", ""),
            "list_lead_in": ctx.get("lead", ""),
            "previous_sentence": ctx.get("previous", ""),
            "clinician_keywords_or_guidance": self.keywords or "",
        }

    async def _search(self, args: dict[str, Any]) -> dict[str, Any]:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _BadCall("search_guidelines needs a non-empty string 'query'")
        top_k = args.get("top_k", self.agent.default_top_k)
        if isinstance(top_k, bool) or not isinstance(top_k, int | float) or int(top_k) != top_k:
            raise _BadCall("'top_k' must be an integer between 1 and 8")
        top_k = max(1, min(MAX_TOP_K, int(top_k)))
        hits = await self.agent.search.search(query, top_k)
        for hit in hits:
            self.evidence.setdefault(hit.chunk_id, hit)
        return {
            "results": [
                {
                    "chunk_id": h.chunk_id,
                    "document": h.document,
                    "heading": h.heading,
                    "text": h.text,
                    "score": round(h.score, 3),
                }
                for h in hits
            ]
        }

    async def _call_tool(self, name: str, raw_args: str | None) -> dict[str, Any]:
        if name in (AGENT_NAME, "verify", "verifier", "agent"):
            raise _BadCall(f"'{name}' is this agent itself and cannot be called as a tool; use the two tools")
        if name not in ("fetch_next_sentence", "search_guidelines"):
            raise _BadCall(f"unknown tool '{name}'; available: fetch_next_sentence, search_guidelines")
        try:
            args = json.loads(raw_args) if raw_args and raw_args.strip() else {}
        except json.JSONDecodeError as exc:
            raise _BadCall(f"arguments are not valid JSON ({exc.msg}); send a JSON object") from None
        if not isinstance(args, dict):
            raise _BadCall("arguments must be a JSON object")
        key = f"{name}:{_canonical(args)}"
        if key in self.seen:
            raise _BadCall(
                "repeated call: this tool was already called with these arguments; use the earlier "
                "result, search with different words, or give the verdict"
            )
        self.seen[key] = True
        if name == "fetch_next_sentence":
            if args:
                raise _BadCall("fetch_next_sentence takes no arguments")
            return self._sentence()
        return await self._search(args)

    # -- loop --------------------------------------------------------------------------------------------
    async def run(self) -> Verdict:
        agent = self.agent
        user = "Hãy kiểm tra câu tiếp theo của bài viết."
        if self.keywords:
            user += f" Bác sĩ gợi ý tìm theo: “{self.keywords}”."
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]
        for iteration in range(1, agent.max_iterations + 1):
            reply = await self._ask(agent.turn, messages)
            calls = reply.tool_calls
            if calls:
                messages.append(
                    {
                        "role": "assistant",
                        "content": reply.text,
                        "tool_calls": [c.as_message() for c in calls],
                    }
                )
                for call in calls:
                    try:
                        result = await self._call_tool(call.name, call.arguments)
                        outcome = "ok"
                    except _BadCall as exc:
                        self.bad += 1
                        result = {"error": str(exc)}
                        outcome = str(exc).split(";")[0]
                    self.trace.append(
                        {
                            "iteration": iteration,
                            "tool": call.name,
                            "arguments": call.arguments,
                            "outcome": outcome,
                        }
                    )
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": call.id,
                            "content": json.dumps(result, ensure_ascii=False),
                        }
                    )
                if self.bad >= agent.max_bad_attempts:
                    self.trace.append({"event": "too_many_bad_attempts", "bad": self.bad})
                    return await self.plain("quá nhiều lệnh gọi công cụ không hợp lệ")
                continue
            parsed = extract_json(reply.text)
            if parsed is not None and not self.evidence:
                await self._own_search()  # the model answered without searching: still show evidence
            verdict = self._verdict(parsed, "llm") if parsed is not None else None
            if verdict is not None:
                self.trace.append({"iteration": iteration, "event": "answer", "status": verdict.status})
                verdict.trace = self.trace
                return verdict
            self.bad += 1
            self.trace.append({"iteration": iteration, "event": "bad_answer"})
            if self.bad >= agent.max_bad_attempts:
                return await self.plain("câu trả lời không đúng định dạng")
            messages.append({"role": "assistant", "content": reply.text})
            messages.append(
                {"role": "user", "content": "Trả lời lại đúng một đối tượng JSON theo mẫu đã nêu."}
            )
        self.trace.append({"event": "max_iterations", "iterations": agent.max_iterations})
        return await self.plain("vượt quá số bước cho phép")

    async def _own_search(self) -> None:
        for hit in await self.agent.search.search(self.claim.query(self.keywords), self.agent.default_top_k):
            self.evidence.setdefault(hit.chunk_id, hit)

    async def plain(self, why: str) -> Verdict:
        """One request without tools: the verdict from the evidence gathered (or found now)."""
        if not self.evidence:
            await self._own_search()
        passages = (
            "\n".join(
                f"[chunk_id {e.chunk_id}] {e.document} › {e.heading}: {e.text}"
                for e in self.evidence.values()
            )
            or "(không tìm thấy đoạn nào)"
        )
        prompt = (
            f"Câu cần kiểm tra: “{self.claim.text}” (mục: {self.claim.section or '—'}).\n"
            f"Các đoạn hướng dẫn:\n{passages}\n\nTrả lời DUY NHẤT một đối tượng JSON như mẫu."
        )
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
        try:
            parsed = extract_json((await self._ask(self.agent.plain_turn, messages)).text)
        except LLMError as exc:
            log.warning("verify_agent.plain_failed error=%s", exc)
            parsed = None
        verdict = self._verdict(parsed, "llm-fallback") if parsed is not None else None
        if verdict is None:
            self.trace.append({"event": "plain_failed", "why": why})
            return await self.offline(why)
        self.trace.append({"event": "plain_answer", "why": why, "status": verdict.status})
        verdict.trace = self.trace
        return verdict

    async def offline(self, why: str) -> Verdict:
        verdict = await self.agent.fallback.verify(self.claim, self.keywords)
        verdict.reasoning = f"(Đánh giá tự động, {why}.) {verdict.reasoning}"
        verdict.trace = [*self.trace, {"event": "offline_fallback", "why": why}]
        return verdict

    def _verdict(self, parsed: dict[str, Any] | None, source: str) -> Verdict | None:
        if not parsed:
            return None
        status = str(parsed.get("status", "")).strip().upper()
        if status not in STATUSES:
            return None
        try:
            confidence = float(parsed.get("confidence", 0.5))
        except (TypeError, ValueError):
            confidence = 0.5
        reasoning = str(parsed.get("reasoning") or "").strip()
        ids = parsed.get("evidence_ids") or []
        cited: list[Evidence] = []
        for raw in ids if isinstance(ids, list) else [ids]:
            try:
                chunk = self.evidence.get(int(raw))
            except (TypeError, ValueError):
                chunk = None
            if chunk is not None and chunk not in cited:
                cited.append(chunk)
        if status != UNCLEAR and not cited:
            status, confidence = UNCLEAR, min(confidence, 0.3)
            reasoning += " (Mô hình không dẫn được đoạn hướng dẫn nào đã tìm thấy, nên chưa đủ căn cứ.)"
        shown = cited + [e for e in self.evidence.values() if e not in cited]
        return Verdict(
            status,
            confidence,
            reasoning or "Không có giải thích.",
            shown[: max(len(cited), self.agent.shown_evidence)],
            source=source,
        )
