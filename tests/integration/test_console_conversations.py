"""The console's conversations and article check over HTTP against the real database: every view of a
conversation is audited and listed, the list names no patient, an erased patient's conversation is gone,
filters; the article check is per staff member, CSRF-checked, and refuses bad input in Vietnamese."""

from __future__ import annotations

import asyncpg
import httpx

from db import users
from db.conversations import StoredTurn
from db.retention import ERASE_REASON
from tests.console_support import ADMIN, CLINICIAN, add_conversation
from tests.integration.test_console import FORBIDDEN, csrf_of, log_in

QUESTION = "Răng em bị ê buốt khi uống nước lạnh thì phải làm sao?"
ANSWER = "Bạn nên dùng kem đánh răng chống ê buốt và hẹn khám để bác sĩ kiểm tra."
TURNS = [
    StoredTurn(QUESTION, ANSWER, "medical_question", 0.82, 0.91, ["NK-001"]),
    StoredTurn("Cho em gặp nhân viên với", "Phòng khám sẽ liên hệ lại với bạn.", "human"),
]
ARTICLE = "Metformin là thuốc lựa chọn đầu tay. Nên đi khám răng định kỳ 6 tháng một lần."


async def test_every_view_is_audited_and_shown_to_the_next_reader(
    http: httpx.AsyncClient, db: asyncpg.Pool, db_url: str
) -> None:
    patient, conv = await add_conversation(db, TURNS, down_on=0)
    await log_in(http, *CLINICIAN)
    listing = await http.get("/console/conversations")
    assert listing.status_code == 200
    assert f"BN-{patient:05d}" in listing.text and f"/console/conversations/{conv}" in listing.text
    assert "5550001" not in listing.text and "Nguyễn Thị Hoa" not in listing.text  # pseudonymous
    assert QUESTION not in listing.text and ANSWER not in listing.text  # no text before an audited view
    first = await http.get(f"/console/conversations/{conv}")
    assert first.status_code == 200
    assert QUESTION in first.text and ANSWER in first.text and "NK-001" in first.text
    assert "Bạn là người đầu tiên xem cuộc trò chuyện này." in first.text
    assert "5550001" not in first.text and "Nguyễn Thị Hoa" not in first.text
    rows = await db.fetch(
        "SELECT staff_id, action, subject FROM console_audit WHERE action = 'view_conversation'"
    )
    assert [(r["action"], r["subject"]) for r in rows] == [("view_conversation", str(conv))]

    async with httpx.AsyncClient(base_url=str(http.base_url), timeout=30) as admin:
        await log_in(admin, *ADMIN)
        second = await admin.get(f"/console/conversations/{conv}")
        assert CLINICIAN[0] in second.text.split("Ai đã xem cuộc trò chuyện này")[1]
        audit = await admin.get("/console/audit")
        assert audit.text.count("Xem cuộc trò chuyện") == 2
    assert await db.fetchval("SELECT count(*) FROM console_audit WHERE action = 'view_conversation'") == 2
    # the list itself is no view; an unknown conversation is the 404 page and is not audited
    assert (await http.get("/console/conversations/999999")).status_code == 404
    assert await db.fetchval("SELECT count(*) FROM console_audit WHERE action = 'view_conversation'") == 2


