"""The console's quality pages in a real Chromium, as a doctor uses them: try a question and read why the bot
answered it, see an emergency answered with 115 first (and a question that only sounds like one answered, with
115 in case), and find a patient's unanswered question with the link
that turns it into a KB entry."""

from __future__ import annotations

import re

import asyncpg
from playwright.async_api import Page, expect

from tests.browser.test_console import ANSWER, sign_in
from tests.console_support import CLINICIAN, add_entry
from tests.integration.test_console_quality import patient_exchange


async def test_a_clinician_tries_a_kb_question_and_reads_the_reasoning(
    page: Page, console: str, db: asyncpg.Pool
) -> None:
    await add_entry(db, "patient_dental", "NK-001", "Đau răng khi uống nước lạnh?", ANSWER, topic="Đau răng")
    await add_entry(db, "patient_dental", "NK-002", "Niềng răng mất bao lâu?", "Thường 18 đến 24 tháng.")
    await sign_in(page, console, *CLINICIAN)
    await page.get_by_role("link", name="Thử bot").click()
    await page.get_by_label("Chuyên khoa").select_option("patient_dental")
    await page.get_by_label("Tin nhắn").fill("Đau răng khi uống nước lạnh thì sao?")
    await page.get_by_role("button", name="Gửi").click()

    reply = page.get_by_label("Câu trả lời của bot")
    await expect(reply).to_contain_text(ANSWER)
    await expect(page.locator("dd.citations")).to_have_text("NK-001")
    await expect(page.locator("dd.probability")).to_have_text(
        re.compile(r"^[01]\.\d\d \(ngưỡng trả lời 0\.\d\d\)$")
    )
    await expect(page.get_by_text("Trả lời từ kho kiến thức")).to_be_visible()
    await expect(page.locator("table.hits tbody tr").first.get_by_role("cell").first).to_have_text("NK-001")

    # a suggestion is a button that sends itself as the next message of the same trial
    await page.get_by_label("Câu hỏi gợi ý").get_by_role("button", name="Niềng răng mất bao lâu?").click()
    await expect(page.get_by_role("article")).to_have_count(2)
    await expect(page.get_by_label("Lượt 2").get_by_label("Câu trả lời của bot")).to_contain_text(
        "18 đến 24 tháng"
    )

    await page.get_by_role("button", name="Cuộc thử mới").click()
    await expect(page.get_by_role("status")).to_have_text("Đã bắt đầu cuộc thử mới.")
    await expect(page.get_by_text("Chưa có tin nhắn nào trong cuộc thử này.")).to_be_visible()


async def test_an_emergency_is_answered_with_115_first(page: Page, console: str) -> None:
    await sign_in(page, console, *CLINICIAN)
    await page.goto(f"{console}/console/try")
    await page.get_by_label("Tin nhắn").fill("Bố tôi đau ngực dữ dội, khó thở, vã mồ hôi lạnh")
    await page.get_by_role("button", name="Gửi").click()
    reply = page.get_by_label("Câu trả lời của bot")
    await expect(reply).to_contain_text("115")
    text = await reply.inner_text()
    # the emergency card is the answer, with the call to 115 before anything else it says
    assert text.startswith("🚨") and "CẤP CỨU" in text.split("\n")[0], text
    assert text.index("GỌI NGAY 115") < text.index("Trong lúc chờ"), text
    await expect(page.get_by_text("Có dấu hiệu cấp cứu")).to_be_visible()

    # a question the rules read as a stroke and the model as an ordinary question: answered, 115 only in case
    await page.get_by_label("Chuyên khoa").select_option("patient_diabetes")
    await page.get_by_label("Tin nhắn").fill("bố em đang nằm viện vì đột quỵ, giờ ăn uống thế nào cho tốt")
    await page.get_by_role("button", name="Gửi").click()
    second = page.get_by_role("article").last
    await expect(second.get_by_label("Câu trả lời của bot")).to_contain_text("⚠️ Nếu ngay lúc này")
    assert not (await second.get_by_label("Câu trả lời của bot").inner_text()).startswith("🚨")
    await expect(second.get_by_text("mô hình đánh giá là câu hỏi thông thường")).to_be_visible()


async def test_the_unanswered_page_lists_a_low_score_question_with_the_add_link(
    page: Page, console: str, db: asyncpg.Pool
) -> None:
    question = "Răng khôn mọc lệch có cần nhổ ngay không?"
    await patient_exchange(db, question, 0.18, [])
    await sign_in(page, console, *CLINICIAN)
    await page.get_by_role("link", name="Câu hỏi chưa trả lời").click()
    row = page.get_by_role("row").filter(has_text=question)
    await expect(row.get_by_role("cell").nth(1)).to_have_text("🦷 Nha khoa (bệnh nhân)")
    await expect(row.get_by_role("cell").nth(3)).to_have_text("0.18")
    link = row.get_by_role("link", name="Thêm câu trả lời")
    await expect(link).to_have_attribute(
        "href", re.compile(r"^/console/kb/new\?role=patient_dental&question=R")
    )
    await link.click()  # the new-entry form, the patient's question filled in
    await expect(page.get_by_role("heading", level=1)).to_have_text("Thêm mục mới")
    await expect(page.get_by_label("Câu hỏi", exact=True)).to_have_value(question)
