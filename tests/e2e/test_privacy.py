"""Patient data stays where the patient put it (issue 16 §4).

A patient writes a unique marker through every path that stores or shows their words: a question, a typed
follow-up and a tapped suggestion, an unanswered question rated 👎 that an admin answers from /unanswered, the
admins' daily digest; a clinician pastes it in an article to check (/verify is staff-only); a Zalo user writes
it too. The bot is a real subprocess on the fake Telegram and Zalo APIs, with an LLM (the fake OpenAI server)
that answers every call with invalid JSON quoting the marker, as a model echoing the patient would. (There is
no 👎 comment to write: the 👎 button is the whole feedback.)

Round 1 ends with everyone running /xoadulieu (Telegram and Zalo); round 2, with a new marker and other people,
ends with time passing and the retention job purging the old data. After each, no text, array or JSON column
of any table holds the marker; at the end no file the bot or the worker wrote does, and no INFO-or-above log
line of the run ever did (the bot's log file, and the worker's jobs run in this process). The admin's KB
entries stay (the admin wrote them) and so do the digests, which now show the quoted questions as erased
(their delivery: tests/integration/test_privacy.py).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from bot.telegram.digest import ERASED_QUOTE
from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from bot.zalo.webhook import PATH as ZALO_PATH
from bot.zalo.webhook import SIGNATURE_HEADER, sign
from db import outbox
from kb_import.guidelines import import_document
from testkit.bot_process import ADMIN_ID, CLINICIAN_ID, StartBot
from testkit.fakes.openai_server import FakeOpenAI, Reply
from testkit.fakes.telegram_server import FakeTelegram, SentMessage
from testkit.fakes.zalo_server import FakeZalo
from tests.e2e.conftest import DENTAL, add_kb, data_folder, onboard
from tests.integration.worker_helpers import make_ctx
from tests.verify_support import DATA, embedder

JOBS = {j.name: j for j in default_jobs()}
# The KB entry the admin writes from /unanswered, in their own words.
ADMIN_ENTRY = ("Hôi miệng kéo dài phải làm sao?", "Nên khám nha sĩ để tìm nguyên nhân.")
OA_SECRET = "oa-secret-privacy"
GUIDELINE = (DATA / "guideline_dtd.md").read_bytes()

# Every column that can hold text: text, varchar, char, json, jsonb, and arrays of them.
TEXT_COLUMNS = """
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = 'public'
      AND (data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')
           OR (data_type = 'ARRAY' AND udt_name IN ('_text', '_varchar', '_bpchar', '_json', '_jsonb')))
    ORDER BY table_name, column_name
"""


async def places(pool: asyncpg.Pool, marker: str) -> list[str]:
    """Every ``table.column`` of the database that holds ``marker`` (case-insensitive: folded copies too)."""
    found = []
    for col in await pool.fetch(TEXT_COLUMNS):
        table, column = col["table_name"], col["column_name"]
        n = await pool.fetchval(
            f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE $1', f"%{marker}%"
        )
        if n:
            found.append(f"{table}.{column}")
    return found


def files_with(folder: Path, marker: str) -> list[str]:
    """Files under ``folder`` (but the bot's own log, checked on its own) whose bytes contain ``marker``."""
    needle = marker.lower().encode()
    return [
        str(p) for p in folder.rglob("*")
        if p.is_file() and p.suffix != ".log" and needle in p.read_bytes().lower()
    ]  # fmt: skip


def invalid_llm_output(marker: str) -> str:
    """JSON that fails every step's schema, with the marker in the rejected values (as a model quoting the
    patient would): a wrong input_type, suggestion_questions not a list, unknown codes to keep."""
    return json.dumps(
        {
            "input_type": f"câu hỏi về {marker}",
            "confidence": 0.9,
            "reason": marker,
            "rag_questions": [f"Hỏi về {marker}"],
            "keep_codes": [marker],
            "explanation": "",
            "suggestion_questions": f"{marker}?",
            "used_codes": [marker],
        },
        ensure_ascii=False,
    )


class ZaloSender:
    """Signed Zalo events posted to the bot's webhook, as Zalo sends them."""

    def __init__(self, url: str, app_id: str) -> None:
        self.url, self.app_id = url, app_id
        self.n = 0

    async def say(self, zalo: FakeZalo, user_id: str, text: str) -> list[Any]:
        """Send ``text`` as ``user_id``; returns what the bot answered (sent before the webhook returns)."""
        before = len(zalo.to(user_id))
        self.n += 1
        timestamp = str(int(time.time() * 1000) + self.n)
        event = {
            "app_id": self.app_id, "user_id_by_app": f"app-{user_id}", "event_name": "user_send_text",
            "timestamp": timestamp, "recipient": {"id": "oa-1"}, "sender": {"id": user_id},
            "message": {"msg_id": f"privacy-{uuid.uuid4().hex}", "text": text},
        }  # fmt: skip
        body = json.dumps(event, ensure_ascii=False).encode()
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(self.app_id, body, timestamp, OA_SECRET),
        }
        async with httpx.AsyncClient(timeout=60) as http:
            response = await http.post(self.url, content=body, headers=headers)
        assert response.status_code == 200, response.text
        return (await zalo.wait_for_messages(before + 1, user_id))[before:]


