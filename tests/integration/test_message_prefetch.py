"""What makes ``medbot ask`` faster must not change what it does: the query embedding started early is the
vector the search would have made (llama.cpp's batch included), a text is embedded once however many ask for
it, a failed prefetch is not remembered, a message reads its KB version once (an import is seen by the next
message), and the conversation and its memory read in one round trip are the ones the separate reads found."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import numpy as np
import pytest
from openai import AsyncOpenAI

from db import conversations
from db.stores import PgEmbeddingCache, PgKBStore
from engine.embedding import CachedEmbedder, EmbeddingUnavailable, LlamaCppEmbedder, OpenAIEmbedder
from engine.retrieval.search import KBSearch, one_kb_check_per_message
from testkit.database import TEST_DATA_DIR
from testkit.fakes.openai_server import FakeOpenAI
from tests.medbot_cli import run_medbot

MESSAGES = [
    "răng khôn mọc lệch có nên nhổ không bác sĩ",
    "rang khon moc lech co can nho khong",
    "Chào bác sĩ, răng khôn của em bị sưng đau mấy hôm nay, em phải làm sao ạ?",
    "niềng răng mất bao lâu",
    "Em chào bác sĩ. Con em 4 tuổi bị sâu răng sữa, có cần chữa không hay để thay luôn ạ? Em cảm ơn.",
    "đau",
    "Đường huyết lúc đói 7,2 mmol/L có cao không?",
]


async def test_llamacpp_batched_queries_are_the_vectors_made_one_at_a_time() -> None:
    """The prefetch sends a message's later texts (the parts of a two-part question, a follow-up's readings)
    in one llama.cpp call: each row must be bit for bit what the search's own call would have made."""
    llama = LlamaCppEmbedder(TEST_DATA_DIR)
    alone = np.vstack([await llama.embed_query(m) for m in MESSAGES])
    for size in (2, 3, len(MESSAGES)):
        for start in range(0, len(MESSAGES), size):
            batch = await llama.embed_queries(MESSAGES[start : start + size])
            assert np.array_equal(batch, alone[start : start + size])


def queries_sent(fake_openai: FakeOpenAI) -> list[str]:
    """The query texts the embedding server was asked for (the probe and passages left out)."""
    sent: list[str] = []
    for body in fake_openai.embedding_requests:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        sent += [t.removeprefix("query: ") for t in inputs if t.startswith("query: ")]
    return sent


@pytest.fixture
async def remote(db: asyncpg.Pool, fake_openai: FakeOpenAI) -> CachedEmbedder:
    client = AsyncOpenAI(base_url=fake_openai.base_url, api_key="test", max_retries=0)
    embedder = CachedEmbedder(OpenAIEmbedder(client, "e5-small"), PgEmbeddingCache(db))
    await embedder.open()
    return embedder


async def test_a_prefetched_query_is_embedded_once_and_is_the_searchs_vector(
    remote: CachedEmbedder, fake_openai: FakeOpenAI
) -> None:
    remote.prefetch_queries(["ê buốt răng", "niềng răng"])
    first, again = await asyncio.gather(remote.embed_query("ê buốt răng"), remote.embed_query("ê buốt răng"))
    second = await remote.embed_query("niềng răng")
    assert np.allclose(first, fake_openai.embed("query: ê buốt răng"), atol=1e-6)
    assert np.array_equal(first, again)
    assert np.allclose(second, fake_openai.embed("query: niềng răng"), atol=1e-6)
    assert sorted(queries_sent(fake_openai)) == ["niềng răng", "ê buốt răng"]  # each text once
    assert remote.prefetched == 2

    # Asked twice at once without a prefetch: embedded once too.
    a, b = await asyncio.gather(remote.embed_query("hôi miệng"), remote.embed_query("hôi miệng"))
    assert np.array_equal(a, b)
    assert queries_sent(fake_openai).count("hôi miệng") == 1


async def test_a_failed_prefetch_reaches_the_search_and_is_not_remembered(
    remote: CachedEmbedder, fake_openai: FakeOpenAI
) -> None:
    fake_openai.embedding_status = 503  # the embedding server is down while the message comes in
    remote.prefetch_queries(["răng lung lay"])
    with pytest.raises(EmbeddingUnavailable):
        await remote.embed_query("răng lung lay")  # as the search's own call would have failed
    fake_openai.embedding_status = 200
    vector = await remote.embed_query("răng lung lay")  # the next ask embeds it afresh
    assert np.allclose(vector, fake_openai.embed("query: răng lung lay"), atol=1e-6)
    assert queries_sent(fake_openai) == ["răng lung lay", "răng lung lay"]


