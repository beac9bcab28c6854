"""The LLM path: the real ``openai`` client against a local fake OpenAI-compatible server (a network service we
do not own), and the real KB side — the sample KB in PostgreSQL searched by the production ClinicSearcher,
everything wired by ``bot.wiring.engine_deps`` from settings, as in production with ``OPENAI_API_KEY`` set.

With an LLM and rag_questions, RetrieveFromKB gathers ``candidate_k`` (20) candidates; the real hybrid search
always fills them (the dense leg ranks every entry of the role), so Pruning asks the LLM on every such
question: a good medical answer costs three calls (classify, prune, compose).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
from typing import Any

import pytest
from pydantic import SecretStr

from bot.setup import setup
from bot.wiring import build_service, engine_deps
from engine.deps import EngineDeps
from engine.flows import run_medical_flow
from engine.llm import LLMClient, LLMConfig, LLMError
from engine.llm_check import check_model, parse_override, steps_from
from engine.result import FlowResult
from testkit.fakes.openai_server import FakeOpenAI, Reply, chat_json
from tests.conftest import SAMPLE_DISCLAIMER as DISCLAIMER
from tests.conftest import runtime_with_llm

QUESTION = "niềng răng mất bao lâu"  # → NK-027 "Niềng răng có đau không, mất bao lâu?"
CLASSIFY_OK = chat_json(
    {
        "input_type": "medical_question",
        "confidence": 0.93,
        "reason": "hỏi về niềng răng",
        "rag_questions": ["Niềng răng mất bao lâu?"],
    }
)
PRUNE_OK = chat_json({"keep_codes": ["NK-027", "NK-026", "NK-028"]})
COMPOSE_OK = chat_json(
    {
        "explanation": "Niềng răng thường mất khoảng 1,5–2 năm, tùy từng trường hợp.",
        "suggestion_questions": ["Bao nhiêu tuổi thì niềng răng được?"],
        "used_codes": ["NK-027"],
    }
)


@pytest.fixture
def server(fake_openai: FakeOpenAI) -> FakeOpenAI:
    """The suite's fake OpenAI server (``fake_openai``), under this module's short name."""
    return fake_openai


@pytest.fixture
async def make_deps(sample_runtime, sample_searcher, server):
    """``engine_deps`` on a runtime whose settings name the fake server (key, base URL, model, a short
    timeout); the sample runtime's pool, searcher and embedder are shared. Backoff is shortened for speed."""
    runtime = runtime_with_llm(sample_runtime, server.base_url, api_key="test-key", llm_timeout=0.3)
    assert "searcher" in runtime.extras
    made: list[EngineDeps] = []

    def make(**cfg: Any) -> EngineDeps:
        deps = engine_deps(runtime)
        assert deps.llm is not None and deps.searcher is sample_runtime.extras["searcher"]
        deps.config.llm_wait, deps.config.llm_max_wait = 0.01, 1.0
        for key, value in cfg.items():
            setattr(deps.config, key, value)
        made.append(deps)
        return deps

    yield make
    for deps in made:
        assert deps.llm is not None
        await deps.llm.aclose()


async def run(
    deps: EngineDeps, text: str = QUESTION, role: str = "patient_dental"
) -> tuple[FlowResult, dict]:
    shared: dict[str, Any] = {"role": role, "input": text}
    out = await run_medical_flow(deps, shared)
    return out, shared


def node(out: FlowResult, name: str) -> dict[str, Any]:
    return next(r for r in out.trace if r["node"] == name)