async def _next(fake: FakeTelegram, chat: int, after: int, needle: str, what: str) -> SentMessage:
    return await fake.wait_for(
        lambda: next((m for m in fake.messages[chat][after:] if needle in m.plain), None), 30, what
    )


async def _ask(fake: FakeTelegram, chat: int, text: str) -> SentMessage:
    n = len(fake.messages[chat])
    await fake.send_text(chat, text)
    return (await fake.wait_for_messages(chat, n + 1, timeout=30))[n]


async def _tap(fake: FakeTelegram, chat: int, msg: SentMessage, data: str) -> dict[str, Any]:
    return await fake.wait_callback_answered(await fake.tap(chat, msg.message_id, data))


async def _erase_telegram(fake: FakeTelegram, chat: int) -> None:
    ask = await _ask(fake, chat, "/xoadulieu")
    await _tap(fake, chat, ask, ask.button("erase:1")["callback_data"])
    await fake.wait_for(lambda: "Đã xoá" in ask.plain, 30, "erasure confirmed")


async def _age_everything(pool: asyncpg.Pool, days: int) -> None:
    """Time passes: every timestamp of every table moves ``days`` days into the past."""
    columns = await pool.fetch(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = 'public' AND data_type = 'timestamp with time zone'"
    )
    for col in columns:
        table, column = col["table_name"], col["column_name"]
        await pool.execute(
            f'UPDATE "{table}" SET "{column}" = "{column}" - make_interval(days => $1)', days
        )  # fmt: skip


@pytest.fixture
async def zalo() -> Any:
    server = FakeZalo()
    await server.start()
    yield server
    await server.stop()


@dataclass(frozen=True)
class People:
    """Who writes the marker in one round: a Telegram patient, a clinician (staff), a Zalo user."""

    patient: int
    clinician: int
    zalo_user: str


ERASING = People(patient=8101, clinician=CLINICIAN_ID, zalo_user="8102345678")
AGEING = People(patient=8111, clinician=7004, zalo_user="8112345678")  # 7004: staff (CLINICIAN_IDS)


