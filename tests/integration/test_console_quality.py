"""The console's quality pages over HTTP against the real app and database: "try it" trials never count as
patients (statistics, unanswered list), its form checks (CSRF, empty text, unknown role), the unanswered
list's link, and the chart images (PNG, behind the session)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import asyncpg
import httpx

from db import console_conversations, conversations, digest, stats, users
from db.conversations import StoredTurn
from tests.console_support import ADMIN, CLINICIAN, add_entry
from tests.integration.test_console import FORBIDDEN, csrf_of, log_in

QUESTION = "Răng khôn mọc lệch có cần nhổ ngay không?"


async def patient_exchange(db: asyncpg.Pool, text: str, score: float, citations: list[str]) -> int:
    """A patient's question on Telegram and the bot's reply, stored as ChatService stores them."""
    user = await users.get_or_create(db, "telegram", "90001")
    conversation_id = await conversations.new_conversation(db, user.id, "patient_dental")
    turn = StoredTurn(
        user_text=text,
        bot_text="Bạn muốn hỏi về chủ đề nào?",
        input_type="medical_question",
        retrieval_score=score,
        citations=citations,
    )
    in_id, _, _ = await conversations.store_exchange(db, conversation_id, user.id, turn)
    return in_id


async def test_a_trial_is_answered_and_never_counts_as_a_patient(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await log_in(http, *CLINICIAN)
    page = await http.get("/console/try")
    assert page.status_code == 200 and "Chưa có tin nhắn nào" in page.text
    sent = await http.post(
        "/console/try", data={"csrf_token": csrf_of(page.text), "role": "patient_dental", "text": QUESTION}
    )
    assert (sent.status_code, sent.headers["location"]) == (303, "/console/try?role=patient_dental")
    shown = await http.get(sent.headers["location"])
    assert QUESTION in shown.text and "Lý do bot trả lời như vậy" in shown.text
    channel = await db.fetchval("SELECT u.channel FROM messages m JOIN users u ON u.id = m.user_id LIMIT 1")
    assert channel == stats.TRIAL_CHANNEL  # stored as a trial, through the patients' ChatService
    assert await db.fetchval("SELECT count(*) FROM messages") == 2

    week = await stats.window(db, 7)
    assert (week.users, week.new_users, week.messages, week.answered + week.clarified) == (0, 0, 0, 0)
    assert sum(n for _, n in await stats.daily_messages(db, 7)) == 0
    assert await stats.unanswered(db, 0.99) == []  # the trial scored low: still not listed
    assert await stats.by_role(db, 7) == []
    now = datetime.now(UTC)
    day = await digest.numbers(db, now - timedelta(days=1), now, threshold=0.99, tz="Asia/Ho_Chi_Minh")
    assert (day.messages_in, day.active_users, day.new_users, day.unanswered_questions) == (0, 0, 0, [])
    assert await console_conversations.recent(db) == []  # nor among the patients' conversations
    unanswered = await http.get("/console/unanswered")
    assert QUESTION not in unanswered.text and "Không có câu hỏi nào" in unanswered.text


async def test_the_try_form_refuses_what_it_cannot_send(http: httpx.AsyncClient, db: asyncpg.Pool) -> None:
    await log_in(http, *ADMIN)
    page = await http.get("/console/try")
    token = csrf_of(page.text)
    forged = await http.post("/console/try", data={"role": "patient_dental", "text": QUESTION})
    assert forged.status_code == 403 and FORBIDDEN in forged.text
    empty = await http.post(
        "/console/try", data={"csrf_token": token, "role": "patient_dental", "text": "  "}
    )
    assert "Hãy nhập một tin nhắn để thử." in (await http.get(empty.headers["location"])).text
    long = await http.post(
        "/console/try", data={"csrf_token": token, "role": "patient_dental", "text": "a" * 4001}
    )
    assert "Tin nhắn quá dài" in (await http.get(long.headers["location"])).text
    unknown = await http.post(
        "/console/try", data={"csrf_token": token, "role": "khong_co", "text": QUESTION}
    )
    assert "Chuyên khoa này không có" in (await http.get(unknown.headers["location"])).text
    assert await db.fetchval("SELECT count(*) FROM messages") == 0
    restart = await http.post("/console/try/new", data={"csrf_token": token, "role": "patient_dental"})
    assert "Đã bắt đầu cuộc thử mới." in (await http.get(restart.headers["location"])).text


async def test_the_unanswered_list_links_each_question_to_a_new_entry(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await patient_exchange(db, QUESTION, 0.21, [])
    await patient_exchange(db, "Niềng răng mất bao lâu?", 0.93, ["NK-002"])  # answered: not listed
    await log_in(http, *CLINICIAN)
    page = await http.get("/console/unanswered?days=7")
    assert page.status_code == 200 and QUESTION in page.text and "Niềng răng mất bao lâu?" not in page.text
    assert "0.21" in page.text and "Nha khoa" in page.text
    href = page.text.split('href="/console/kb/new?', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert parse_qs(urlsplit("?" + href).query) == {"role": ["patient_dental"], "question": [QUESTION]}
    bad = await http.get("/console/unanswered?days=abc")
    assert (
        bad.status_code == 200 and "Số ngày phải là một số từ 1 đến 365" in bad.text and QUESTION in bad.text
    )


async def test_the_charts_are_png_images_behind_the_session(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await patient_exchange(db, QUESTION, 0.21, [])
    anonymous = await http.get("/console/stats/messages.png")
    assert (anonymous.status_code, anonymous.headers["location"]) == (303, "/console/login")
    await log_in(http, *CLINICIAN)
    page = await http.get("/console/stats")
    assert page.status_code == 200 and 'src="/console/stats/messages.png"' in page.text
    assert "Tỉ lệ trả lời được" in page.text and "0%" in page.text  # the one question was not answered
    for chart in ("messages", "today"):
        assert f'src="/console/stats/{chart}.png"' in page.text
        png = await http.get(f"/console/stats/{chart}.png")
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        assert png.content.startswith(b"\x89PNG\r\n\x1a\n")


async def test_a_reply_that_points_to_another_section_offers_its_button(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    sugar = "Đường huyết lúc đói bao nhiêu là cao?"
    await add_entry(db, "patient_diabetes", "TD-001", sugar, "Từ 7,0 mmol/L trở lên khi đói là cao.")
    await add_entry(db, "patient_dental", "NK-001", "Niềng răng mất bao lâu?", "Thường 18 đến 24 tháng.")
    await log_in(http, *CLINICIAN)
    page = await http.get("/console/try")
    token = csrf_of(page.text)
    sent = await http.post(
        "/console/try", data={"csrf_token": token, "role": "patient_dental", "text": sugar}
    )
    shown = (await http.get(sent.headers["location"])).text
    assert "Chuyển sang mục Tiểu đường" in shown and "Gợi ý chuyển mục" in shown
    button = shown.split('aria-label="Chuyển mục"', 1)[1].split("</form>", 1)[0]
    assert 'name="role" value="patient_diabetes"' in button and f'name="text" value="{sugar}"' in button
    switched = await http.post(
        "/console/try", data={"csrf_token": token, "role": "patient_diabetes", "text": sugar}
    )
    assert switched.headers["location"] == "/console/try?role=patient_diabetes"
    answered = (await http.get(switched.headers["location"])).text
    assert "Từ 7,0 mmol/L trở lên khi đói là cao." in answered and "TD-001" in answered
