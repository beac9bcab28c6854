"""Guideline verification end to end on the fake Bot API: /verify → pasted article → one message per sentence
→ ✅ accept, 🔁 search again + typed keywords, ⏭ skip, ⏹ stop → summary + .md/.csv report; resume after a bot
restart (the last message's buttons, and /verify → "Tiếp tục"); /guideline upload by an admin, refused for
non-staff. The clinicians' chats (7001, 7002, 7004) are staff through the bot's ``CLINICIAN_IDS``
(testkit/bot_process.py); tests/e2e/test_staff_access.py has the refusals. The guideline corpus is imported
with the real importer and embedder; the bot runs offline (no LLM), so the verdicts are the offline verifier's
(tests/integration/test_verify_offline.py pins them).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import asyncpg

from db import guidelines
from kb_import.guidelines import import_document
from testkit.bot_process import ADMIN_ID
from testkit.fakes.telegram_server import FakeTelegram, SentMessage
from tests.e2e.conftest import restart_shared_bot
from tests.verify_support import DATA, embedder

ARTICLE = (DATA / "article_dtd.md").read_text(encoding="utf-8")
GUIDELINE = (DATA / "guideline_dtd.md").read_bytes()
CLAIMS = [
    "Metformin là thuốc lựa chọn đầu tay cho người bệnh đái tháo đường típ 2.",
    "Liều khởi đầu metformin là 1000 mg mỗi ngày.",
    "Có thể dùng metformin khi mức lọc cầu thận dưới 30 ml/phút.",
    "Người bệnh nên hoạt động thể lực ít nhất 150 phút mỗi tuần.",
    "Uống trà xanh giúp chữa khỏi bệnh tiểu đường.",
    "Nên đi khám răng định kỳ 6 tháng một lần.",
]
ACTIONS = {"a", "r", "s", "q"}


async def _import_guideline(pool: asyncpg.Pool) -> None:
    await import_document(pool, embedder(), GUIDELINE, "guideline_dtd.md", imported_by="test")


async def _next(
    fake: FakeTelegram, chat: int, after: int, pred: Callable[[SentMessage], bool], what: str
) -> SentMessage:
    """The first message the bot sent to ``chat`` after the first ``after`` ones that satisfies ``pred``."""
    return await fake.wait_for(
        lambda: next((m for m in fake.messages[chat][after:] if pred(m)), None), 20, what
    )


async def _sentence(fake: FakeTelegram, chat: int, after: int, number: int) -> SentMessage:
    msg = await _next(
        fake, chat, after, lambda m: m.plain.startswith(f"Câu {number}/6"), f"sentence {number} message"
    )
    assert CLAIMS[number - 1] in msg.plain
    assert {b["callback_data"].split(":")[1] for b in msg.buttons} == ACTIONS, msg.buttons
    assert all(len(b["callback_data"].encode()) <= 64 for b in msg.buttons)
    return msg


async def _tap(fake: FakeTelegram, chat: int, msg: SentMessage, action: str) -> None:
    cq = await fake.tap(chat, msg.message_id, msg.button(f"vf:{action}:")["callback_data"])
    await fake.wait_callback_answered(cq)


async def _start_article(fake: FakeTelegram, chat: int) -> SentMessage:
    n = len(fake.messages[chat])
    await fake.send_text(chat, "/verify")
    ask = await _next(fake, chat, n, lambda m: "gửi bài viết" in m.plain, "the request for the article")
    await fake.send_text(chat, ARTICLE)
    started = await _next(fake, chat, n, lambda m: m.plain.startswith("Bắt đầu kiểm tra"), "start")
    assert "Sống khỏe với bệnh tiểu đường" in started.plain and "6 câu" in started.plain, started.plain
    assert ask.message_id < started.message_id
    return await _sentence(fake, chat, n, 1)


async def test_verify_accept_research_skip_stop_report(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await _import_guideline(db)
    chat = 7001
    first = await _start_article(fake, chat)
    assert "VALID" in first.plain and "Bằng chứng:" in first.plain and "Lý do:" in first.plain
    assert "Metformin" in first.plain.split("Bằng chứng:")[1]  # the guideline passage is shown

    n = len(fake.messages[chat])
    await _tap(fake, chat, first, "a")
    second = await _sentence(fake, chat, n, 2)
    await fake.wait_for(lambda: not first.buttons, what="used-up buttons removed")
    assert "FLAGGED" in second.plain and "500 mg" in second.plain

    # 🔁 search again: the same sentence is searched anew and shown again with its buttons …
    n = len(fake.messages[chat])
    await _tap(fake, chat, second, "r")
    again = await _sentence(fake, chat, n, 2)
    # … and typed keywords while the sentence is open are a new search for it.
    n = len(fake.messages[chat])
    await fake.send_text(chat, "liều khởi đầu metformin")
    searched = await _sentence(fake, chat, n, 2)
    assert "Tìm lại với: liều khởi đầu metformin" in searched.plain
    assert "Metformin" in searched.plain.split("Bằng chứng:")[1]

    n = len(fake.messages[chat])
    await _tap(fake, chat, searched, "s")
    third = await _sentence(fake, chat, n, 3)
    assert "FLAGGED" in third.plain

    n = len(fake.messages[chat])
    await _tap(fake, chat, third, "q")
    summary = await _next(fake, chat, n, lambda m: m.plain.startswith("📋"), "summary")
    assert "đã dừng" in summary.plain and "6 câu" in summary.plain
    assert "chấp nhận 1, bỏ qua 1, chưa duyệt 4" in summary.plain, summary.plain
    docs = await fake.wait_for(
        lambda: (d := [m for m in fake.messages[chat][n:] if m.kind == "document"]) and len(d) >= 2 and d,
        20,
        "two report documents",
    )
    markdown = next(d.file_bytes for d in docs if d.caption.startswith("Báo cáo")).decode()
    table = next(d.file_bytes for d in docs if d.caption.startswith("Bảng")).decode("utf-8-sig")
    assert "Trạng thái phiên: stopped" in markdown
    assert "Tìm lại với từ khóa: liều khởi đầu metformin" in markdown
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [r["sentence"] for r in rows] == CLAIMS
    assert [(r["status"], r["decision"]) for r in rows] == [
        ("VALID", "accepted"),
        ("FLAGGED", "skipped"),
        ("FLAGGED", ""),
        ("PENDING", ""),
        ("PENDING", ""),
        ("PENDING", ""),
    ]
    assert "Metformin" in rows[0]["evidence"] and "500 mg" in rows[1]["evidence"]  # the evidence shown
    assert rows[1]["reasoning"] and "1000 mg" in rows[1]["reasoning"]

    # The session is over: its old buttons change nothing and are still answered.
    n = len(fake.messages[chat])
    cq = await fake.tap(chat, again.message_id, again.button("vf:a:")["callback_data"])
    answer = await fake.wait_callback_answered(cq)
    assert "kết thúc" in answer.get("text", "")
    assert len(fake.messages[chat]) == n
    assert chat not in fake.unanswered_callbacks.values()  # every tap was answered
    assert not fake.errors, fake.errors


async def test_resume_after_restart(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await _import_guideline(db)
    chat = 7002
    first = await _start_article(fake, chat)
    n = len(fake.messages[chat])
    await _tap(fake, chat, first, "a")
    second = await _sentence(fake, chat, n, 2)

    await restart_shared_bot()
    # The last message's buttons work in the new process: ✅ moves on to sentence 3.
    n = len(fake.messages[chat])
    await _tap(fake, chat, second, "a")
    await _sentence(fake, chat, n, 3)

    # /verify offers to continue the open session; "Tiếp tục" shows the sentence the clinician stands on.
    n = len(fake.messages[chat])
    await fake.send_text(chat, "/verify")
    offer = await _next(fake, chat, n, lambda m: "Tiếp tục" in str(m.buttons), "the offer to continue")
    assert "đang dở" in offer.plain
    n = len(fake.messages[chat])
    await _tap(fake, chat, offer, "c")
    third = await _sentence(fake, chat, n, 3)
    # Typed text now is keywords for sentence 3, not a new article.
    n = len(fake.messages[chat])
    await fake.send_text(chat, "mức lọc cầu thận")
    searched = await _sentence(fake, chat, n, 3)
    assert "Tìm lại với: mức lọc cầu thận" in searched.plain
    assert third.message_id < searched.message_id
    assert chat not in fake.unanswered_callbacks.values()  # every tap was answered
    assert not fake.errors, fake.errors


async def test_guideline_upload_staff_only(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    doc = (
        "# Hướng dẫn tăng huyết áp\n\n## Mục tiêu\n\nHuyết áp mục tiêu dưới 130/80 mmHg ở đa số người bệnh.\n"
    )

    other = 7003
    await fake.send_text(other, "/guideline")
    refused = (await fake.wait_for_messages(other, 1))[0]
    assert "chỉ dành cho nhân viên y tế" in refused.plain
    await fake.send_document(other, doc.encode(), "tha.md", "text/markdown")
    await fake.wait_for_messages(other, 2)
    assert "quản trị viên" in fake.messages[other][1].plain
    assert await db.fetchval("SELECT count(*) FROM guideline_chunks") == 0

    admin = ADMIN_ID
    n = len(fake.messages[admin])
    await fake.send_text(admin, "/guideline")
    await _next(fake, admin, n, lambda m: "Gửi tệp hướng dẫn" in m.plain, "the request for the file")
    await fake.send_document(admin, doc.encode(), "tha.md", "text/markdown")
    done = await _next(fake, admin, n, lambda m: m.plain.startswith(("✅", "❌")), "import summary")
    assert "tha.md" in done.plain and "Hướng dẫn tăng huyết áp" in done.plain and done.plain.startswith("✅")
    docs = await guidelines.list_documents(db)
    assert [d["filename"] for d in docs] == ["tha.md"]
    assert await db.fetchval("SELECT count(*) FROM guideline_chunks") >= 1
    assert not fake.errors, fake.errors


async def test_article_as_file_from_a_clinician(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    """A non-admin's .md article is verified, not refused as an admin's KB upload; stop at once → reports."""
    fake = shared_fake
    await _import_guideline(db)
    chat = 7004
    await fake.send_text(chat, "/verify")
    await _next(fake, chat, 0, lambda m: "gửi bài viết" in m.plain, "the request for the article")
    await fake.send_document(chat, ARTICLE.encode(), "article_dtd.md", "text/markdown")
    started = await _next(fake, chat, 0, lambda m: m.plain.startswith("Bắt đầu kiểm tra"), "start")
    assert "Sống khỏe với bệnh tiểu đường" in started.plain
    first = await _sentence(fake, chat, 0, 1)
    n = len(fake.messages[chat])
    await _tap(fake, chat, first, "q")
    docs = await fake.wait_for(
        lambda: (d := [m for m in fake.messages[chat][n:] if m.kind == "document"]) and len(d) >= 2 and d,
        20,
        "two report documents",
    )
    assert "chưa duyệt 6" in next(m for m in fake.messages[chat][n:] if m.plain.startswith("📋")).plain
    assert docs[0].file_bytes is not None and docs[1].file_bytes is not None
    rows = list(csv.DictReader(io.StringIO(docs[1].file_bytes.decode("utf-8-sig"))))
    assert [r["status"] for r in rows] == ["VALID"] + ["PENDING"] * 5
    assert "Tệp: article_dtd.md" in docs[0].file_bytes.decode()
    assert not any("quản trị viên" in m.plain for m in fake.messages[chat])
    assert chat not in fake.unanswered_callbacks.values()
    assert not fake.errors, fake.errors