async def test_an_erased_patients_conversation_is_gone_from_the_console(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    erased, gone = await add_conversation(db, TURNS)
    _, hidden = await add_conversation(db, TURNS, external_id="5550002", name="Trần Văn Nam")
    _, kept = await add_conversation(db, TURNS[:1], external_id="5550003", name=None)
    await users.erase(db, erased)  # /xoadulieu
    await users.set_active(db, "telegram", "5550002", False, ERASE_REASON)  # erasure awaiting housekeeping
    await log_in(http, *ADMIN)
    listing = await http.get("/console/conversations")
    assert f"/console/conversations/{kept}" in listing.text
    assert f"/console/conversations/{gone}" not in listing.text
    assert f"/console/conversations/{hidden}" not in listing.text
    for conv in (gone, hidden):
        page = await http.get(f"/console/conversations/{conv}")
        assert page.status_code == 404 and QUESTION not in page.text


async def test_filters_by_role_request_for_a_person_and_thumbs_down(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    _, staff_conv = await add_conversation(db, TURNS)
    _, down_conv = await add_conversation(db, TURNS[:1], external_id="2", role="patient_diabetes", down_on=0)
    await log_in(http, *CLINICIAN)

    async def shown(query: str) -> set[int]:
        text = (await http.get(f"/console/conversations?{query}")).text
        return {c for c in (staff_conv, down_conv) if f'/console/conversations/{c}"' in text}

    assert await shown("") == {staff_conv, down_conv}
    assert await shown("staff=1") == {staff_conv}
    assert await shown("down=1") == {down_conv}
    assert await shown("role=patient_diabetes") == {down_conv}
    assert await shown("role=patient_diabetes&staff=1") == set()
    assert await shown("handoff=1") == set()  # asked for a person, but no handoff happened
    assert (
        "Không có cuộc trò chuyện nào khớp với bộ lọc."
        in (await http.get("/console/conversations?down=1&staff=1")).text
    )


async def test_the_article_check_refuses_bad_input_in_vietnamese_and_posts_need_the_token(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await log_in(http, *CLINICIAN)
    page = await http.get("/console/verify")
    token = csrf_of(page.text)
    refused = await http.post("/console/verify", data={"text": ARTICLE})
    assert refused.status_code == 403 and FORBIDDEN in refused.text
    empty = await http.post("/console/verify", data={"csrf_token": token, "text": "  "})
    assert empty.status_code == 400 and "Hãy dán nội dung bài viết hoặc chọn một tệp." in empty.text
    wrong = await http.post(
        "/console/verify",
        data={"csrf_token": token},
        files={"file": ("bai.pdf", b"%PDF-1.4", "application/pdf")},
    )
    assert wrong.status_code == 400 and "Định dạng chưa hỗ trợ" in wrong.text
    broken = await http.post(
        "/console/verify",
        data={"csrf_token": token},
        files={"file": ("bai.docx", b"not a zip", "application/octet-stream")},
    )
    assert broken.status_code == 400 and "Không đọc được bài viết" in broken.text
    huge = await http.post(
        "/console/verify",
        data={"csrf_token": token},
        files={"file": ("bai.txt", b"a" * (2 * 1024 * 1024), "text/plain")},
    )
    assert huge.status_code == 413 and "vượt quá giới hạn 1 MB" in huge.text
    assert await db.fetchval("SELECT count(*) FROM verification_sessions") == 0


async def test_a_check_is_its_owners_alone_and_a_stale_button_changes_nothing(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await log_in(http, *CLINICIAN)
    token = csrf_of((await http.get("/console/verify")).text)
    started = await http.post("/console/verify", data={"csrf_token": token, "text": ARTICLE})
    assert (started.status_code, started.headers["location"]) == (303, "/console/verify")
    sid = await db.fetchval("SELECT id FROM verification_sessions")
    first = await http.get("/console/verify")
    assert "Câu 1/2" in first.text and "Metformin là thuốc lựa chọn đầu tay." in first.text
    assert (await http.get("/console/verify")).text.count("Câu 1/2") == 1  # a reload stays on the sentence
    await http.post(
        f"/console/verify/{sid}/research", data={"csrf_token": token, "idx": "0", "keywords": "thuốc đầu tay"}
    )
    searched = (await http.get("/console/verify")).text
    assert "Câu 1/2" in searched and "Đã tìm lại với: thuốc đầu tay" in searched
    idx = await db.fetchval("SELECT current_index FROM verification_sessions WHERE id = $1", sid)
    await http.post(f"/console/verify/{sid}/accept", data={"csrf_token": token, "idx": str(idx)})
    again = await http.post(f"/console/verify/{sid}/accept", data={"csrf_token": token, "idx": str(idx)})
    assert again.status_code == 303  # the doubled press: still on sentence 2
    assert "Câu 2/2" in (await http.get("/console/verify")).text

    async with httpx.AsyncClient(base_url=str(http.base_url), timeout=30) as other:
        await log_in(other, *ADMIN)
        other_token = csrf_of((await other.get("/console/verify")).text)
        assert "Câu 2/2" not in (await other.get("/console/verify")).text
        for path in (f"/console/verify/{sid}/report", f"/console/verify/{sid}/report.md"):
            assert (await other.get(path)).status_code == 404
        moved = await other.post(f"/console/verify/{sid}/stop", data={"csrf_token": other_token})
        assert moved.status_code == 404
    assert await db.fetchval("SELECT status FROM verification_sessions WHERE id = $1", sid) == "open"

    stopped = await http.post(f"/console/verify/{sid}/stop", data={"csrf_token": token})
    assert stopped.headers["location"] == f"/console/verify/{sid}/report"
    report = await http.get(f"/console/verify/{sid}/report")
    assert "Đã dừng" in report.text and "Chưa duyệt" in report.text
    csv = await http.get(f"/console/verify/{sid}/report.csv")
    assert "attachment" in csv.headers["content-disposition"] and "Metformin" in csv.content.decode(
        "utf-8-sig"
    )
    late = await http.post(f"/console/verify/{sid}/accept", data={"csrf_token": token, "idx": "0"})
    assert late.headers["location"] == f"/console/verify/{sid}/report"
