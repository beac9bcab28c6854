"""Issue 19 on Telegram, end to end (bot subprocess vs the fake Bot API): the full topic list as paged buttons,
a topic button listing that topic's questions, a patient's answer without KB codes, and honest replies to a
booking request and to thanks (no disclaimer, no topic list)."""

from __future__ import annotations

import asyncpg

from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import add_kb, onboard, shows

TOPICS = [
    "Răng nhạy cảm",
    "Sâu răng",
    "Viêm nướu",
    "Răng khôn",
    "Niềng răng",
    "Trẻ em",
    "Hôi miệng",
    "Mất răng & phục hình",
]
KB = [
    (f"T{i:03d}", question, answer, topic)
    for i, (topic, question, answer) in enumerate(
        [
            (
                TOPICS[0],
                "Răng bị ê buốt khi uống nước lạnh thì làm sao?",
                "Dùng kem đánh răng cho răng nhạy cảm.",
            ),
            (TOPICS[1], "Làm sao biết mình bị sâu răng?", "Vết đen hoặc lỗ trên răng; hãy khám định kỳ."),
            (TOPICS[2], "Chảy máu chân răng khi đánh răng là bị gì?", "Thường do viêm nướu vì mảng bám."),
            (
                TOPICS[3],
                "Răng khôn mọc lệch có cần nhổ không?",
                "Không phải răng khôn mọc lệch nào cũng phải nhổ.",
            ),
            (TOPICS[4], "Niềng răng mất bao lâu thì xong?", "Thường từ 18 đến 24 tháng."),
            (TOPICS[5], "Trẻ mấy tuổi thì bắt đầu chải răng?", "Từ khi mọc chiếc răng đầu tiên."),
            (TOPICS[6], "Bị hôi miệng kéo dài là do đâu?", "Thường do mảng bám và bệnh nướu."),
            (TOPICS[7], "Mất răng có cần làm răng giả không?", "Nên phục hình để tránh xô lệch răng."),
            (
                TOPICS[7],
                "Vệ sinh hàm giả tháo lắp như thế nào?",
                "Tháo ra chải sạch mỗi ngày, ngâm nước sạch.",
            ),
        ],
        start=1,
    )
]


async def test_topics_are_paged_and_a_topic_lists_its_questions(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    await add_kb(db, KB)
    chat = 1901
    await onboard(fake, chat)
    await fake.send_text(chat, "cho tôi xem các chủ đề")
    topics = (await fake.wait_for_messages(chat, 2))[1]
    assert all(f"• {t}" in topics.plain for t in TOPICS)  # every topic in the text, none cut off
    first_page = [b["text"] for b in topics.buttons if b["callback_data"].startswith("sq:")]
    assert first_page == TOPICS[:6]
    assert [b["text"] for b in topics.buttons if b["callback_data"].startswith("sp:")] == ["1/2", "Sau ▶"]

    cq = await fake.tap(
        chat, topics.message_id, topics.button("sp:")["callback_data"].replace(":0:", ":1:", 1)
    )
    await fake.wait_callback_answered(cq)
    await fake.wait_for(lambda: any(b["text"] == "◀ Trước" for b in topics.buttons), what="second page")
    second_page = [b["text"] for b in topics.buttons if b["callback_data"].startswith("sq:")]
    assert second_page == TOPICS[6:]  # "Mất răng & phục hình" is there, one tap away

    lost_teeth = next(b for b in topics.buttons if b["text"] == TOPICS[7])
    cq = await fake.tap(chat, topics.message_id, lost_teeth["callback_data"])
    await fake.wait_callback_answered(cq)
    listed = (await fake.wait_for_messages(chat, 3))[2]
    assert "Mất răng & phục hình" in listed.plain
    assert [b["text"] for b in listed.buttons if b["callback_data"].startswith("sq:")] == [
        "Mất răng có cần làm răng giả không?",
        "Vệ sinh hàm giả tháo lắp như thế nào?",
    ]
    denture = listed.button("sq:")["callback_data"]
    cq = await fake.tap(chat, listed.message_id, denture)
    await fake.wait_callback_answered(cq)
    answer = (await fake.wait_for_messages(chat, 4))[3]
    assert shows(answer.plain, "T008")
    assert "T008" not in answer.plain and "📚 Nguồn: tài liệu hỏi đáp của phòng khám" in answer.plain
    assert not fake.errors


async def test_booking_and_thanks_get_honest_short_replies(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    await add_kb(db, KB)
    chat = 1902
    await onboard(fake, chat)
    await fake.send_text(chat, "cho tôi đặt lịch khám sáng thứ 7 nhé")
    booking = (await fake.wait_for_messages(chat, 2))[1]
    assert "chưa tự đặt lịch được" in booking.plain and "ghi nhận" not in booking.plain
    assert "liên hệ trực tiếp" in booking.plain  # no phone or link configured for this bot: said plainly
    assert "tham khảo" not in booking.plain  # no medical disclaimer under it

    await fake.send_text(chat, "cảm ơn bạn")
    thanks = (await fake.wait_for_messages(chat, 3))[2]
    assert "Không có gì" in thanks.plain and "tham khảo" not in thanks.plain
    assert not [b for b in thanks.buttons if b["callback_data"].startswith(("sq:", "sp:"))]  # no topic list
