"""The LLM path through the real ``openai`` client against a local fake OpenAI-compatible server."""

import time

import pytest

from engine.deps import EngineConfig, EngineDeps
from engine.flows import run_medical_flow
from engine.llm import LLMClient, LLMConfig, extract_json, parse_retry_after
from engine.prompts import render
from engine.types import KBEntry
from tests.fakes.kb import SAMPLE, ListSearcher
from tests.fakes.openai_server import FakeOpenAI, Reply, chat_json

DISCLAIMER = "Thông tin chỉ mang tính tham khảo."
CLASSIFY_OK = chat_json(
    {
        "input_type": "medical_question",
        "confidence": 0.93,
        "reason": "hỏi về niềng răng",
        "rag_questions": ["Niềng răng mất bao lâu?"],
    }
)
COMPOSE_OK = chat_json(
    {
        "explanation": "Niềng răng thường mất 18–24 tháng.",
        "suggestion_questions": ["Niềng răng có đau không?"],
        "used_codes": ["D006"],
    }
)


@pytest.fixture
async def server():
    s = FakeOpenAI()
    await s.start()
    yield s
    await s.stop()


@pytest.fixture
async def llm(server):
    client = LLMClient(
        LLMConfig(base_url=server.base_url, api_key="test-key", model="fake-model", timeout=0.3)
    )
    yield client
    await client.aclose()


def make_deps(llm, entries=SAMPLE, **cfg):
    config = EngineConfig(disclaimer=DISCLAIMER, llm_wait=0.01, llm_max_wait=1.0, **cfg)
    return EngineDeps(searcher=ListSearcher(entries), llm=llm, config=config)


async def run(deps, text="niềng răng mất bao lâu", role="patient_dental"):
    shared = {"role": role, "input": text}
    out = await run_medical_flow(deps, shared)
    return out, shared


def node(out, name):
    return next(r for r in out["trace"] if r["node"] == name)


async def test_good_replies(server, llm):
    server.push(
        Reply(content=f"Sure! Here it is:\n```json\n{CLASSIFY_OK}\n```\nHope this helps."),
        Reply(content=COMPOSE_OK),
    )
    out, shared = await run(make_deps(llm))
    assert shared["classification_source"] == "llm" and shared["rag_questions"] == ["Niềng răng mất bao lâu?"]
    assert out["explain"].startswith("Niềng răng thường mất 18–24 tháng.") and out["explain"].endswith(
        DISCLAIMER
    )
    assert out["citations"] == ["D006"] and "Niềng răng có đau không?" in out["suggestion_questions"]
    assert out["tokens"] == {"prompt": 22, "completion": 14, "total": 36, "estimated": False, "calls": 2}
    assert len(server.requests) == 2 and server.requests[0]["model"] == "fake-model"
    assert "niềng răng mất bao lâu" in server.requests[0]["messages"][-1]["content"]
    assert "[D006]" in server.requests[1]["messages"][-1]["content"]  # grounded on the retrieved entries


async def test_429_retry_after_is_honoured(server, llm):
    server.push(
        Reply(status=429, headers={"Retry-After": "0.2"}),
        Reply(content=CLASSIFY_OK),
        Reply(content=COMPOSE_OK),
    )
    t0 = time.perf_counter()
    out, shared = await run(make_deps(llm))
    assert time.perf_counter() - t0 >= 0.2
    assert node(out, "decide")["retries"] == 1 and shared["classification_source"] == "llm"
    assert out["citations"] == ["D006"]


async def test_500s_then_offline_fallback(server, llm):
    server.default = Reply(status=500)
    out, shared = await run(make_deps(llm))
    assert shared["classification_source"] == "offline" and shared["answer_source"] == "offline"
    assert node(out, "decide")["retries"] == 2 and "500" in node(out, "decide")["error"]
    assert "D006" in out["explain"] and out["citations"] == ["D006"]  # curated answer
    assert len(server.requests) == 6  # 3 attempts per LLM node


async def test_timeouts_then_fallback(server, llm):
    server.default = Reply(content=CLASSIFY_OK, delay=1.0)
    out, shared = await run(make_deps(llm, llm_attempts=2))
    assert shared["classification_source"] == "offline" and "timeout" in node(out, "decide")["error"].lower()
    assert out["citations"] == ["D006"] and out["explain"].endswith(DISCLAIMER)


async def test_malformed_body_and_prose_are_retried_with_feedback(server, llm):
    server.push(
        Reply(raw="{this is not json"),
        Reply(content="Tôi nghĩ đây là câu hỏi y khoa."),
        Reply(content=CLASSIFY_OK),
        Reply(content=COMPOSE_OK),
    )
    out, shared = await run(make_deps(llm))
    assert shared["classification_source"] == "llm" and node(out, "decide")["retries"] == 2
    refine = server.requests[2]["messages"]
    assert refine[-2]["role"] == "assistant" and "rejected" in refine[-1]["content"]


