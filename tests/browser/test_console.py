"""The clinic console in a real Chromium, as a staff member uses it: sign in, see the clinic's KBs, search
one without diacritics, read an entry, sign out."""

from __future__ import annotations

import asyncpg
from playwright.async_api import Page, expect

from tests.console_support import ADMIN, CLINIC, CLINICIAN, add_entry

ANSWER = "Bạn nên súc miệng bằng nước muối ấm và hẹn khám trong tuần này để bác sĩ kiểm tra tủy răng."


async def sign_in(page: Page, url: str, email: str, password: str) -> None:
    await page.goto(f"{url}/console/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Mật khẩu").fill(password)
    await page.get_by_role("button", name="Đăng nhập").click()


async def test_a_wrong_password_shows_the_error_and_opens_no_session(page: Page, console: str) -> None:
    await sign_in(page, console, CLINICIAN[0], "khong-dung-mat-khau")
    await expect(page.get_by_role("alert")).to_contain_text("Email hoặc mật khẩu không đúng")
    await expect(page.get_by_label("Email")).to_have_value(CLINICIAN[0])  # kept, the password is not
    await expect(page.get_by_label("Mật khẩu")).to_have_value("")
    assert not [c for c in await page.context.cookies() if c["name"] == "medbot_session"]
    await page.goto(f"{console}/console/kb")
    await expect(page).to_have_url(f"{console}/console/login")


async def test_signing_in_shows_the_clinics_kbs(page: Page, console: str, db: asyncpg.Pool) -> None:
    await add_entry(db, "patient_dental", "NK-001", "Đau răng khi uống nước lạnh?", ANSWER)
    await add_entry(db, "patient_dental", "NK-002", "Niềng răng mất bao lâu?", "Thường 18 đến 24 tháng.")
    await sign_in(page, console, *CLINICIAN)
    await expect(page).to_have_url(f"{console}/console/")
    await expect(page.get_by_role("status")).to_have_text("Đăng nhập thành công.")
    await expect(page.get_by_role("banner")).to_contain_text(CLINIC)
    await expect(page.get_by_role("banner")).to_contain_text(CLINICIAN[0])
    dental = page.get_by_role("row").filter(has=page.get_by_role("link", name="Nha khoa"))
    await expect(dental.first.get_by_role("cell").nth(1)).to_have_text("2")
    await expect(page.get_by_role("link", name="Nhật ký")).to_have_count(0)  # admin only
    await page.goto(f"{console}/console")  # without the slash too
    await expect(page.get_by_role("heading", level=1)).to_have_text("Kho kiến thức theo chuyên khoa")


async def test_a_search_without_diacritics_finds_the_entry_and_opens_its_answer(
    page: Page, console: str, db: asyncpg.Pool
) -> None:
    await add_entry(db, "patient_dental", "NK-001", "Đau răng khi uống nước lạnh?", ANSWER, topic="Đau răng")
    await add_entry(db, "patient_dental", "NK-002", "Niềng răng mất bao lâu?", "Thường 18 đến 24 tháng.")
    await sign_in(page, console, *ADMIN)
    await page.get_by_role("link", name="Kho kiến thức").click()
    await page.get_by_label("Chuyên khoa").select_option("patient_dental")
    await page.get_by_label("Tìm kiếm").fill("dau rang nuoc lanh")
    await page.get_by_role("button", name="Tìm").click()
    await expect(page.get_by_text("1 mục khớp với “dau rang nuoc lanh”")).to_be_visible()
    await expect(page.get_by_role("link", name="Niềng răng mất bao lâu?")).to_have_count(0)
    await page.get_by_role("link", name="Đau răng khi uống nước lạnh?").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Đau răng khi uống nước lạnh?")
    await expect(page.locator("dd.answer")).to_have_text(ANSWER)
    await expect(page.get_by_text("NK-001")).to_be_visible()


async def test_after_logout_the_back_button_shows_no_data(page: Page, console: str, db: asyncpg.Pool) -> None:
    entry_id = await add_entry(db, "patient_dental", "NK-001", "Đau răng khi uống nước lạnh?", ANSWER)
    await sign_in(page, console, *CLINICIAN)
    await page.goto(f"{console}/console/kb/{entry_id}")
    await expect(page.locator("dd.answer")).to_have_text(ANSWER)
    await page.get_by_role("button", name="Đăng xuất").click()
    await expect(page.get_by_role("status")).to_have_text("Bạn đã đăng xuất.")
    await page.go_back()
    await expect(page).to_have_url(f"{console}/console/login")
    await expect(page.get_by_text(ANSWER)).to_have_count(0)
    await page.goto(f"{console}/console/kb/{entry_id}")
    await expect(page).to_have_url(f"{console}/console/login")
