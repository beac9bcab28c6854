"""A question for another section, end to end on Telegram (bot subprocess vs the fake Bot API): a dental
patient asking a diabetes question gets the honest decline saying which section has it and a
"➡️ Chuyển sang mục Tiểu đường" button; tapping it switches the role and answers the same question from the
diabetes KB. The button carries only the stored reply's id: a forged one (another chat's reply, garbage)
changes nothing."""

from __future__ import annotations

import asyncpg

from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, add_kb, onboard, shows

DIABETES = [
    ("TD001", "Đường huyết lúc đói bao nhiêu là bình thường?", "Đường huyết lúc đói bình thường dưới 5,6 mmol/L.", "Chẩn đoán"),
    ("TD002", "Người bệnh tiểu đường ăn trái cây được không?", "Được, chọn trái cây ít ngọt và ăn vừa phải.", "Dinh dưỡng"),
    ("TD003", "Tiêm insulin ở vị trí nào?", "Tiêm dưới da bụng, đùi hoặc mặt sau cánh tay, xoay vòng vị trí.", "Insulin"),
]  # fmt: skip


async def role_of(db: asyncpg.Pool, chat: int) -> str | None:
    return await db.fetchval(
        "SELECT role FROM users WHERE channel = 'telegram' AND external_id = $1", str(chat)
    )


async def test_the_decline_offers_the_section_that_answers(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    await add_kb(db, DIABETES, role="patient_diabetes")
    chat, stranger = 2301, 2302
    await onboard(fake, chat)
    await onboard(fake, stranger)
    n = len(fake.messages[chat])
    await fake.send_text(chat, "Đường huyết lúc đói bao nhiêu là bình thường?")
    decline = (await fake.wait_for_messages(chat, n + 1))[n]
    assert "chưa có nội dung phù hợp" in decline.plain
    assert "Câu hỏi này có vẻ thuộc mục Tiểu đường." in decline.plain
    assert not shows(decline.plain, "TD001")  # never answered from another KB without asking
    switch = decline.buttons[0]
    assert switch["text"] == "➡️ Chuyển sang mục Tiểu đường" and switch["callback_data"].startswith("xr:")
    assert any(b["callback_data"].startswith("sq:") for b in decline.buttons)  # the dental topics stay
    assert await role_of(db, chat) == "patient_dental"

    # Someone else's client sending that payload: refused, nothing changes for either user.
    cq = await fake.tap_forged(stranger, switch["callback_data"])
    assert (await fake.wait_callback_answered(cq)).get("show_alert")
    assert await role_of(db, stranger) == "patient_dental" and await role_of(db, chat) == "patient_dental"
    cq = await fake.tap_forged(chat, "xr:not-a-number")
    await fake.wait_callback_answered(cq)
    assert await role_of(db, chat) == "patient_dental"

    cq = await fake.tap(chat, decline.message_id, switch["callback_data"])
    toast = await fake.wait_callback_answered(cq)
    assert "Tiểu đường" in toast.get("text", "") and not toast.get("show_alert")
    answer = (await fake.wait_for_messages(chat, n + 2))[n + 1]
    assert "❓ Đường huyết lúc đói bao nhiêu là bình thường?" in answer.plain
    assert shows(answer.plain, "TD001")
    assert not any(b["callback_data"].startswith("xr:") for b in answer.buttons)
    await fake.wait_for(
        lambda: not any(b["callback_data"].startswith("xr:") for b in decline.buttons), what="offer taken"
    )
    assert any(b["callback_data"].startswith("sq:") for b in decline.buttons)
    assert await role_of(db, chat) == "patient_diabetes"


async def test_no_section_answers_no_button(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, DENTAL)
    await add_kb(db, DIABETES, role="patient_diabetes")
    chat = 2303
    await onboard(fake, chat)
    n = len(fake.messages[chat])
    await fake.send_text(chat, "Mổ ruột thừa nằm viện mấy ngày thì được về?")
    decline = (await fake.wait_for_messages(chat, n + 1))[n]
    assert "chưa có nội dung phù hợp" in decline.plain and "có vẻ thuộc mục" not in decline.plain
    assert not any(b["callback_data"].startswith("xr:") for b in decline.buttons)
