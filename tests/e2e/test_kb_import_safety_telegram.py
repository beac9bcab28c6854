"""KB import safety in the Telegram admin flow, end to end (issue 16 §3): a file that would hide most of a
role is never imported by the plain "Nhập" — the dry run offers a separate confirmation naming how many
entries it hides, and "add and update only"; /hoantac undoes a role's last import (admins only); guideline
and article uploads are capped by the limits module (guidelines 20 MB, articles 5 MB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg

from kb_import.job import ImportOptions, run_import
from testkit.bot_process import SECOND_ADMIN_ID
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import onboard
from tests.kb_files import rows, write_xlsx

THREE = (
    "code,question,answer,topic\n"
    "NK-901,Bọc răng sứ giữ được bao lâu?,Thường 10–15 năm nếu vệ sinh tốt.,Phục hình\n"
    "NK-902,Có nên dùng nước súc miệng hằng ngày?,Có thể dùng nhưng không thay cho chải răng.,Vệ sinh\n"
    "NK-903,Trẻ mấy tuổi thì bỏ bú bình?,Khoảng 12–18 tháng tuổi.,Trẻ em\n"
).encode()


async def state(db: asyncpg.Pool) -> list[tuple[Any, ...]]:
    """Every column of every KB entry (vectors as text)."""
    found = await db.fetch(
        "SELECT to_jsonb(e) - 'embedding' AS row, embedding::text AS v FROM kb_entries e ORDER BY role, code"
    )
    return [(r["row"], r["v"]) for r in found]


async def active(db: asyncpg.Pool) -> set[str]:
    return {
        r["code"]
        for r in await db.fetch("SELECT code FROM kb_entries WHERE active AND role = 'patient_dental'")
    }


async def reply_to(fake: FakeTelegram, chat: int, text: str) -> Any:
    n = len(fake.messages[chat])
    await fake.send_text(chat, text)
    return (await fake.wait_for_messages(chat, n + 1))[n]


async def dry_run_report(fake: FakeTelegram, chat: int) -> Any:
    n = len(fake.messages[chat])
    await fake.send_document(chat, THREE, "ba_muc.csv")
    report = (await fake.wait_for_messages(chat, n + 1))[n]
    await fake.wait_for(lambda: report.buttons, what="dry-run report with buttons")
    return report


async def summary(fake: FakeTelegram, chat: int, start: str) -> Any:
    return await fake.wait_for(
        lambda: next((m for m in fake.messages[chat] if m.plain.startswith(start)), None), what=start
    )


async def test_mass_hide_needs_its_own_button_and_hoantac_undoes_it(
    db: asyncpg.Pool, shared_fake: FakeTelegram, tmp_path: Path
) -> None:
    fake = shared_fake
    seeded = await run_import(db, [write_xlsx(tmp_path / "kb.xlsx", {"patient_dental": rows(43, "NK-")})],
                              ImportOptions(requested_by="test"))  # fmt: skip
    assert seeded.ok
    before = await state(db)
    chat = SECOND_ADMIN_ID  # ADMIN_ID's chat is counted from its first message by other tests
    await onboard(fake, chat)

    report = await dry_run_report(fake, chat)
    assert report.plain.startswith("Kiểm tra thử: sẽ ẩn 43/43 mục đang dùng của vai trò patient_dental"), (
        report.plain
    )
    labels = [b["text"] for b in report.buttons]
    assert labels == ["⚠️ Nhập và ẩn 43 mục", "➕ Chỉ thêm và cập nhật, không ẩn mục nào", "✖️ Huỷ"]
    assert not any(b["callback_data"].startswith("imp:ok:") for b in report.buttons)  # no plain "Nhập"
    assert await state(db) == before

    cq = await fake.tap(chat, report.message_id, report.button("imp:force:")["callback_data"])
    await fake.wait_callback_answered(cq)
    done = await summary(fake, chat, "Đã ẩn 43 mục")
    assert done.plain.startswith("Đã ẩn 43 mục của vai trò patient_dental (Bệnh nhân nha khoa)"), done.plain
    assert "/hoantac patient_dental" in done.plain
    assert await active(db) == {"NK-901", "NK-902", "NK-903"}
    forced = await state(db)

    # Not an admin: refused, nothing undone.
    stranger = 4311
    await onboard(fake, stranger)
    assert "quản trị viên" in (await reply_to(fake, stranger, "/hoantac patient_dental")).plain
    assert await state(db) == forced

    listing = await reply_to(fake, chat, "/hoantac")
    assert "/hoantac patient_dental" in listing.plain and "ba_muc.csv" in listing.plain
    undone = await reply_to(fake, chat, "/hoantac patient_dental")
    assert undone.plain.startswith("Đã hoàn tác lần nhập #"), undone.plain
    assert "43 mục trở lại đúng như trước" in undone.plain and "3 mục do lần nhập đó thêm vào" in undone.plain
    assert await state(db) == before

    # The same file, "add and update only": nothing hidden.
    report = await dry_run_report(fake, chat)
    cq = await fake.tap(chat, report.message_id, report.button("imp:keep:")["callback_data"])
    await fake.wait_callback_answered(cq)
    await summary(fake, chat, "Đã nhập: thêm 3")
    assert len(await active(db)) == 46
    assert not fake.errors, fake.errors


async def test_upload_caps_come_from_the_limits_module(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    """A guideline may be up to 20 MB (it used to be refused over 5 MB); an article up to 5 MB."""
    fake = shared_fake
    chat = SECOND_ADMIN_ID
    await reply_to(fake, chat, "/guideline")
    n = len(fake.messages[chat])
    await fake.send_document(chat, b"\0" * (6 * 2**20), "huong_dan.docx", "application/octet-stream")
    read = (await fake.wait_for_messages(chat, n + 1))[n]
    assert read.plain == (
        "❌ huong_dan.docx: không nhập được (tệp .docx bị hỏng hoặc không phải tệp Word thật — thử mở tệp rồi "
        "lưu lại)."
    )
    await reply_to(fake, chat, "/guideline")
    n = len(fake.messages[chat])
    await fake.send_document(chat, b"\0" * (20 * 2**20 + 1), "lon.pdf", "application/pdf")
    assert (await fake.wait_for_messages(chat, n + 1))[n].plain == "Tệp quá lớn (tối đa 20 MB)."

    await reply_to(fake, chat, "/verify")
    n = len(fake.messages[chat])
    await fake.send_document(chat, b"a" * (5 * 2**20 + 1), "bai.txt", "text/plain")
    assert (await fake.wait_for_messages(chat, n + 1))[n].plain == "Tệp quá lớn (tối đa 5 MB)."
    assert await db.fetchval("SELECT count(*) FROM guideline_chunks") == 0
