"""The console's spreadsheet import in a real Chromium: an admin uploads a workbook, reads the dry run (the
counts per KB and a faulty row with its sheet and row number), applies it and finds the new entries in the
KB; a clinician is refused the page."""

from __future__ import annotations

from pathlib import Path

import asyncpg
from playwright.async_api import Page, expect

from tests.browser.test_console import sign_in
from tests.console_support import ADMIN, CLINICIAN, add_entry
from tests.kb_files import entry, write_xlsx


async def test_an_admin_checks_a_workbook_then_applies_it_and_the_kb_shows_the_new_entries(
    page: Page, console: str, db: asyncpg.Pool, tmp_path: Path
) -> None:
    await add_entry(db, "patient_dental", "NK-001", "Đau răng khi uống nước lạnh?", "Súc miệng nước muối ấm.")
    workbook = write_xlsx(
        tmp_path / "nha-khoa.xlsx",
        {
            "patient_dental": [
                entry("NK-001", "Đau răng khi uống nước lạnh?", "Súc miệng nước muối ấm."),
                entry("NK-002", "Niềng răng mất bao lâu?", "Thường từ 18 đến 24 tháng."),
                entry("NK-003", "Sau nhổ răng khôn nên ăn gì?", "Ăn đồ mềm, nguội trong 2 ngày đầu."),
                entry("NK-004", "Tẩy trắng răng có hại không?", ""),  # no answer: the faulty row
            ]
        },
    )
    await sign_in(page, console, *ADMIN)
    await page.get_by_role("link", name="Nhập / xuất").click()
    await page.get_by_role("link", name="Nhập tệp bảng tính mới").click()
    await page.get_by_label("Tệp bảng tính").set_input_files(workbook)
    await page.get_by_label("Bỏ qua các dòng lỗi").check()
    await page.get_by_role("button", name="Kiểm tra tệp").click()

    await expect(page.get_by_role("heading", level=1)).to_have_text("Kiểm tra thử: nha-khoa.xlsx")
    await expect(page.get_by_role("status")).to_contain_text("sẽ thêm 2, cập nhật 1")
    counts = page.locator("table.counts").get_by_role("row").nth(1).get_by_role("cell")
    await expect(counts).to_have_text(["🦷 Nha khoa (bệnh nhân)", "2", "1", "0", "0", "0", "1"])
    problem = page.locator("table.problems").get_by_role("row").filter(has_text="NK-004")
    await expect(problem.get_by_role("cell")).to_have_text(
        ["nha-khoa.xlsx", "patient_dental", "5", "NK-004", "E (CÂU TRẢ LỜI)", "Thiếu câu trả lời."],
        timeout=2000,
    )
    await page.get_by_role("button", name="Áp dụng").click()

    await expect(page).to_have_url(f"{console}/console/imports")
    await expect(page.get_by_role("status")).to_have_text("Đã nhập tệp vào kho kiến thức.")
    latest = page.locator("table.history").get_by_role("row").nth(1)  # newest first
    await expect(latest).to_contain_text("nha-khoa.xlsx")
    await expect(latest).to_contain_text("ĐÃ NHẬP")
    await page.get_by_role("link", name="Kho kiến thức").click()
    await page.get_by_label("Chuyên khoa").select_option("patient_dental")
    await page.get_by_role("button", name="Tìm").click()
    await expect(page.get_by_role("link", name="Niềng răng mất bao lâu?")).to_be_visible()
    await expect(page.get_by_role("link", name="Sau nhổ răng khôn nên ăn gì?")).to_be_visible()
    await expect(page.get_by_role("link", name="Tẩy trắng răng có hại không?")).to_have_count(0)


async def test_a_clinician_gets_the_forbidden_page_on_the_import_page(page: Page, console: str) -> None:
    await sign_in(page, console, *CLINICIAN)
    await expect(page.get_by_role("link", name="Nhập / xuất")).to_have_count(0)
    await page.goto(f"{console}/console/import")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Không có quyền truy cập")
    await expect(page.get_by_label("Tệp bảng tính")).to_have_count(0)