HEADER = "MÃ SỐ,ĐỀ MỤC,CÂU HỎI,CÂU TRẢ LỜI,keywords\n"
FIRST = "NK-1,Răng nhạy cảm,Răng bị ê buốt khi uống nước lạnh?,Dùng kem đánh răng cho răng nhạy cảm.,ê buốt\n"
SECOND = "NK-2,Niềng răng,Niềng răng mất bao lâu thì xong?,Thường từ 18 đến 24 tháng.,chỉnh nha\n"


def _import(db_url: str, path: Path) -> None:
    proc = run_medbot(db_url, "import", str(path), "--role", "patient_dental")
    assert proc.returncode == 0, proc.stdout + proc.stderr


async def test_a_message_reads_the_kb_version_once_and_the_next_sees_an_import(
    db: asyncpg.Pool, db_url: str, tmp_path: Path, embedder: CachedEmbedder
) -> None:
    (tmp_path / "v1.csv").write_text(HEADER + FIRST, encoding="utf-8")
    _import(db_url, tmp_path / "v1.csv")
    search = KBSearch(PgKBStore(db), embedder, version_check_seconds=0)
    question = "niềng răng mất bao lâu"
    with one_kb_check_per_message():  # one message: the prefetch as it comes in, then its searches
        search.prefetch("patient_dental", [question])
        before = await search.search("patient_dental", question)
        (tmp_path / "v2.csv").write_text(HEADER + FIRST + SECOND, encoding="utf-8")
        _import(db_url, tmp_path / "v2.csv")  # another process, while this message is being answered
        same_message = await search.search("patient_dental", question)
    assert [h.entry.code for h in same_message.hits] == [h.entry.code for h in before.hits] == ["NK-1"]
    with one_kb_check_per_message():  # the next message
        search.prefetch("patient_dental", [question])
        after = await search.search("patient_dental", question)
    assert after.hits[0].entry.code == "NK-2"


async def test_opening_a_conversation_reads_its_memory_in_the_same_round_trip(db: asyncpg.Pool) -> None:
    user_id = await db.fetchval(
        "INSERT INTO users (channel, external_id, role) VALUES ('test', 'prefetch-memory', 'patient_dental') "
        "RETURNING id"
    )
    fresh = await conversations.open_with_memory(db, user_id, "patient_dental", "active", 6)
    assert (fresh.messages, fresh.summary, fresh.answered) == ([], "", False)
    cid = fresh.conversation_id
    for i, citations in enumerate(([], ["NK-1"], [])):
        turn = conversations.StoredTurn(
            user_text=f"hỏi {i}", bot_text=f"đáp {i}", input_type="medical_question", citations=citations
        )
        await conversations.store_exchange(db, cid, user_id, turn, [f"gợi ý {i}"])
    await conversations.set_summary(db, cid, "tóm tắt")

    opened = await conversations.open_with_memory(db, user_id, "patient_dental", "active", 4)
    assert (
        opened.conversation_id
        == cid
        == await conversations.active_conversation(db, user_id, "patient_dental")
    )
    rows, summary, answered = await conversations.memory(db, cid, 4)
    assert (opened.messages, opened.summary, opened.answered) == (rows, summary, answered)
    assert [m["text"] for m in opened.messages] == ["hỏi 1", "đáp 1", "hỏi 2", "đáp 2"]
    assert opened.messages[-1]["suggestions"] == ["gợi ý 2"]
    assert (opened.summary, opened.answered) == ("tóm tắt", True)

    kept = await conversations.open_with_memory(db, user_id, "patient_dental", "keep", 4)
    assert kept.conversation_id == cid
    await db.execute(
        "UPDATE conversations SET last_activity_at = now() - interval '2 hours' WHERE id = $1", cid
    )
    idle = await conversations.open_with_memory(db, user_id, "patient_dental", "active", 4)
    assert idle.conversation_id != cid and idle.messages == []  # a new one after an idle hour
    new = await conversations.open_with_memory(db, user_id, "patient_dental", "new", 4)
    assert new.conversation_id not in (cid, idle.conversation_id) and not new.answered
    latest = await conversations.open_with_memory(db, user_id, "patient_dental", "keep", 4)
    assert latest.conversation_id == new.conversation_id