async def test_no_trace_of_the_patients_words_after_erasure_then_after_retention(
    db: asyncpg.Pool,
    fake: FakeTelegram,
    start_bot: StartBot,
    fake_openai: FakeOpenAI,
    zalo: FakeZalo,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    erased_marker, aged_marker = f"ZQX-{uuid.uuid4().hex}", f"ZQX-{uuid.uuid4().hex}"
    await add_kb(db, DENTAL)
    await import_document(db, embedder(), GUIDELINE, "guideline_dtd.md", imported_by="test")
    env = {
        "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_MODEL": "fake-model",
        "ZALO_APP_ID": zalo.app_id, "ZALO_APP_SECRET": zalo.app_secret, "ZALO_OA_SECRET": OA_SECRET,
        "ZALO_OA_ACCESS_TOKEN": zalo.access_token, "ZALO_OA_REFRESH_TOKEN": zalo.refresh_token,
        "ZALO_API_BASE": zalo.base_url, "ZALO_OAUTH_BASE": zalo.base_url,
        "MEDBOT_DATA_DIR": str(data_folder(tmp_path / "bot-data")),
    }  # fmt: skip
    bot = await start_bot(admin_ids=str(ADMIN_ID), env=env)
    zalo_sender = ZaloSender(f"http://127.0.0.1:{bot.port}{ZALO_PATH}", zalo.app_id)

    # Round 1: everyone who wrote the marker runs /xoadulieu.
    await _journey(fake, db, fake_openai, zalo, zalo_sender, tmp_path, erased_marker, ERASING)
    await _erase_telegram(fake, ERASING.patient)
    await _erase_telegram(fake, ERASING.clinician)
    confirm = await zalo_sender.say(zalo, ERASING.zalo_user, "xoá dữ liệu")
    assert any(b["payload"] == "#erase:yes" for m in confirm for b in m.buttons), [m.message for m in confirm]
    erased = await zalo_sender.say(zalo, ERASING.zalo_user, "#erase:yes")
    assert any("Đã xoá toàn bộ dữ liệu" in m.text for m in erased)
    assert await places(db, erased_marker) == []

    # Round 2: others write another marker; then time passes and the retention job purges the old data.
    # Round 1's garbage replies opened the bot's LLM circuit breaker (issue 20): round 2 runs offline, and its
    # words must not reach the model at all.
    await _journey(
        fake, db, fake_openai, zalo, zalo_sender, tmp_path, aged_marker, AGEING, llm_reachable=False
    )
    await _age_everything(db, 3)
    result = await run_job(make_ctx(db, tmp_path, retention_days=1), JOBS["retention"])
    assert result.status == "ok", result.error
    assert result.counts["messages"] > 0 and result.counts["digests_scrubbed"] >= 1, result.counts
    assert await places(db, aged_marker) == []
    assert await places(db, erased_marker) == []

    # What the clinic keeps: the admin's own KB entries, and the digests, their quotes replaced.
    kept = await db.fetch("SELECT question, answer FROM kb_entries WHERE code LIKE 'TG%'")
    assert [(r["question"], r["answer"]) for r in kept] == [ADMIN_ENTRY] * 2
    digests = [
        r["payload"]["text"] for r in await outbox.pending(db) if r["payload"].get("quotes") is not None
    ]
    assert len(digests) == 2 and all(f"“{ERASED_QUOTE}”" in text for text in digests), digests

    for marker in (erased_marker, aged_marker):
        assert files_with(tmp_path, marker) == []
        log = bot.log_path.read_text(errors="replace")
        assert marker.lower() not in log.lower()
        assert marker.lower() not in caplog.text.lower()
    assert "does not match the schema" in log  # the LLM's invalid output was logged, by field and type only


async def _journey(
    fake: FakeTelegram, db: asyncpg.Pool, fake_openai: FakeOpenAI, zalo: FakeZalo, zalo_sender: ZaloSender,
    tmp_path: Path, marker: str, people: People, llm_reachable: bool = True,
) -> None:  # fmt: skip
    """The marker through every path, the LLM quoting it in every (invalid) reply; each step checks that it
    really ran, and at the end the marker is in the messages, the digest and the article check."""
    fake_openai.default = Reply(content=invalid_llm_output(marker))
    asked = len(fake_openai.requests)
    patient = people.patient
    # A question, answered from the KB (the LLM's invalid replies fall back to the curated answer).
    await onboard(fake, patient)
    first = await _ask(
        fake, patient, f"Cho mình hỏi răng bị ê buốt khi uống nước lạnh thì làm sao? Mã {marker}"
    )
    assert "kem đánh răng dành cho răng nhạy cảm" in first.plain and first.buttons  # D001's answer
    reached = any(marker in json.dumps(r, ensure_ascii=False) for r in fake_openai.requests[asked:])
    assert reached == llm_reachable  # it reached the LLM, unless the breaker is open
    # A typed follow-up, and a tapped suggestion.
    follow = await _ask(fake, patient, f"Còn trẻ em thì mấy tuổi nên đi khám răng lần đầu? {marker}")
    assert follow.buttons
    n = len(fake.messages[patient])
    await _tap(fake, patient, follow, follow.button("sq:")["callback_data"])
    await fake.wait_for_messages(patient, n + 1, timeout=30)
    # A question the KB cannot answer, rated 👎.
    unanswered = await _ask(fake, patient, f"Bị hôi miệng kéo dài phải làm gì? {marker}")
    down = unanswered.button("fb:")["callback_data"].rsplit(":", 1)[0] + ":-1"
    await _tap(fake, patient, unanswered, down)

    # The admin answers it from /unanswered, writing the KB question in their own words.
    await onboard(fake, ADMIN_ID)
    listing = await _ask(fake, ADMIN_ID, "/unanswered")
    number = next(line.split(".")[0] for line in listing.plain.splitlines() if "hôi miệng" in line)
    button = next(b for b in listing.buttons if b["text"] == f"✍️ {number}")
    n = len(fake.messages[ADMIN_ID])
    await _tap(fake, ADMIN_ID, listing, button["callback_data"])
    prompt = await _next(fake, ADMIN_ID, n, "✍️ Trả lời câu hỏi #Q", "the answer prompt")
    assert marker in prompt.plain  # the draft: the patient's message, for the admin to copy and edit
    n = len(fake.messages[ADMIN_ID])
    await fake.send_text(ADMIN_ID, "Nên khám nha sĩ để tìm nguyên nhân.", reply_to=prompt.message_id)
    confirm = await _next(fake, ADMIN_ID, n, "nguyên văn", "the draft confirmation")
    n = len(fake.messages[ADMIN_ID])
    await _tap(fake, ADMIN_ID, confirm, confirm.button("kbd:edit:")["callback_data"])
    again = await _next(fake, ADMIN_ID, n, "✍️ Trả lời câu hỏi #Q", "the prompt again")
    n = len(fake.messages[ADMIN_ID])
    await fake.send_text(ADMIN_ID, " | ".join(ADMIN_ENTRY), reply_to=again.message_id)
    await _next(fake, ADMIN_ID, n, "Đã thêm vào KB", "KB entry added")

    # The daily digest, for today, queued for the admin.
    ctx = make_ctx(db, tmp_path, admin_ids=[ADMIN_ID], manual=True)
    ctx.extras["digest_date"] = datetime.now(ctx.worker.tz).date()
    result = await run_job(ctx, JOBS["digest"])
    assert result.status == "ok", result.error
    assert any(marker in str(r["payload"].get("text")) for r in await outbox.pending(db))

    # A clinician checks an article that contains it.
    clinician = people.clinician
    n = len(fake.messages[clinician])
    await fake.send_text(clinician, "/verify")
    await _next(fake, clinician, n, "gửi bài viết", "the request for the article")
    article = (
        f"Bệnh nhân {marker} hỏi về thuốc.\n\n"
        f"Metformin là thuốc lựa chọn đầu tay cho người bệnh đái tháo đường típ 2 ({marker}).\n\n"
        "Người bệnh nên hoạt động thể lực ít nhất 150 phút mỗi tuần."
    )
    await fake.send_text(clinician, article)
    await _next(fake, clinician, n, "Câu 1/", "the first sentence checked")

    # A Zalo user asks with it.
    await zalo_sender.say(zalo, people.zalo_user, "#role:patient_dental")
    answer = await zalo_sender.say(
        zalo, people.zalo_user, f"Niềng răng mất bao lâu thì xong vậy bác sĩ? {marker}"
    )
    assert any("18 đến 24 tháng" in m.text for m in answer), [m.message for m in answer]

    assert set(await places(db, marker)) >= {"messages.text", "outbox.payload", "verification_items.sentence"}