async def test_invalid_schema_and_ungrounded_answer_fall_back(server, llm):
    bad_type = chat_json({"input_type": "joke", "confidence": 2})
    invented = chat_json(
        {"explanation": "Uống thuốc X 500mg.", "suggestion_questions": [], "used_codes": ["Z999"]}
    )
    server.push(Reply(content=bad_type), Reply(content=CLASSIFY_OK), *[Reply(content=invented)] * 3)
    out, shared = await run(make_deps(llm))
    assert shared["classification_source"] == "llm"
    assert (
        shared["answer_source"] == "offline"
        and "thuốc X" not in out["explain"]
        and out["citations"] == ["D006"]
    )


async def test_empty_output_then_fallback_and_estimated_tokens(server, llm):
    server.default = Reply(content="", usage=None)
    out, shared = await run(make_deps(llm))
    assert shared["classification_source"] == "offline"
    assert out["tokens"]["estimated"] and out["tokens"]["prompt"] > 0 and out["tokens"]["calls"] == 6


async def test_tokens_estimated_when_provider_sends_none(server, llm):
    server.push(Reply(content=CLASSIFY_OK, usage=None), Reply(content=COMPOSE_OK, usage=None))
    out, _ = await run(make_deps(llm))
    assert (
        out["tokens"]["estimated"]
        and out["tokens"]["completion"] == len(CLASSIFY_OK) // 4 + len(COMPOSE_OK) // 4
    )


async def test_non_retryable_4xx_goes_straight_to_fallback(server, llm):
    server.default = Reply(status=401)
    out, shared = await run(make_deps(llm))
    assert shared["classification_source"] == "offline" and node(out, "decide")["retries"] == 0


# ----- pruning -----------------------------------------------------------------------------------------

MANY = [
    KBEntry(
        id=100 + i,
        role="patient_dental",
        code=f"P{i:03d}",
        topic=f"Chủ đề {i % 6}",
        question=f"Răng bị đau kiểu số {i} thì sao?",
        answer=f"Trả lời {i}.",
    )
    for i in range(30)
]
CLASSIFY_RAG = chat_json(
    {
        "input_type": "medical_question",
        "confidence": 0.9,
        "reason": "đau răng",
        "rag_questions": ["Răng bị đau thì sao?", "Đau răng phải làm gì?"],
    }
)


async def test_pruning_keeps_llm_choice(server, llm):
    keep = ["P007", "P003", "P003", "P011"]
    server.push(Reply(content=CLASSIFY_RAG), Reply(content=chat_json({"keep_codes": keep})))
    _, shared = await run(make_deps(llm, MANY), "răng bị đau")
    assert shared["pruning"] == {"before": 20, "after": 3, "source": "llm", "error": None}
    assert [h.entry.code for h in shared["retrieved"]] == ["P007", "P003", "P011"]
    assert "Chủ đề" in server.requests[1]["messages"][-1]["content"]


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
async def test_pruning_failures_keep_original_list(server, llm, replies):
    server.push(Reply(content=CLASSIFY_RAG), *replies)
    out, shared = await run(make_deps(llm, MANY), "răng bị đau")
    assert shared["pruning"]["before"] == 20 and shared["pruning"]["after"] == 20
    assert shared["pruning"]["source"] == "offline" and shared["pruning"]["error"]
    codes = [h.entry.code for h in shared["retrieved"]]
    assert len(codes) == len(set(codes)) == 20
    assert out["explain"].endswith(DISCLAIMER)


async def test_no_pruning_below_threshold(server, llm):
    server.push(Reply(content=CLASSIFY_OK), Reply(content=COMPOSE_OK))
    _, shared = await run(make_deps(llm))
    assert shared["pruning"]["source"] == "skipped" and len(server.requests) == 2


# ----- helpers -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('Here:\n```json\n{"a": [1, 2,]}\n```\nDone.', {"a": [1, 2]}),
        ('prefix {"a": {"b": "}"}} trailing prose {"c": 2}', {"a": {"b": "}"}}),
        ("```\n[1, 2]\n```", [1, 2]),
        ('Kết quả: {bad} rồi {"ok": true}', {"ok": True}),
    ],
)
def test_extract_json(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "{unclosed"])
def test_extract_json_rejects(text):
    with pytest.raises(ValueError):
        extract_json(text)


def test_retry_after_parsing_and_render():
    assert (
        parse_retry_after("3") == 3.0 and parse_retry_after(None) is None and parse_retry_after("x") is None
    )
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    ctx = {"role": {"persona": "nha sĩ"}, "items": ["a", "b"], "n": 3}
    assert render("{{ role.persona }}|{{items}}|{{ n }}|{{ missing }}", ctx) == "nha sĩ|a\nb|3|"
