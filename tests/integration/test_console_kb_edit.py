"""KB curation in the console over plain HTTP against the real database and the bot's own ChatService:
a refused edit (bad input, someone else's edit in between, no CSRF token) changes nothing; hiding an entry
stops the bot answering from it; reverting puts the old text back, for the bot too; a new entry is
prefilled from the query string, gets the next code, and a taken code is refused."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import pytest

from bot.web.console.services import ConsoleServices
from db import kb
from engine.types import KBEntry
from kb_import.add import add_entries
from tests.console_support import ADMIN, CLINICIAN, add_staff, console_server, services_for
from tests.integration.test_console import FORBIDDEN, csrf_of, log_in

ROLE = "patient_dental"
QUESTION = "Răng khôn mọc lệch có cần nhổ không?"
OLD = "Răng khôn mọc lệch thường nên nhổ sớm để tránh viêm và sâu răng bên cạnh; hãy đến khám để chụp phim."
NEW = "Không phải lúc nào cũng phải nhổ: bác sĩ sẽ chụp phim rồi quyết định; nếu sưng đau, hãy đến khám ngay."


@dataclass
class Console:
    http: httpx.AsyncClient
    services: ConsoleServices
    pool: asyncpg.Pool


@pytest.fixture
async def console(db: asyncpg.Pool, db_url: str, tmp_path: Path) -> AsyncIterator[Console]:
    await add_staff(db)
    services = await services_for(db, db_url, tmp_path / "data")
    async with (
        console_server(db, db_url, services) as url,
        httpx.AsyncClient(base_url=url, timeout=60, follow_redirects=False) as client,
    ):
        yield Console(client, services, db)


async def _entry(c: Console, code: str = "NK-013", question: str = QUESTION, answer: str = OLD) -> int:
    """An entry stored as the product stores one (embedded, its role's KB version bumped)."""
    entry = KBEntry(id=0, role=ROLE, code=code, question=question, answer=answer, topic="Răng khôn")
    await add_entries(c.pool, c.services.embedder, [entry])
    return int(await c.pool.fetchval("SELECT id FROM kb_entries WHERE role = $1 AND code = $2", ROLE, code))


async def _ask(c: Console, text: str = QUESTION) -> str:
    """The bot's answer to a new patient of the dental KB, through the ChatService the channels use."""
    chat = c.services.chat
    user = await chat.user("test", f"p-{uuid.uuid4().hex[:10]}")
    assert await chat.set_role(user, ROLE)
    return (await chat.respond(user, text, channel="test")).text


def _form(page: str, **changes: str) -> dict[str, str]:
    """The edit form's fields as the page holds them, with ``changes``."""
    values = {
        "csrf_token": csrf_of(page),
        "seen": _hidden(page, "seen"),
        "topic": "Răng khôn",
        "subtopic": "",
        "question": QUESTION,
        "answer": OLD,
        "keywords": "",
        "explanation": "",
    }
    return {**values, **changes}


def _hidden(page: str, name: str) -> str:
    marker = f'name="{name}" value="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


async def _answer(c: Console, entry_id: int) -> str:
    return str(await c.pool.fetchval("SELECT answer FROM kb_entries WHERE id = $1", entry_id))


async def test_bad_input_is_refused_next_to_the_field_and_changes_nothing(console: Console) -> None:
    c = console
    entry_id = await _entry(c)
    version = await kb.version(c.pool, ROLE)
    for path in (f"/console/kb/{entry_id}/edit", "/console/kb/new", f"/console/kb/{entry_id}/history"):
        signed_out = await c.http.get(path)
        assert (signed_out.status_code, signed_out.headers["location"]) == (303, "/console/login")
    await log_in(c.http, *CLINICIAN)
    page = (await c.http.get(f"/console/kb/{entry_id}/edit")).text
    typed = "Câu hỏi mới mà bác sĩ vừa gõ"
    refused = await c.http.post(
        f"/console/kb/{entry_id}/edit", data=_form(page, question=typed, answer="  ", explanation="x" * 16001)
    )
    assert refused.status_code == 400
    assert "Thiếu câu trả lời." in refused.text
    assert (
        "Ô giải thích dài 16001 ký tự, vượt giới hạn 16000 ký tự." in refused.text
    )  # the import's own limit
    assert typed in refused.text  # what was typed is kept
    assert await _answer(c, entry_id) == OLD
    assert await kb.version(c.pool, ROLE) == version
    assert await c.pool.fetchval("SELECT count(*) FROM kb_entry_history") == 0

    # without the CSRF token: the 403 page, nothing written
    data = _form(page, answer=NEW)
    del data["csrf_token"]
    out = await c.http.post(f"/console/kb/{entry_id}/edit", data=data)
    assert out.status_code == 403 and FORBIDDEN in out.text
    assert await _answer(c, entry_id) == OLD


async def test_an_edit_made_meanwhile_by_someone_else_is_not_overwritten(console: Console) -> None:
    c = console
    entry_id = await _entry(c)
    await log_in(c.http, *CLINICIAN)
    mine = (await c.http.get(f"/console/kb/{entry_id}/edit")).text
    theirs = (await c.http.get(f"/console/kb/{entry_id}/edit")).text  # a second tab, or a colleague
    saved = await c.http.post(f"/console/kb/{entry_id}/edit", data=_form(theirs, answer=NEW))
    assert (saved.status_code, saved.headers["location"]) == (303, f"/console/kb/{entry_id}")

    late = await c.http.post(f"/console/kb/{entry_id}/edit", data=_form(mine, answer="Bản sửa đến muộn."))
    assert late.status_code == 409
    assert "vừa được người khác thay đổi" in late.text and "Bản sửa đến muộn." in late.text
    assert await _answer(c, entry_id) == NEW
    assert await c.pool.fetchval("SELECT count(*) FROM kb_entry_history") == 1

    # a later change outside the console (a spreadsheet import's write) is shown as such, not as the doctor's
    imported = "Bản từ bảng tính của phòng khám."
    await _entry(c, answer=imported)
    history = (await c.http.get(f"/console/kb/{entry_id}/history")).text
    outside, edit = history.split('<section class="change card')[1:]
    assert "Thay đổi ngoài trang quản lý" in outside and NEW in outside and imported in outside
    assert CLINICIAN[0] in edit and OLD in edit and NEW in edit and imported not in edit


async def test_hiding_stops_the_bot_using_the_entry_and_a_revert_brings_the_old_text_back(
    console: Console,
) -> None:
    c = console
    entry_id = await _entry(c)
    assert OLD in await _ask(c)
    await log_in(c.http, *ADMIN)
    page = (await c.http.get(f"/console/kb/{entry_id}/edit")).text
    await c.http.post(f"/console/kb/{entry_id}/edit", data=_form(page, answer=NEW))
    assert NEW in await _ask(c)

    entry_page = (await c.http.get(f"/console/kb/{entry_id}")).text
    hidden = await c.http.post(f"/console/kb/{entry_id}/hide", data={"csrf_token": csrf_of(entry_page)})
    assert hidden.status_code == 303
    reply = await _ask(c)
    assert NEW not in reply and OLD not in reply
    listed = (await c.http.get("/console/kb", params={"role": ROLE, "status": "hidden"})).text
    assert "hidden-entry" in listed and QUESTION in listed
    assert QUESTION not in (await c.http.get("/console/kb", params={"role": ROLE})).text
    await c.http.post(f"/console/kb/{entry_id}/restore", data={"csrf_token": csrf_of(entry_page)})
    assert NEW in await _ask(c)

    history = (await c.http.get(f"/console/kb/{entry_id}/history")).text
    assert OLD in history and ADMIN[0] in history
    first_edit = await c.pool.fetchval(
        "SELECT id FROM kb_entry_history WHERE entry_id = $1 AND kind = 'edit'", entry_id
    )
    reverted = await c.http.post(
        f"/console/kb/{entry_id}/history/{first_edit}/revert", data={"csrf_token": csrf_of(history)}
    )
    assert reverted.status_code == 303
    assert await _answer(c, entry_id) == OLD
    assert OLD in await _ask(c)
    assert (
        await c.http.post("/console/kb/999999/hide", data={"csrf_token": csrf_of(history)})
    ).status_code == 404
    wrong = await c.http.post(
        f"/console/kb/{entry_id}/history/999999/revert", data={"csrf_token": csrf_of(history)}
    )
    assert wrong.status_code == 404
    kinds = [r["kind"] for r in await c.pool.fetch("SELECT kind FROM kb_entry_history ORDER BY id")]
    assert kinds == ["edit", "hide", "restore", "revert"]
    audited = [r["action"] for r in await c.pool.fetch("SELECT action FROM console_audit ORDER BY id")]
    assert audited[-4:] == ["kb_edit", "kb_hide", "kb_restore", "kb_revert"]
    edit = await c.pool.fetchval("SELECT detail FROM console_audit WHERE action = 'kb_edit'")
    assert edit == {"role": ROLE, "code": "NK-013", "fields": ["answer"]}


async def test_a_new_entry_is_prefilled_gets_the_next_code_and_a_taken_code_is_refused(
    console: Console,
) -> None:
    c = console
    await _entry(c, code="NK-013")
    await log_in(c.http, *CLINICIAN)
    asked = "Trám răng xong bao lâu thì ăn được?"
    page = await c.http.get("/console/kb/new", params={"role": ROLE, "question": asked})
    assert asked in page.text and _hidden(page.text, "code") == "NK-014"
    data = {
        "csrf_token": csrf_of(page.text),
        "role": ROLE,
        "code": "NK-013",
        "question": asked,
        "answer": "Sau khoảng 2 giờ với chất trám thông thường.",
        "keywords": "trám răng; tram rang; ăn uống",
    }
    taken = await c.http.post("/console/kb/new", data=data)
    assert taken.status_code == 400 and "Mã số “NK-013” đã có trong kho kiến thức này" in taken.text
    created = await c.http.post("/console/kb/new", data={**data, "code": "NK-014"})
    assert created.status_code == 303
    row = await c.pool.fetchrow("SELECT * FROM kb_entries WHERE code = 'NK-014'")
    assert row["question"] == asked and list(row["keywords"]) == ["trám răng", "tram rang", "ăn uống"]
    assert row["embedding"] is not None and row["active"]
    assert "Sau khoảng 2 giờ" in await _ask(c, asked)
