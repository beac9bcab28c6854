"""In a real Chromium: an admin corrects an answer in the console, then checks an older spreadsheet; the dry
run shows, right above the buttons, that the file would overwrite that correction (who, when), and "Chỉ nhập
các mục chưa sửa trên trang quản trị" imports the rest of the file and keeps the correction."""

from __future__ import annotations

import os
from pathlib import Path

import asyncpg
from playwright.async_api import Page, expect

from kb_import.job import ImportOptions, run_import
from tests.browser.test_console import sign_in
from tests.console_support import ADMIN
from tests.kb_files import entry, write_csv

ROLE = "patient_dental"
FIXED = "Súc miệng nước muối ấm; nếu ê buốt kéo dài quá 2 tuần, hãy đến khám."


async def test_an_older_file_warns_about_a_console_correction_and_can_keep_it(
    page: Page, console: str, db: asyncpg.Pool, tmp_path: Path
) -> None:
    old = write_csv(
        tmp_path / "nha-khoa-cu.csv",
        [entry("NK-001", "Đau răng khi uống nước lạnh?", "Dùng kem đánh răng cho răng nhạy cảm."),
         entry("NK-002", "Niềng răng mất bao lâu?", "Thường từ 18 đến 24 tháng.")],
    )  # fmt: skip
    assert (await run_import(db, [old], ImportOptions(role=ROLE, requested_by="test"))).ok
    entry_id = await db.fetchval("SELECT id FROM kb_entries WHERE code = 'NK-001'")
    await sign_in(page, console, *ADMIN)
    await page.goto(f"{console}/console/kb/{entry_id}")
    await page.get_by_role("link", name="Sửa").click()
    await page.get_by_label("Câu trả lời", exact=True).fill(FIXED)
    await page.get_by_role("button", name="Lưu thay đổi").click()
    await expect(page.get_by_text(FIXED)).to_be_visible()

    newer = write_csv(
        tmp_path / "nha-khoa-cu-2.csv",
        [entry("NK-001", "Đau răng khi uống nước lạnh?", "Dùng kem đánh răng cho răng nhạy cảm."),
         entry("NK-002", "Niềng răng mất bao lâu?", "Thường 18–24 tháng, tuỳ từng ca.")],
    )  # fmt: skip
    await page.goto(f"{console}/console/import")
    await page.get_by_label("Tệp bảng tính").set_input_files(newer)
    await page.get_by_label("Chuyên khoa").select_option(ROLE)
    await page.get_by_role("button", name="Kiểm tra tệp").click()
    warning = page.locator("#console-changes")
    await expect(warning.get_by_role("heading", level=2)).to_have_text(
        "⚠️ Tệp này sẽ làm mất 1 thay đổi đã làm trên trang quản trị"
    )
    await expect(warning.get_by_role("heading", level=3)).to_have_text("🦷 Nha khoa (bệnh nhân) (1)")
    row = warning.get_by_role("row").filter(has_text="NK-001")
    await expect(row.get_by_role("cell").nth(1)).to_have_text("Đau răng khi uống nước lạnh?")
    await expect(row.get_by_role("cell").nth(2)).to_contain_text(f"Sửa bởi {ADMIN[0]} lúc")
    await expect(row.get_by_role("cell").nth(3)).to_have_text("File này sẽ ghi đè nội dung đã sửa")
    await expect(
        page.get_by_role("button", name="Áp dụng cả tệp (bỏ 1 thay đổi trên trang quản trị)")
    ).to_be_visible()
    if shot := os.environ.get("MEDBOT_SHOT"):
        await page.screenshot(path=shot, full_page=True)
    await page.get_by_role("button", name="Chỉ nhập các mục chưa sửa trên trang quản trị").click()

    await expect(page).to_have_url(f"{console}/console/imports")
    await expect(page.get_by_role("status")).to_contain_text(
        "các mục đã sửa trên trang quản trị được giữ nguyên"
    )
    kb = dict(await db.fetch("SELECT code, answer FROM kb_entries ORDER BY code"))
    assert kb == {"NK-001": FIXED, "NK-002": "Thường 18–24 tháng, tuỳ từng ca."}
