"""The section switch on Zalo: a dental patient's diabetes question gets the decline naming the Tiểu đường
section and a "➡️ Chuyển sang mục Tiểu đường" button (``#xr:<reply id>``, within Zalo's 5 buttons); tapping it
switches the role and answers there. A typed or someone else's ``#xr`` payload changes nothing. Signed events
over real HTTP, the real engine and database, the fake Zalo OpenAPI."""

from __future__ import annotations

import asyncpg

from bot.zalo.bot import SUGGESTION_EXPIRED
from db import users
from engine.types import KBEntry
from kb_import.add import add_entries
from tests.integration.zalo_support import ROLE, Zalo, zalo_harness

DIABETES = [
    ("TD001", "Đường huyết lúc đói bao nhiêu là bình thường?", "Đường huyết lúc đói bình thường dưới 5,6 mmol/L."),
    ("TD002", "Người bệnh tiểu đường ăn trái cây được không?", "Được, chọn trái cây ít ngọt và ăn vừa phải."),
    ("TD003", "Tiêm insulin ở vị trí nào?", "Tiêm dưới da bụng, đùi hoặc mặt sau cánh tay, xoay vòng vị trí."),
]  # fmt: skip


async def seed_diabetes(z: Zalo, pool: asyncpg.Pool) -> None:
    entries = [
        KBEntry(
            id=0, role="patient_diabetes", code=code, question=question, answer=answer, topic="Tiểu đường"
        )
        for code, question, answer in DIABETES
    ]
    await add_entries(pool, z.runtime.extras["embedder"], entries)


async def test_zalo_switch_button(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        await seed_diabetes(z, db)
        for uid in ("a", "b"):
            await z.choose_role(uid)
        await z.say("a", "Đường huyết lúc đói bao nhiêu là bình thường?")
        decline = z.fake.to("a")[-1]
        assert "Câu hỏi này có vẻ thuộc mục Tiểu đường." in decline.text
        assert "5,6 mmol/L" not in decline.text
        assert 2 <= len(decline.buttons) <= 5
        switch = decline.buttons[0]
        assert switch["title"] == "➡️ Chuyển sang mục Tiểu đường" and switch["payload"].startswith("#xr:")

        await z.say("b", switch["payload"])  # another user's reply: refused
        assert z.fake.to("b")[-1].text == SUGGESTION_EXPIRED
        await z.say("a", "#xr:12abc")
        assert z.fake.to("a")[-1].text == SUGGESTION_EXPIRED
        assert (await users.get(db, "zalo", "b")).role == ROLE and (
            await users.get(db, "zalo", "a")
        ).role == ROLE

        await z.say("a", switch["payload"])
        answer = z.fake.to("a")[-1]
        assert answer.text.startswith("❓ Đường huyết lúc đói bao nhiêu là bình thường?")
        assert "5,6 mmol/L" in answer.text
        assert not any(b["payload"].startswith("#xr:") for b in answer.buttons)
        assert (await users.get(db, "zalo", "a")).role == "patient_diabetes"