async def test_good_replies(server, make_deps, sample_pool):
    server.push(
        Reply(content=f"Sure! Here it is:\n```json\n{CLASSIFY_OK}\n```\nHope this helps."),
        Reply(content=PRUNE_OK),
        Reply(content=COMPOSE_OK),
    )
    out, shared = await run(make_deps())
    assert shared["classification_source"] == "llm" and shared["rag_questions"] == ["Niềng răng mất bao lâu?"]
    assert shared["pruning"] == {"before": 20, "after": 3, "source": "llm", "error": None}
    # The sample KB is unreviewed sample material: the composed answer says so before the LLM's text.
    sample_line = (
        "Thông tin dưới đây lấy từ bộ tài liệu mẫu của MedBot, chưa được bác sĩ của phòng khám duyệt lại:"
    )
    assert out.text.startswith(sample_line + "\n\nNiềng răng thường mất khoảng 1,5–2 năm")
    assert out.text.endswith(DISCLAIMER)
    assert out.citations == ["NK-027"] and "Bao nhiêu tuổi thì niềng răng được?" in out.suggestions
    assert out.usage.as_dict() == {
        "prompt": 33,
        "completion": 21,
        "total": 54,
        "estimated": False,
        "calls": 3,
    }
    assert len(server.requests) == 3 and all(r["model"] == "fake-model" for r in server.requests)
    assert QUESTION in server.requests[0]["messages"][-1]["content"]
    assert "NK-027: Niềng răng có đau không, mất bao lâu?" in server.requests[1]["messages"][-1]["content"]
    compose_prompt = server.requests[2]["messages"][-1]["content"]
    nk027 = await sample_pool.fetchval(
        "SELECT answer FROM kb_entries WHERE role = 'patient_dental' AND code = 'NK-027'"
    )
    assert "[NK-027]" in compose_prompt and nk027[:200] in compose_prompt  # grounded on the real entry


async def test_urgent_entry_is_marked_for_the_llm_and_gets_no_routine_closing_line(server, make_deps):
    # NK-014 (wisdom tooth swelling) is marked KHẨN CẤP in the sample KB; NK-013 is routine.
    server.push(
        Reply(content=chat_json({"input_type": "medical_question", "confidence": 0.9, "reason": "răng khôn",
                                 "rag_questions": ["Răng khôn bị sưng đau phải làm sao?"]})),
        Reply(content=chat_json({"keep_codes": ["NK-014", "NK-013"]})),
        Reply(content=chat_json({"explanation": "Nếu sưng lan xuống cổ hoặc khó nuốt, hãy đến cơ sở cấp cứu ngay.",
                                 "suggestion_questions": [], "used_codes": ["NK-014"]})),
    )  # fmt: skip
    out, shared = await run(make_deps(), "răng khôn bị sưng đau phải làm sao")
    assert shared["answer_source"] == "llm" and out.citations == ["NK-014"]
    compose_prompt = server.requests[2]["messages"][-1]["content"]
    assert "[NK-014] (URGENT)" in compose_prompt and "[NK-013] Răng khôn" in compose_prompt
    assert "URGENT" in server.requests[2]["messages"][0]["content"]  # the system prompt says what it means
    assert "đặt lịch" not in out.text


async def test_429_retry_after_is_honoured(server, make_deps):
    server.push(
        Reply(status=429, headers={"Retry-After": "0.2"}),
        Reply(content=CLASSIFY_OK),
        Reply(content=PRUNE_OK),
        Reply(content=COMPOSE_OK),
    )
    t0 = time.perf_counter()
    out, shared = await run(make_deps())
    assert time.perf_counter() - t0 >= 0.2
    assert node(out, "decide")["retries"] == 1 and shared["classification_source"] == "llm"
    assert out.citations == ["NK-027"] and shared["answer_source"] == "llm"


async def test_500s_then_offline_fallback(server, make_deps):
    server.default = Reply(status=500)
    out, shared = await run(make_deps())
    assert shared["classification_source"] == "offline" and shared["answer_source"] == "offline"
    assert node(out, "decide")["retries"] == 2 and "500" in node(out, "decide")["error"]
    assert "📚 Nguồn: tài liệu mẫu của MedBot, mục “Niềng răng”." in out.text  # the curated answer
    assert out.citations == ["NK-027"] and "NK-027" not in out.text  # codes are for doctors
    assert shared["pruning"]["source"] == "skipped"  # offline classification: no rag_questions, 7 candidates
    assert len(server.requests) == 6  # 3 attempts per LLM node (classify, compose)


async def test_timeouts_then_fallback(server, make_deps):
    server.default = Reply(content=CLASSIFY_OK, delay=1.0)
    out, shared = await run(make_deps(llm_attempts=2))
    assert shared["classification_source"] == "offline" and "timeout" in node(out, "decide")["error"].lower()
    assert out.citations == ["NK-027"] and out.text.endswith(DISCLAIMER)


