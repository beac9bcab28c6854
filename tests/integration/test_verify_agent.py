"""The verifier's agent loop against a local fake OpenAI server, through the real ``openai`` client."""

from __future__ import annotations

from typing import Any

import asyncpg

from db.guidelines import PgGuidelineStore
from engine.llm import LLMClient, LLMConfig
from engine.verify.agent import AgentVerifier, extract_json
from engine.verify.search import GuidelineSearch
from engine.verify.types import Claim
from engine.verify.verifier import OfflineVerifier
from kb_import.guidelines import import_document
from testkit.fakes.openai_server import FakeOpenAI, answer, tool_calls, tool_results
from tests.verify_support import DATA, embedder

CLAIM = Claim(
    "Liều khởi đầu metformin là 1000 mg mỗi ngày.",
    "Dùng thuốc đúng cách",
    {"title": "Sống khỏe với bệnh tiểu đường", "previous": "Metformin là thuốc lựa chọn đầu tay."},
)


async def _agent(pool: asyncpg.Pool, fake_openai: FakeOpenAI, **kwargs: Any) -> AgentVerifier:
    await import_document(pool, embedder(), (DATA / "guideline_dtd.md").read_bytes(), "guideline_dtd.md")
    search = GuidelineSearch(PgGuidelineStore(pool, embedder()), embedder())
    llm = LLMClient(LLMConfig(base_url=fake_openai.base_url, api_key="test", model="fake-model", timeout=10))
    return AgentVerifier(llm, search, fallback=OfflineVerifier(search), **kwargs)


def _cite_first(status: str, confidence: float = 0.9) -> Any:
    """A final answer citing the first chunk the last search returned."""

    def step(body: dict[str, Any]) -> dict[str, Any]:
        results = [r for r in tool_results(body) if "results" in r]
        chunk_id = results[-1]["results"][0]["chunk_id"]
        return answer(
            {
                "status": status,
                "confidence": confidence,
                "reasoning": "Hướng dẫn ghi liều khởi đầu 500 mg.",
                "evidence_ids": [chunk_id],
            }
        )

    return step


async def test_tool_calls_then_cited_verdict(db: asyncpg.Pool, fake_openai: FakeOpenAI) -> None:
    agent = await _agent(db, fake_openai)
    fake_openai.push(
        tool_calls(("fetch_next_sentence", {})),
        tool_calls(("search_guidelines", {"query": "liều khởi đầu metformin", "top_k": 2})),
        _cite_first("FLAGGED"),
    )
    verdict = await agent.verify(CLAIM)
    assert (verdict.status, verdict.confidence, verdict.source) == ("FLAGGED", 0.9, "llm")
    assert "Metformin" in verdict.evidence[0].heading and "500 mg" in verdict.evidence[0].text
    # the real tool-calling protocol: tools declared, the sentence and search results sent back as tool messages
    first, second, third = fake_openai.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["fetch_next_sentence", "search_guidelines"]
    sentence = tool_results(second)[0]
    assert sentence["sentence"] == CLAIM.text and sentence["section"] == "Dùng thuốc đúng cách"
    assert len(tool_results(third)[1]["results"]) == 2
    assert third["messages"][-2]["tool_calls"][0]["function"]["name"] == "search_guidelines"


async def test_self_call_is_refused(db: asyncpg.Pool, fake_openai: FakeOpenAI) -> None:
    agent = await _agent(db, fake_openai)
    fake_openai.push(
        tool_calls(("verify_sentence", {"sentence": CLAIM.text})),
        tool_calls(("search_guidelines", {"query": "metformin liều"})),
        _cite_first("FLAGGED", 0.8),
    )
    verdict = await agent.verify(CLAIM)
    assert verdict.status == "FLAGGED" and verdict.source == "llm"
    refused = tool_results(fake_openai.requests[1])[0]
    assert "agent itself" in refused["error"]
    assert verdict.trace[0]["tool"] == "verify_sentence" and verdict.trace[0]["outcome"] != "ok"


async def test_repeated_call_is_not_recomputed(db: asyncpg.Pool, fake_openai: FakeOpenAI) -> None:
    agent = await _agent(db, fake_openai)
    same = {"query": "metformin", "top_k": 3}
    fake_openai.push(
        tool_calls(("search_guidelines", same)),
        tool_calls(("search_guidelines", {"top_k": 3, "query": "metformin"})),  # same call, keys reordered
        _cite_first("FLAGGED"),
    )
    verdict = await agent.verify(CLAIM)
    assert verdict.status == "FLAGGED"
    repeated = tool_results(fake_openai.requests[2])[1]
    assert repeated["error"].startswith("repeated call")


