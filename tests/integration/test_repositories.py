"""Repository round trips against the real database: users, conversations, messages, KB + KNN search."""

from __future__ import annotations

import asyncpg
import numpy as np

from db import conversations, kb, users
from db.conversations import StoredTurn
from db.stores import PgKBStore, PgMemoryStore
from engine.types import KBEntry


async def test_user_with_role_round_trip(db: asyncpg.Pool) -> None:
    user = await users.get_or_create(db, "telegram", "1001", "An")
    assert user.role is None and not user.is_admin
    await users.set_role(db, user.id, "patient_dental")
    again = await users.get_or_create(db, "telegram", "1001")
    assert again.id == user.id
    assert again.role == "patient_dental"
    assert again.display_name == "An"
    other_channel = await users.get_or_create(db, "zalo", "1001")
    assert other_channel.id != user.id


async def test_conversation_and_messages_with_trace(db: asyncpg.Pool) -> None:
    user = await users.get_or_create(db, "console", "local")
    conv = await conversations.active_conversation(db, user.id, "patient_dental")
    assert await conversations.active_conversation(db, user.id, "patient_dental") == conv
    trace = [{"node": "IngestQuery", "action": "default", "ms": 0.4, "retries": 0, "error": None}]
    turn = StoredTurn(
        user_text="Răng bị ê buốt phải làm sao?",
        bot_text="Bạn nên dùng kem đánh răng cho răng nhạy cảm.",
        input_type="medical_question",
        retrieval_score=0.81,
        citations=["D001"],
        trace=trace,
    )
    in_id, out_id = await conversations.store_turn(db, conv, user.id, turn)
    stored = await conversations.get_message(db, out_id)
    assert stored is not None
    assert stored["trace"] == trace
    assert stored["citations"] == ["D001"]
    assert in_id < out_id

    memory = PgMemoryStore(db)
    turns = await memory.recent_turns(conv)
    assert [t.user_text for t in turns] == ["Răng bị ê buốt phải làm sao?"]
    assert turns[0].citations == ["D001"]

    # Changing role starts a new conversation.
    assert await conversations.active_conversation(db, user.id, "patient_diabetes") != conv


async def test_kb_entry_embedding_and_knn_nearest_first(db: asyncpg.Pool) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(5, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = []
    for i, vec in enumerate(vectors):
        entry = KBEntry(
            id=0, role="patient_dental", code=f"D{i:03d}", question=f"Câu hỏi {i}", answer="Trả lời"
        )
        ids.append(await kb.add_entry(db, entry, embedding=vec, embedding_model="test"))
    # An entry of another role, identical to the query, must never come back.
    other = KBEntry(id=0, role="doctor_dental", code="X001", question="Khác", answer="Khác")
    await kb.add_entry(db, other, embedding=vectors[3], embedding_model="test")

    query = vectors[3] + 0.01 * rng.normal(size=384).astype(np.float32)
    query /= np.linalg.norm(query)
    # Vectors of another model are never searched with these.
    await kb.add_entry(
        db,
        KBEntry(id=0, role="patient_dental", code="M001", question="Mô hình khác", answer="Khác"),
        embedding=vectors[3],
        embedding_model="other-model",
    )
    result = await kb.dense_search(db, "patient_dental", query, 3, model="test")
    assert result[0][0] == ids[3]
    assert result[0][1] > 0.9
    assert len(result) == 3
    assert all(entry_id in ids for entry_id, _ in result)
    assert [s for _, s in result] == sorted((s for _, s in result), reverse=True)

    entries = await kb.active_entries(db, "patient_dental")
    assert [e.code for e in entries] == ["D000", "D001", "D002", "D003", "D004", "M001"]


async def test_dense_search_plans_agree(db: asyncpg.Pool) -> None:
    """In-memory exact (the store's copy), SQL exact and HNSW give the same nearest entries of the role,
    never another role's, never an inactive one."""
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(300, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = []
    for i, v in enumerate(vectors):
        entry = KBEntry(id=0, role="patient_dental", code=f"V{i:03d}", question=f"Câu {i}", answer="Trả lời")
        ids.append(await kb.add_entry(db, entry, embedding=v, embedding_model="test"))
    await kb.add_entry(db, KBEntry(id=0, role="doctor_dental", code="X1", question="Khác", answer="Khác"),
                       embedding=vectors[5], embedding_model="test")  # fmt: skip
    await db.execute("UPDATE kb_entries SET active = false WHERE id = $1", ids[9])
    store = PgKBStore(db)
    await store.load_entries("patient_dental")
    assert await store.dense_search("patient_dental", vectors[5], 10) == []  # no model chosen yet: nothing
    assert await store.load_vectors("patient_dental", "test") == (299, 299)
    for target in (5, 9, 123):
        query = vectors[target] + 0.05 * rng.normal(size=384).astype(np.float32)
        in_memory = await store.dense_search("patient_dental", query, 10)
        exact = await kb.dense_search(db, "patient_dental", query, 10, model="test", role_size=300)
        hnsw = await kb.dense_search(
            db, "patient_dental", query, 10, model="test", role_size=kb.EXACT_SEARCH_MAX + 1
        )
        assert [i for i, _ in in_memory] == [i for i, _ in exact]
        assert np.allclose([s for _, s in in_memory], [s for _, s in exact], atol=1e-5)
        assert [i for i, _ in hnsw][:3] == [i for i, _ in exact][:3]
        assert ids[9] not in [i for i, _ in in_memory] and all(i in ids for i, _ in in_memory)
        if target != 9:
            assert in_memory[0][0] == ids[target]