async def test_malformed_body_and_prose_are_retried_with_feedback(server, make_deps):
    server.push(
        Reply(raw="{this is not json"),
        Reply(content="Tôi nghĩ đây là câu hỏi y khoa."),
        Reply(content=CLASSIFY_OK),
        Reply(content=PRUNE_OK),
        Reply(content=COMPOSE_OK),
    )
    out, shared = await run(make_deps())
    assert shared["classification_source"] == "llm" and node(out, "decide")["retries"] == 2
    refine = server.requests[2]["messages"]
    assert refine[-2]["role"] == "assistant" and "rejected" in refine[-1]["content"]
    assert out.citations == ["NK-027"]


async def test_invalid_schema_and_ungrounded_answer_fall_back(server, make_deps):
    bad_type = chat_json({"input_type": "joke", "confidence": 2})
    invented = chat_json(
        {"explanation": "Uống thuốc X 500mg.", "suggestion_questions": [], "used_codes": ["Z999"]}
    )
    server.push(
        Reply(content=bad_type),
        Reply(content=CLASSIFY_OK),
        Reply(content=PRUNE_OK),
        *[Reply(content=invented)] * 3,
    )
    out, shared = await run(make_deps())
    assert shared["classification_source"] == "llm"
    assert shared["answer_source"] == "offline" and "thuốc X" not in out.text
    assert out.citations == ["NK-027"]


async def test_empty_output_then_fallback_and_estimated_tokens(server, make_deps):
    server.default = Reply(content="", usage=None)
    out, shared = await run(make_deps())
    assert shared["classification_source"] == "offline"
    assert out.usage.estimated and out.usage.prompt_tokens > 0 and out.usage.calls == 6
    assert out.citations == ["NK-027"]


