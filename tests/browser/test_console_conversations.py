"""Conversations and the article check in a real Chromium: an admin reads a patient's conversation and, on
the next visit, finds their earlier view listed; a clinician checks a two-sentence article against a
guideline of the corpus, accepts both verdicts and gets the report and its file."""

from __future__ import annotations

import asyncpg
from playwright.async_api import Page, expect

from db.conversations import StoredTurn
from kb_import.guidelines import import_document
from tests.browser.test_console import sign_in
from tests.console_support import ADMIN, CLINICIAN, add_conversation
from tests.verify_support import DATA, embedder

QUESTION = "Răng em bị ê buốt khi uống nước lạnh thì phải làm sao?"
ANSWER = "Bạn nên dùng kem đánh răng chống ê buốt và hẹn khám để bác sĩ kiểm tra."
VALID = "Metformin là thuốc lựa chọn đầu tay cho người bệnh đái tháo đường típ 2."
FLAGGED = "Liều khởi đầu metformin là 1000 mg mỗi ngày."


async def test_an_admin_reads_a_conversation_and_sees_the_earlier_view(
    page: Page, console: str, db: asyncpg.Pool
) -> None:
    turns = [StoredTurn(QUESTION, ANSWER, "medical_question", 0.82, 0.91, ["NK-001"])]
    patient, _ = await add_conversation(db, turns, down_on=0)
    await sign_in(page, console, *ADMIN)
    await page.get_by_role("link", name="Cuộc trò chuyện").click()
    row = page.get_by_role("row").filter(has_text=f"BN-{patient:05d}")
    await expect(row).to_contain_text("Telegram")
    await expect(page.get_by_text("Nguyễn Thị Hoa")).to_have_count(0)
    await row.get_by_role("link", name="Xem").click()
    messages = page.locator("li.message")
    await expect(messages.nth(0)).to_contain_text(QUESTION)
    await expect(messages.nth(1)).to_contain_text(ANSWER)
    await expect(messages.nth(1)).to_contain_text("NK-001")
    await expect(messages.nth(1)).to_contain_text("👎")
    views = page.get_by_role("region", name="Ai đã xem cuộc trò chuyện này")
    await expect(views).to_contain_text("Bạn là người đầu tiên xem cuộc trò chuyện này.")
    await page.reload()
    await expect(views.get_by_role("listitem")).to_have_count(1)
    await expect(views.get_by_role("listitem")).to_contain_text(ADMIN[0])


async def test_a_clinician_checks_an_article_and_gets_the_report(
    page: Page, console: str, db: asyncpg.Pool
) -> None:
    await import_document(db, embedder(), (DATA / "guideline_dtd.md").read_bytes(), "guideline_dtd.md")
    await sign_in(page, console, *CLINICIAN)
    await page.get_by_role("link", name="Kiểm tra bài viết").click()
    await page.get_by_label("Nội dung bài viết").fill(f"{VALID} {FLAGGED}")
    await page.get_by_role("button", name="Bắt đầu kiểm tra").click()
    await expect(page.get_by_role("status")).to_have_text("Đã bắt đầu kiểm tra bài viết.")
    await expect(page.get_by_role("heading", level=1)).to_have_text(f"Kiểm tra “{VALID}”")
    await expect(page.get_by_text("Câu 1/2")).to_be_visible()
    await expect(page.locator("blockquote.claim")).to_have_text(VALID)
    await expect(page.locator("p.verdict")).to_contain_text("VALID — Phù hợp hướng dẫn")
    await expect(page.get_by_role("region", name="Bằng chứng từ hướng dẫn")).to_contain_text(
        "2. Điều trị bằng thuốc › Metformin"
    )
    await page.reload()  # the check survives a reload
    await expect(page.locator("blockquote.claim")).to_have_text(VALID)
    await page.get_by_role("button", name="✅ Chấp nhận, câu tiếp").click()
    await expect(page.get_by_text("Câu 2/2")).to_be_visible()
    await expect(page.locator("blockquote.claim")).to_have_text(FLAGGED)
    await expect(page.locator("p.verdict")).to_contain_text("FLAGGED — Cần xem lại")
    await page.get_by_role("button", name="✅ Chấp nhận, câu tiếp").click()
    await expect(page.get_by_role("status")).to_have_text("Đã duyệt xong mọi câu của bài viết.")
    await expect(page.locator("p.summary")).to_have_text(
        "✅ Phù hợp: 1 · ⚠️ Cần xem lại: 1 · ❔ Chưa đủ căn cứ: 0"
    )
    await expect(page.get_by_text("Đã chấp nhận 2, bỏ qua 0, chưa duyệt 0.")).to_be_visible()
    async with page.expect_download() as download_info:
        await page.get_by_role("link", name="Báo cáo chi tiết (Markdown)").click()
    download = await download_info.value
    assert download.suggested_filename.endswith(".report.md")
    assert FLAGGED in (await download.path()).read_text(encoding="utf-8")