async def test_malformed_arguments_are_answered_as_tool_errors(
    db: asyncpg.Pool, fake_openai: FakeOpenAI
) -> None:
    agent = await _agent(db, fake_openai)
    fake_openai.push(
        tool_calls(("search_guidelines", '{"query": "metformin", ')),  # broken JSON
        tool_calls(("search_guidelines", {"query": "metformin", "top_k": "nhiều"})),  # wrong type
        tool_calls(("search_guidelines", {"query": "liều metformin khởi đầu"})),
        _cite_first("FLAGGED"),
    )
    verdict = await agent.verify(CLAIM)
    assert verdict.status == "FLAGGED" and verdict.source == "llm"
    errors = [r["error"] for r in tool_results(fake_openai.requests[3]) if "error" in r]
    assert "not valid JSON" in errors[0] and "integer" in errors[1]


async def test_three_bad_attempts_fall_back_to_a_plain_answer(
    db: asyncpg.Pool, fake_openai: FakeOpenAI
) -> None:
    agent = await _agent(db, fake_openai)

    def plain(body: dict[str, Any]) -> dict[str, Any]:
        assert "tools" not in body  # the hard fallback is a plain request without tools
        chunk = int(body["messages"][-1]["content"].split("[chunk_id ")[1].split("]")[0])
        return answer(
            f'Kết luận:\n```json\n{{"status": "FLAGGED", "confidence": 0.7, "reasoning": "Sai liều.", '
            f'"evidence_ids": [{chunk}]}}\n```'
        )

    fake_openai.push(
        tool_calls(("verify_sentence", {})),
        tool_calls(("search_guidelines", "not json")),
        tool_calls(("unknown_tool", {})),
        plain,
    )
    verdict = await agent.verify(CLAIM)
    assert (verdict.status, verdict.source) == ("FLAGGED", "llm-fallback")
    assert len(fake_openai.requests) == 4
    assert any(t.get("event") == "too_many_bad_attempts" for t in verdict.trace)


async def test_max_iterations_then_offline_when_the_plain_answer_fails(
    db: asyncpg.Pool, fake_openai: FakeOpenAI
) -> None:
    agent = await _agent(db, fake_openai, max_iterations=3)
    fake_openai.push(
        tool_calls(("search_guidelines", {"query": "metformin 1"})),
        tool_calls(("search_guidelines", {"query": "metformin 2"})),
        tool_calls(("search_guidelines", {"query": "metformin 3"})),
        answer("Tôi nghĩ là câu này sai."),  # the plain fallback answers without JSON
    )
    verdict = await agent.verify(CLAIM)
    assert len(fake_openai.requests) == 4
    assert any(t.get("event") == "max_iterations" for t in verdict.trace)
    assert verdict.source == "offline" and verdict.status == "FLAGGED"  # the offline rule: 1000 mg vs 500 mg
    assert verdict.reasoning.startswith("(Đánh giá tự động, vượt quá số bước cho phép.)")


async def test_uncited_verdict_is_downgraded_and_api_errors_fall_back(
    db: asyncpg.Pool, fake_openai: FakeOpenAI
) -> None:
    agent = await _agent(db, fake_openai)
    fake_openai.push(
        answer({"status": "VALID", "confidence": 0.95, "reasoning": "Đúng.", "evidence_ids": []})
    )
    verdict = await agent.verify(CLAIM)
    assert verdict.status == "UNCLEAR" and verdict.confidence <= 0.3  # no cited passage: not backed
    assert verdict.evidence  # the model never searched: the loop still retrieves and shows evidence
    verdict = await agent.verify(CLAIM)  # script exhausted: HTTP 500, retried once, then the offline verdict
    assert verdict.source == "offline"
    assert verdict.reasoning.startswith("(Đánh giá tự động, không gọi được mô hình ngôn ngữ.)")
    assert len(fake_openai.requests) == 3  # the core retry wrapper tried the failing step twice


def test_extract_json() -> None:
    assert extract_json('xin chào {"a": 1} hết') == {"a": 1}
    assert extract_json('```json\n{"status": "VALID"}\n```') == {"status": "VALID"}
    assert extract_json("không có") is None and extract_json("{broken") is None