async def test_tokens_estimated_when_provider_sends_none(server, make_deps):
    server.push(*(Reply(content=c, usage=None) for c in (CLASSIFY_OK, PRUNE_OK, COMPOSE_OK)))
    out, _ = await run(make_deps())
    assert out.usage.estimated and out.usage.calls == 3
    assert out.usage.completion_tokens == sum(len(c) // 4 for c in (CLASSIFY_OK, PRUNE_OK, COMPOSE_OK))


async def test_non_retryable_4xx_goes_straight_to_fallback(server, make_deps):
    server.default = Reply(status=401)
    out, shared = await run(make_deps())
    assert shared["classification_source"] == "offline" and node(out, "decide")["retries"] == 0
    assert out.citations == ["NK-027"]


async def test_emergency_never_waits_for_the_llm(server, make_deps):
    server.default = Reply(content=CLASSIFY_OK, delay=1.0)
    out, _ = await run(make_deps(), "con tôi co giật, sùi bọt mép")
    assert out.red_flag and "115" in out.text and server.requests == []


# ----- pruning -----------------------------------------------------------------------------------------

CLASSIFY_RAG = chat_json(
    {
        "input_type": "medical_question",
        "confidence": 0.9,
        "reason": "đau răng",
        "rag_questions": ["Răng bị đau thì sao?", "Đau răng phải làm gì?"],
    }
)


async def candidates(searcher, text: str) -> list[Any]:
    """The candidates RetrieveFromKB gathers for ``text`` + CLASSIFY_RAG's rag_questions (real search)."""
    res = await searcher.search(
        "patient_dental", text, extra_queries=("Răng bị đau thì sao?", "Đau răng phải làm gì?"), k=20
    )
    return res.hits


async def test_pruning_keeps_llm_choice(server, make_deps, sample_searcher):
    hits = await candidates(sample_searcher, "răng bị đau")
    assert len(hits) == 20
    codes = [h.entry.code for h in hits]
    keep = [codes[7], codes[3], codes[3], codes[11]]  # with a duplicate: deduplicated by code
    server.push(Reply(content=CLASSIFY_RAG), Reply(content=chat_json({"keep_codes": keep})))
    _, shared = await run(make_deps(), "răng bị đau")
    assert shared["pruning"] == {"before": 20, "after": 3, "source": "llm", "error": None}
    assert [h.entry.code for h in shared["retrieved"]] == [codes[7], codes[3], codes[11]]
    prompt = server.requests[1]["messages"][-1]["content"]
    assert all(f"{h.entry.code}: {h.entry.question} — {h.entry.topic}" in prompt for h in hits)


@pytest.mark.parametrize(
    "replies",
    [
        [Reply(content=chat_json({"keep_codes": ["NOPE1", "NOPE2"]}))] * 3,  # invented codes
        [Reply(content=chat_json({"keep_codes": []}))] * 3,  # empty choice
        [Reply(content="không có JSON")] * 3,  # prose
        [Reply(raw="{{{")] * 3,  # malformed body
        [Reply(content="")] * 3,  # empty output
        [Reply(status=500)] * 3,
        [Reply(status=429, headers={"Retry-After": "0"})] * 3,
        [Reply(content="{}", delay=1.0)] * 3,  # timeouts
    ],
    ids=["unknown-codes", "empty-list", "prose", "malformed", "empty", "500", "429", "timeout"],
)
async def test_pruning_failures_keep_original_list(server, make_deps, sample_searcher, replies):
    expected = [h.entry.code for h in await candidates(sample_searcher, "răng bị đau")]
    server.push(Reply(content=CLASSIFY_RAG), *replies)
    out, shared = await run(make_deps(), "răng bị đau")
    assert shared["pruning"]["before"] == 20 and shared["pruning"]["after"] == 20
    assert shared["pruning"]["source"] == "offline" and shared["pruning"]["error"]
    codes = [h.entry.code for h in shared["retrieved"]]
    assert codes == expected and len(set(codes)) == 20
    assert (DISCLAIMER in out.text) == bool(out.citations)  # the disclaimer comes with an answer


async def test_no_pruning_without_rag_questions(server, make_deps):
    classify_plain = chat_json({"input_type": "medical_question", "confidence": 0.9, "reason": "niềng răng"})
    server.push(Reply(content=classify_plain), Reply(content=COMPOSE_OK))
    out, shared = await run(make_deps())
    assert shared["pruning"] == {"before": 7, "after": 7, "source": "skipped", "error": None}
    assert len(server.requests) == 2 and out.citations == ["NK-027"]


async def test_no_pruning_when_candidates_within_threshold(server, make_deps):
    server.push(Reply(content=CLASSIFY_OK), Reply(content=COMPOSE_OK))
    _, shared = await run(make_deps(prune_threshold=20))
    assert shared["pruning"]["source"] == "skipped" and len(server.requests) == 2


# ----- offline first: the model can only add (issue 20) --------------------------------------------------


async def test_confident_greeting_never_asks_the_model(server, make_deps):
    # The weak model of the issue read "Xin chào bác sĩ" as a medical question; it is not even asked.
    server.default = Reply(content=CLASSIFY_OK)
    deps = make_deps()
    out, _ = await run(deps, "Xin chào bác sĩ")
    assert out.input_type == "greeting" and server.requests == []
    assert out.text.startswith(deps.roles["patient_dental"].greeting) and out.citations == []


async def test_confident_thanks_and_booking_stay_what_they_are(server, make_deps):
    server.default = Reply(content=CLASSIFY_OK)
    deps = make_deps()
    thanks, _ = await run(deps, "cảm ơn bác sĩ nhiều")
    booking, _ = await run(deps, "cho tôi đặt lịch khám sáng mai")
    assert (thanks.input_type, booking.input_type) == ("thanks", "booking") and server.requests == []
    assert thanks.citations == booking.citations == []


async def test_confident_medical_question_is_not_turned_into_a_greeting(server, make_deps):
    as_greeting = chat_json(
        {"input_type": "greeting", "confidence": 0.99, "reason": "chào", "rag_questions": []}
    )
    server.push(Reply(content=as_greeting))
    server.default = Reply(content=COMPOSE_OK)
    out, _ = await run(make_deps())
    assert out.input_type == "medical_question" and out.citations == ["NK-027"]
    assert out.disagreements == [
        {"step": "classify", "offline": "medical_question", "llm": "greeting", "kept": "medical_question"}
    ]
    assert node(out, "decide")["disagreements"] == out.disagreements  # also in the trace


WISDOM = "Răng khôn mọc lệch có cần nhổ không?"  # offline: NK-013; NK-016 is the pregnancy entry
CLASSIFY_PREGNANT = chat_json(
    {
        "input_type": "medical_question",
        "confidence": 0.9,
        "reason": "răng khôn",
        "rag_questions": ["Đang mang thai có nhổ răng khôn được không?", "Bà bầu nhổ răng được không?"],
    }
)


async def test_model_cannot_move_the_confident_offline_entry_out(server, make_deps):
    offline_out, _ = await run(make_deps(), WISDOM)  # no script: every call fails, offline answer
    assert offline_out.citations == ["NK-013"]
    server.requests.clear()
    pregnancy = chat_json({"explanation": "Khi mang thai nên hoãn nhổ răng.", "suggestion_questions": [],
                           "used_codes": ["NK-016"]})  # fmt: skip
    server.push(
        Reply(content=CLASSIFY_PREGNANT),
        Reply(content=chat_json({"keep_codes": ["NK-016", "NK-020"]})),  # drops NK-013
        *[Reply(content=pregnancy)] * 3,
    )
    out, shared = await run(make_deps(), WISDOM)
    assert [h.entry.code for h in shared["retrieved"]][:2] == ["NK-013", "NK-016"]
    assert {"step": "prune", "offline": "NK-013", "llm": "NK-016", "kept": "NK-013"} in out.disagreements
    # The compose step was told to rely on NK-013, would not, and the curated NK-013 answer went out.
    assert "NK-013" in server.requests[3]["messages"][-1]["content"]
    assert shared["answer_source"] == "offline" and out.citations == ["NK-013"]
    assert "mang thai" not in out.text.split("\n\n")[0]


async def test_model_adds_an_entry_when_offline_is_unsure(server, make_deps):
    # "răng bị đau" alone does not clear the threshold offline (clarify); the model's phrasing adds candidates.
    offline_out, _ = await run(make_deps(), "răng bị đau")
    server.requests.clear()
    rag = chat_json({"input_type": "medical_question", "confidence": 0.9, "reason": "đau răng",
                     "rag_questions": ["Răng khôn bị sưng đau phải làm sao?"]})  # fmt: skip
    server.push(
        Reply(content=rag),
        Reply(content=chat_json({"keep_codes": ["NK-014"]})),
        Reply(content=chat_json({"explanation": "Đau răng khôn: súc miệng nước muối, đi khám sớm.",
                                 "suggestion_questions": [], "used_codes": ["NK-014"]})),
    )  # fmt: skip
    out, shared = await run(make_deps(), "răng bị đau")
    assert offline_out.citations == [] and "pinned" not in shared
    assert out.citations == ["NK-014"] and shared["answer_source"] == "llm"


# ----- time budget and circuit breaker --------------------------------------------------------------------


async def test_slow_model_the_offline_answer_goes_out_when_the_budget_is_spent(server, make_deps):
    # The model never answers (its reply is held) and its own timeout is long: only the budget ends the wait.
    arrived, gate = asyncio.Event(), asyncio.Event()
    server.default = Reply(content=CLASSIFY_OK, arrived=arrived, gate=gate)
    deps = make_deps(llm_budget=0.6)
    deps.llm.config = dataclasses.replace(deps.llm.config, timeout=60.0)
    out, _ = await run(deps)
    gate.set()
    assert arrived.is_set() and len(server.requests) == 1  # one call, no retry, compose not even tried
    assert out.citations == ["NK-027"] and out.text.endswith(DISCLAIMER)
    assert out.llm["classify"]["source"] == "offline" and out.llm["classify"]["calls"] == 1
    assert out.llm["compose"]["not_called"] == "time budget spent"


async def test_emergency_is_answered_while_the_model_hangs(server, make_deps):
    gate = asyncio.Event()
    server.default = Reply(content=CLASSIFY_OK, gate=gate)
    out, _ = await run(make_deps(llm_budget=30.0), "bố tôi đau ngực dữ dội, vã mồ hôi, khó thở")
    gate.set()
    assert out.red_flag and "115" in out.text and server.requests == []


async def test_circuit_breaker_stops_calling_a_failing_model_and_tries_again_later(server, make_deps):
    server.default = Reply(status=500)
    deps = make_deps(llm_attempts=1)
    now = [0.0]
    deps.llm.breaker.clock = lambda: now[0]
    for _ in range(2):  # classify and compose fail: 4 failed steps, the breaker opened at the 3rd
        out, _ = await run(deps)
        assert out.citations == ["NK-027"]
    assert len(server.requests) == 3 and deps.llm.breaker.state == "open"
    out, _ = await run(deps)
    assert len(server.requests) == 3 and out.citations == ["NK-027"]
    assert out.llm["classify"]["not_called"] == "circuit breaker open"
    now[0] += deps.llm.breaker.cooldown  # later: one trial step, and the model answers again
    server.push(Reply(content=CLASSIFY_OK), Reply(content=PRUNE_OK), Reply(content=COMPOSE_OK))
    out, shared = await run(deps)
    assert deps.llm.breaker.state == "closed" and shared["answer_source"] == "llm"
    assert len(server.requests) == 6 and out.citations == ["NK-027"]


async def test_llm_not_allowed_for_one_message(server, make_deps):
    server.default = Reply(content=CLASSIFY_OK)
    shared: dict[str, Any] = {"role": "patient_dental", "input": QUESTION, "llm_allowed": False}
    out = await run_medical_flow(make_deps(), shared)
    assert server.requests == [] and out.citations == ["NK-027"] and shared["answer_source"] == "offline"


async def test_switched_off_step_is_not_asked(server, make_deps):
    server.push(Reply(content=CLASSIFY_OK), Reply(content=PRUNE_OK))
    out, shared = await run(make_deps(llm_steps={"compose": False}))
    assert len(server.requests) == 2 and shared["answer_source"] == "offline" and out.citations == ["NK-027"]
    assert out.llm["compose"]["not_called"] == "step switched off"


async def test_the_stored_turn_carries_each_steps_model_time_and_tokens(server, sample_runtime, new_user):
    """A patient's message through the ChatService in LLM mode: the stored reply (messages.trace, what the
    admin and the analytics read) has, per LLM step, the model's time, tokens, calls and outcome."""
    server.push(
        Reply(content=CLASSIFY_OK, usage={"prompt_tokens": 120, "completion_tokens": 30}),
        Reply(content=PRUNE_OK, usage={"prompt_tokens": 400, "completion_tokens": 12}),
        Reply(content=COMPOSE_OK, delay=0.05, usage={"prompt_tokens": 900, "completion_tokens": 80}),
    )
    service = await build_service(runtime_with_llm(sample_runtime, server.base_url))
    user = await new_user(service)
    reply = await service.handle_text(user, QUESTION, channel="test")
    assert "Niềng răng thường mất khoảng 1,5–2 năm" in reply.text
    row = await sample_runtime.pool.fetchrow(
        "SELECT trace, tokens_in, tokens_out FROM messages WHERE user_id = $1 AND direction = 'out'", user.id
    )
    steps = {r["llm"]["step"]: r["llm"] for r in row["trace"] if "llm" in r}
    assert set(steps) == {"classify", "prune", "compose"}
    tokens = {name: (s["tokens"]["prompt"], s["tokens"]["completion"]) for name, s in steps.items()}
    assert tokens == {"classify": (120, 30), "prune": (400, 12), "compose": (900, 80)}
    assert all(s["source"] == "llm" and s["calls"] == 1 and s["structured"] for s in steps.values())
    assert steps["compose"]["ms"] >= 50 and all(s["ms"] > 0 for s in steps.values())
    assert (row["tokens_in"], row["tokens_out"]) == (1420, 122)  # the message's totals beside them


# ----- structured outputs -----------------------------------------------------------------------------------


async def test_structured_outputs_requested_when_the_server_supports_them(server, make_deps):
    server.push(Reply(content=CLASSIFY_OK), Reply(content=PRUNE_OK), Reply(content=COMPOSE_OK))
    deps = make_deps()
    out, _ = await run(deps)
    formats = [r["response_format"] for r in server.requests]
    assert [f["json_schema"]["name"] for f in formats] == ["classify", "prune", "compose"]
    classify_schema = formats[0]["json_schema"]
    assert classify_schema["strict"] is True and classify_schema["schema"]["additionalProperties"] is False
    assert set(classify_schema["schema"]["required"]) == {
        "input_type",
        "confidence",
        "reason",
        "rag_questions",
    }
    assert "greeting" in classify_schema["schema"]["properties"]["input_type"]["enum"]
    assert deps.llm.structured is True and out.llm["compose"]["structured"] is True
    assert out.citations == ["NK-027"]


async def test_server_without_structured_outputs_detected_once(server, make_deps):
    server.structured = False
    server.push(
        Reply(content=f"Đây là kết quả:\n```json\n{CLASSIFY_OK}\n```"),
        Reply(content=PRUNE_OK),
        Reply(content=COMPOSE_OK),
    )
    deps = make_deps()
    out, shared = await run(deps)
    # One 400 to the first schema request, then the same call without it; no schema asked for again.
    assert ["response_format" in r for r in server.requests] == [True, False, False, False]
    assert deps.llm.structured is False and shared["answer_source"] == "llm"
    assert out.llm["classify"] == {
        "step": "classify", "source": "llm", "calls": 1, "ms": out.llm["classify"]["ms"],
        "tokens": {"prompt": 11, "completion": 7, "total": 18, "estimated": False, "calls": 1},
        "structured": False,
    }  # fmt: skip
    assert out.citations == ["NK-027"]


async def test_a_400_that_is_not_about_the_schema_teaches_nothing(server):
    """A 400 to the schema request and again to the same request without it (a prompt over the context
    size): the error goes to the caller and structured outputs stay undetermined, asked for next time."""
    llm = LLMClient(LLMConfig(base_url=server.base_url, api_key="k", model="fake-model", timeout=1.0))
    server.push(Reply(status=400), Reply(status=400), Reply(content=PRUNE_OK))
    try:
        with pytest.raises(LLMError, match="HTTP 400"):
            await llm.complete([{"role": "user", "content": "x"}], schema={"type": "object"})
        assert llm.structured is None
        await llm.complete([{"role": "user", "content": "x"}], schema={"type": "object"})
        assert llm.structured is True
        assert ["response_format" in r for r in server.requests] == [True, False, True]
    finally:
        await llm.aclose()


# ----- medbot llm check -------------------------------------------------------------------------------------


async def test_llm_check_finds_a_garbage_model_breaks_steps_and_switches_them_off(server, make_deps):
    server.default = Reply(content="Tôi nghĩ đây là câu hỏi hay, bạn nên hỏi bác sĩ nhé.")
    deps = make_deps(llm_attempts=1)
    report = (await check_model(deps, "patient_dental", n_questions=4)).as_dict()
    verdicts = {name: res["verdict"] for name, res in report["steps"].items()}
    assert report["offline_right"] == report["n"] == 4 + 8
    # classify, expand (the same call) and compose fail on every call; prune is never reached without
    # rag_questions, so it cannot be judged and stays neutral.
    assert verdicts == {"classify": "breaks", "expand": "breaks", "prune": "neutral", "compose": "breaks"}
    assert all(res["right"] == report["offline_right"] for res in report["steps"].values())
    assert steps_from(report, {}) == {"classify": False, "expand": False, "prune": True, "compose": False}
    assert steps_from(report, parse_override("compose=on, bogus=off"))["compose"] is True


async def test_setup_with_a_key_checks_the_model_and_prints_the_verdicts(
    server, sample_runtime, tmp_path, capsys
):
    """``medbot setup`` on a database whose KB is already there: with a key, the model is checked and the
    verdicts printed (in Vietnamese); the report that later processes read is written."""
    server.default = Reply(content="Tôi nghĩ đây là câu hỏi hay, bạn nên hỏi bác sĩ nhé.")
    settings = sample_runtime.settings.model_copy(
        update={
            "openai_api_key": SecretStr("k"),
            "openai_base_url": server.base_url,
            "openai_model": "fake-model",
            "medbot_data_dir": tmp_path,
        }
    )
    assert await setup(settings) == 0
    out = capsys.readouterr().out
    assert "Đang kiểm tra mô hình AI" in out and "Mô hình fake-model với vai trò patient_dental" in out
    assert re.search(r"compose\s+breaks .* TẮT", out) and re.search(r"prune\s+neutral .* bật", out)
    report = json.loads((tmp_path / "llm_check.json").read_text(encoding="utf-8"))
    assert report["switches"] == {"classify": False, "expand": False, "prune": True, "compose": False}
    assert report["model"] == "fake-model" and report["base_url"] == server.base_url
