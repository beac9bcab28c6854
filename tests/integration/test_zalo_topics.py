"""Long lists on Zalo (issue 19): a Zalo message carries at most 5 buttons, so a role's 12 topics and a
topic's 7 questions are paged with "Xem thêm"; every item is reachable by taps, and a tapped item from a
later page is answered like any suggestion. Signed events over real HTTP, the real engine and database, the
fake Zalo OpenAPI (which refuses more than 5 buttons, as Zalo does)."""

from __future__ import annotations

import asyncpg

from bot.zalo.bot import SUGGESTION_EXPIRED
from engine.types import KBEntry
from kb_import.add import add_entries
from tests.integration.zalo_support import ENTRIES, ROLE, Zalo, zalo_harness

TOPICS = [
    "Răng khôn", "Ê buốt", "Cao răng", "Nha khoa trẻ em", "Niềng răng", "Tẩy trắng", "Sâu răng",
    "Viêm nướu", "Hôi miệng", "Chấn thương răng", "Mất răng & phục hình", "Vệ sinh răng miệng",
]  # fmt: skip


async def seed(z: Zalo, pool: asyncpg.Pool) -> list[str]:
    """One entry per topic (12), plus the harness's 7 entries under "Nha khoa" (13 topics in all)."""
    rows = [
        (f"T{i:03d}", f"Câu hỏi mẫu về {t.lower()}?", f"Trả lời về {t.lower()}.", t)
        for i, t in enumerate(TOPICS)
    ]
    rows += [(code, q, a, "Nha khoa") for code, q, a, _ in ENTRIES]
    entries = [
        KBEntry(id=0, role=ROLE, code=code, question=question, answer=answer, topic=topic)
        for code, question, answer, topic in rows
    ]
    await add_entries(pool, z.runtime.extras["embedder"], entries)
    return [*TOPICS, "Nha khoa"]


async def tap_through(z: Zalo, uid: str) -> list[str]:
    """Follow "Xem thêm" from the last message to the end; the titles of every item button seen."""
    titles: list[str] = []
    message = z.fake.to(uid)[-1]
    while True:
        assert 1 <= len(message.buttons) <= 5
        titles += [b["title"] for b in message.buttons if b["payload"].startswith("#sq:")]
        more = [b for b in message.buttons if b["payload"].startswith("#more:")]
        if not more:
            return titles
        assert more == [message.buttons[-1]] and more[0]["title"].startswith("➡️ Xem thêm (")
        before = len(z.fake.to(uid))
        await z.say(uid, more[0]["payload"])
        assert len(z.fake.to(uid)) == before + 1
        message = z.fake.to(uid)[-1]
        assert message.text.startswith("Các lựa chọn tiếp theo (")


async def test_every_topic_and_every_question_of_a_topic_is_reachable(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False) as z:
        topics = await seed(z, db)
        await z.choose_role("u1")
        await z.say("u1", "có những chủ đề nào")
        listing = z.fake.to("u1")[-1]
        assert all(f"• {t}" in listing.text for t in topics)  # the text names every topic too
        assert [b["payload"][:4] for b in listing.buttons] == ["#sq:"] * 4 + ["#mor"]
        assert listing.buttons[-1]["title"] == f"➡️ Xem thêm ({len(topics) - 4})"
        assert sorted(await tap_through(z, "u1")) == sorted(topics)
        assert (
            z.fake.to("u1")[-1].text == "Các lựa chọn tiếp theo (9–13 trên 13), bạn bấm vào mục muốn xem nhé:"
        )

        # A topic from the last page opens its questions; its 7 questions are paged the same way.
        page = z.fake.to("u1")[-1]
        nha_khoa = next(b for b in page.buttons if b["title"] == "Nha khoa")
        await z.say("u1", nha_khoa["payload"])
        questions = await tap_through(z, "u1")
        assert sorted(questions) == sorted(q for _, q, _, _ in ENTRIES)

        # A question from the second page is answered like any tapped suggestion.
        tapped = next(b for b in z.fake.to("u1")[-1].buttons if b["payload"].startswith("#sq:"))
        await z.say("u1", tapped["payload"])
        entry = next(e for e in ENTRIES if e[1] == tapped["title"])
        assert entry[2][:40] in z.fake.to("u1")[-1].text


async def test_more_payload_is_validated_like_typed_text(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False) as z:
        await seed(z, db)
        for uid in ("a", "b"):
            await z.choose_role(uid)
        await z.say("a", "có những chủ đề nào")
        more = z.fake.to("a")[-1].buttons[-1]["payload"]
        set_id = more.split(":")[1]
        for typed in (more, f"#more:{set_id}:0", "#more:999999:4", "#more:abc", "#more:"):
            await z.say("b", typed)  # b types a's payload, a bad start, unknown and malformed sets
            assert z.fake.to("b")[-1].text == SUGGESTION_EXPIRED and not z.fake.to("b")[-1].buttons
        await z.say("a", f"#more:{set_id}:99")  # past the end of a's own set
        assert z.fake.to("a")[-1].text == SUGGESTION_EXPIRED
