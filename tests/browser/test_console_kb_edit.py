"""A doctor curates the KB in a real Chromium: edits an answer (a mistake is shown next to its field, what
was typed is kept), sees the new text on the entry page and the old one in the history under their email,
and the bot itself — the ChatService the channels answer through — answers a patient with the new text at
once. Hiding an entry greys it out of the list, where the "Đã ẩn" filter still finds it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from playwright.async_api import Page, expect

from bot.web.console.services import ConsoleServices
from engine.types import KBEntry
from kb_import.add import add_entries
from tests.browser.test_console import sign_in
from tests.console_support import CLINICIAN, add_staff, console_server, services_for

ROLE = "patient_dental"
QUESTION = "Răng khôn mọc lệch có cần nhổ không?"
OLD = "Răng khôn mọc lệch thường nên nhổ sớm để tránh viêm và sâu răng bên cạnh; hãy đến khám để chụp phim."
NEW = "Không phải lúc nào cũng phải nhổ: bác sĩ sẽ chụp phim rồi quyết định; nếu sưng đau, hãy đến khám ngay."


@pytest.fixture
async def services(db: asyncpg.Pool, db_url: str, tmp_path: Path) -> ConsoleServices:
    await add_staff(db)
    return await services_for(db, db_url, tmp_path / "data")


@pytest.fixture
async def console(db: asyncpg.Pool, db_url: str, services: ConsoleServices) -> AsyncIterator[str]:
    async with console_server(db, db_url, services) as url:
        yield url


async def _entry(db: asyncpg.Pool, services: ConsoleServices) -> int:
    entry = KBEntry(id=0, role=ROLE, code="NK-013", question=QUESTION, answer=OLD, topic="Răng khôn")
    await add_entries(db, services.embedder, [entry])
    return int(await db.fetchval("SELECT id FROM kb_entries WHERE code = 'NK-013'"))


async def _bot_answer(services: ConsoleServices) -> str:
    user = await services.chat.user("test", f"p-{uuid.uuid4().hex[:10]}")
    assert await services.chat.set_role(user, ROLE)
    return (await services.chat.respond(user, QUESTION, channel="test")).text


async def test_a_clinicians_edit_is_shown_kept_in_the_history_and_answered_by_the_bot(
    page: Page, console: str, db: asyncpg.Pool, services: ConsoleServices
) -> None:
    entry_id = await _entry(db, services)
    assert OLD in await _bot_answer(services)
    await sign_in(page, console, *CLINICIAN)
    await page.goto(f"{console}/console/kb/{entry_id}")
    await page.get_by_role("link", name="Sửa").click()
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Sửa mục NK-013")

    await page.get_by_label("Câu hỏi", exact=True).fill("")
    await page.get_by_label("Câu trả lời", exact=True).fill(NEW)
    await page.get_by_role("button", name="Lưu thay đổi").click()
    await expect(page.get_by_role("alert")).to_contain_text("Chưa lưu")
    await expect(page.locator("#err-question")).to_have_text("Thiếu câu hỏi.")
    await expect(page.get_by_label("Câu trả lời", exact=True)).to_have_value(NEW)  # what was typed is kept

    await page.get_by_label("Câu hỏi", exact=True).fill(QUESTION)
    await page.get_by_role("button", name="Lưu thay đổi").click()
    await expect(page).to_have_url(f"{console}/console/kb/{entry_id}")
    await expect(page.get_by_role("status")).to_contain_text("Đã lưu thay đổi.")
    await expect(page.locator("dd.answer")).to_have_text(NEW)

    await page.get_by_role("link", name="Lịch sử thay đổi").click()
    change = page.locator("section.change").first
    await expect(change.get_by_role("heading")).to_contain_text(CLINICIAN[0])
    await expect(change.get_by_role("heading")).to_contain_text("Sửa nội dung")
    await expect(change.locator("td.old")).to_have_text(OLD)
    await expect(change.locator("td.new")).to_have_text(NEW)

    assert NEW in await _bot_answer(services)  # the KB version bump: the bot's index reloads at once


async def test_a_hidden_entry_is_greyed_out_of_the_list_and_found_with_the_filter(
    page: Page, console: str, db: asyncpg.Pool, services: ConsoleServices
) -> None:
    entry_id = await _entry(db, services)
    await sign_in(page, console, *CLINICIAN)
    await page.goto(f"{console}/console/kb/{entry_id}")
    await page.get_by_role("button", name="Ẩn mục này").click()
    await expect(page.get_by_role("status")).to_have_text("Đã ẩn mục này: bot không dùng nó để trả lời nữa.")
    await expect(page.get_by_text("Đã ẩn", exact=True)).to_be_visible()

    await page.goto(f"{console}/console/kb?role={ROLE}")
    await expect(page.get_by_role("link", name=QUESTION)).to_have_count(0)
    await page.get_by_label("Trạng thái").select_option("hidden")
    await page.get_by_role("button", name="Tìm").click()
    row = page.locator("tr.hidden-entry")
    await expect(row.get_by_role("link", name=QUESTION)).to_be_visible()
    await row.get_by_role("link", name=QUESTION).click()
    await page.get_by_role("button", name="Hiện lại mục này").click()
    await expect(page.get_by_role("status")).to_contain_text("Đã hiện lại mục này")
