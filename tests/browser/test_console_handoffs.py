"""The console's "Hỗ trợ trực tiếp" in a real Chromium: a clinician sees in the menu that a patient waits, opens
the handoff, reads the patient's message and answers; the patient no longer waits. The list shows a patient handed
off while it is open without anyone reloading it, and a handoff's page shows the patient's new message, another
staff member's reply and the close while a reply is being typed, keeping it."""

from __future__ import annotations

from pathlib import Path

import asyncpg
from playwright.async_api import Page, expect

from bot.runtime import Runtime
from bot.wiring import attach_handoff
from db import conversations, handoffs, users
from tests.browser.test_console import sign_in
from tests.console_support import ADMIN, CLINICIAN, add_staff, console_server, services_for


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


async def test_the_list_shows_a_newly_handed_off_patient_by_itself(
    page: Page, db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    await add_staff(db)
    services = await services_for(db, db_url, tmp_path, console_refresh_seconds=1)
    async with console_server(db, db_url, services) as url:
        await sign_in(page, url, *CLINICIAN)
        await page.get_by_role("navigation").get_by_role("link", name="Hỗ trợ trực tiếp").click()
        await expect(page.get_by_text("Hiện không có bệnh nhân nào đang chờ nhân viên.")).to_be_visible()
        await expect(page.get_by_text("Danh sách tự cập nhật mỗi 1 giây.")).to_be_visible()
        hoa = await users.get_or_create(db, "zalo", "z-502")
        await users.set_role(db, hoa.id, "patient_diabetes")
        assert await handoffs.open_handoff(db, hoa.id, "zalo", None, "human") is not None
        # nobody touches the page: it reloads itself and the new patient's row appears
        row = page.get_by_role("row").filter(has_text=f"BN-{hoa.id:05d}")
        await expect(row).to_contain_text("Đang chờ trả lời")


async def test_the_handoff_page_shows_new_messages_and_keeps_the_reply_being_typed(
    page: Page, db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    await add_staff(db)
    services = await services_for(db, db_url, tmp_path, console_refresh_seconds=1, console_handoff=True)
    runtime = Runtime(settings=services.settings, url=db_url, pool=db)
    assert attach_handoff(
        runtime, services.chat
    )  # as the Zalo-only app does (its patients reach the console)
    mai = await services.chat.user("zalo", "z-503")
    await users.set_role(db, mai.id, "patient_dental")
    opened = await handoffs.open_handoff(db, mai.id, "zalo", None, "human")
    assert opened is not None
    await services.chat.respond(mai, "Em bị ê buốt răng khi uống nước lạnh", channel="zalo")
    async with console_server(db, db_url, services) as url:
        await sign_in(page, url, *CLINICIAN)
        await page.goto(f"{url}/console/handoffs/{opened.id}")
        patient = page.locator("li.message.patient")
        await expect(patient).to_contain_text("ê buốt răng")
        box = page.get_by_label("Câu trả lời")
        await box.fill("Bạn thử dùng kem đánh răng cho răng nhạy cảm")  # typing, not sent yet
        # the patient writes again while the reply is being typed: it shows by itself, the typed text stays
        await services.chat.respond(mai, "Em còn bị chảy máu chân răng nữa", channel="zalo")
        await expect(patient.last).to_contain_text("chảy máu chân răng", timeout=5_000)
        await expect(box).to_have_value("Bạn thử dùng kem đánh răng cho răng nhạy cảm")
        await expect(box).to_be_focused()
        # another staff member answers meanwhile: the tag stops saying the patient waits, by itself
        status = page.locator("#reply-status")
        await expect(status).to_contain_text("Đang chờ trả lời")
        assert await services.chat.console_reply(opened.id, "Bạn đặt lịch khám chiều nay nhé", email=ADMIN[0])
        await expect(status).to_have_text("Đã trả lời", timeout=5_000)
        await expect(box).to_have_value("Bạn thử dùng kem đánh răng cho răng nhạy cảm")
        # another staff member ends the handoff: the page says so and nothing can be sent any more
        assert await services.chat.console_close(opened.id, email=ADMIN[0])
        await expect(page.get_by_role("alert")).to_contain_text(
            "Yêu cầu hỗ trợ này vừa kết thúc", timeout=5_000
        )
        await expect(page.get_by_role("button", name="Gửi cho bệnh nhân")).to_be_disabled()
        await expect(box).to_have_value("Bạn thử dùng kem đánh răng cho răng nhạy cảm")
