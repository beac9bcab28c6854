"""The console's "Hỗ trợ trực tiếp" in a real Chromium: a clinician sees in the menu that a patient waits, opens
the handoff, reads the patient's message and answers; the patient no longer waits."""

from __future__ import annotations

import asyncpg
from playwright.async_api import Page, expect

from db import conversations, handoffs, users
from tests.browser.test_console import sign_in
from tests.console_support import CLINICIAN


async def test_a_clinician_answers_a_waiting_patient(page: Page, console: str, db: asyncpg.Pool) -> None:
    lan = await users.get_or_create(db, "zalo", "z-501")
    await users.set_role(db, lan.id, "patient_dental")
    opened = await handoffs.open_handoff(db, lan.id, "zalo", None, "human")
    assert opened is not None
    await conversations.store_relayed(db, lan.id, "in", "Răng hàm dưới của em đau nhức từ hôm qua")
    await sign_in(page, console, *CLINICIAN)
    desk = page.get_by_role("navigation").get_by_role("link", name="Hỗ trợ trực tiếp")
    await expect(desk).to_contain_text("1")  # one patient waits
    await desk.click()
    row = page.get_by_role("row").filter(has_text=f"BN-{lan.id:05d}")
    await expect(row).to_contain_text("Đang chờ trả lời")
    await row.get_by_role("link", name="Mở").click()
    await expect(page.locator("li.message.patient")).to_contain_text("đau nhức từ hôm qua")
    await page.get_by_label("Câu trả lời").fill("Bạn ghé phòng khám chiều nay nhé.")
    await page.get_by_role("button", name="Gửi cho bệnh nhân").click()
    await expect(page.get_by_role("status")).to_have_text("Đã gửi câu trả lời cho bệnh nhân.")
    staff = page.locator("li.message.staff")
    await expect(staff).to_contain_text("Bạn ghé phòng khám chiều nay nhé.")
    await expect(staff).to_contain_text(f"Nhân viên phòng khám ({CLINICIAN[0]}, trên trang quản trị)")
    await expect(desk).to_have_text("Hỗ trợ trực tiếp")  # nobody waits: no count
