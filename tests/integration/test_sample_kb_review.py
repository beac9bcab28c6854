"""The shipped sample KB after a physician's review (issue 15): each corrected entry, asked the way a
patient or a clinician would ask it, answers with the safety-critical facts and without the old, misleading
ones.

Runs the production medical flow (no LLM) on the sample KB imported by the real import job, so a test fails
if the entry's text regresses *or* if its question stops reaching it. Only the facts that decide a patient's
safety are checked, never the whole wording.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from bot.wiring import engine_deps
from engine import triage
from engine.flows import run_medical_flow
from kb_import.sample.build_sample import sample_rows


@dataclass(frozen=True)
class Reviewed:
    code: str
    role: str
    question: str
    must: tuple[str, ...]
    must_not: tuple[str, ...] = field(default=())


REVIEWED = [
    Reviewed(
        "NK-025",
        "patient_dental",
        "Con tôi bị ngã rơi mất răng cửa thì phải làm sao?",
        (
            "6 tuổi",
            "cắm lại",
            "tối đa 10 giây",
            "không chà",
            "sữa",
            "nước muối sinh lý",
            "nước bọt",
            "không để răng khô",
            "không ngâm trong nước lã",
            "ngay lập tức",
            "mảnh răng",
        ),
        ("trong vòng 1 giờ",),
    ),
    Reviewed(
        "NK-042",
        "patient_dental",
        "Khi nào đau răng cần đi cấp cứu ngay?",
        ("cấp cứu ngay", "khó thở, gọi 115", "xử trí ngay"),
        ("xử trí sớm",),
    ),
    Reviewed(
        "NK-014",
        "patient_dental",
        "rang khon bi sung dau phai lam sao",
        ("cơ sở cấp cứu ngay", "khó nuốt", "sưng lan", "khó thở, gọi 115"),
    ),
    Reviewed(
        "NK-009",
        "patient_dental",
        "Lợi bị chảy máu khi đánh răng phải làm sao?",
        ("sốt", "chấm đỏ", "bầm tím", "cơ sở y tế ngay", "sốt xuất huyết"),
    ),
    Reviewed(
        "NK-018",
        "patient_dental",
        "Nhổ răng xong bị chảy máu thì sao?",
        ("cắn chặt", "30 phút", "chóng mặt", "gọi 115", "không tự ngừng thuốc"),
    ),
    Reviewed(
        "NK-017",
        "patient_dental",
        "Sau khi nhổ răng cần kiêng gì?",
        ("không hút thuốc ít nhất 48–72 giờ", "không tự dùng aspirin"),
    ),
    Reviewed(
        "NK-021",
        "patient_dental",
        "Trẻ mấy tuổi thì bắt đầu chải răng?",
        ("hạt gạo", "hạt đậu Hà Lan", "0,25 g"),
    ),
    Reviewed(
        "NK-006",
        "patient_dental",
        "Trám răng có đau không?",
        ("lỗ sâu lớn",),
        ("lỗ sâu sâu",),
    ),
    Reviewed(
        "TD-016",
        "patient_diabetes",
        "Khi nào người tiểu đường không nên tập thể dục?",
        ("đau ngực", "gọi 115", "không tự lái xe"),
    ),
    Reviewed(
        "TD-038",
        "patient_diabetes",
        "Bị ốm, sốt, không ăn được thì dùng thuốc tiểu đường thế nào?",
        ("không tự ý bỏ insulin", "lơ mơ", "gọi 115", "không tự lái xe"),
    ),
    Reviewed(
        "TD-037",
        "patient_diabetes",
        "vet thuong o chan lau lanh thi phai lam sao",
        ("mọi vết thương", "phồng rộp", "trong vòng 1–2 ngày", "sốt"),
        ("trong vài ngày",),
    ),
    Reviewed(
        "TD-036",
        "patient_diabetes",
        "Người tiểu đường chăm sóc bàn chân thế nào?",
        ("khuỷu tay", "nhiệt kế", "không ngâm chân nước nóng", "không chườm nóng", "lửa"),
        ("thử nhiệt độ bằng tay",),
    ),
    Reviewed(
        "TD-035",
        "patient_diabetes",
        "Đường huyết rất cao, mệt lả, buồn nôn có nguy hiểm không?",
        ("SGLT2", "gần bình thường", "nhiễm toan ceton", "115", "không tự ngừng insulin"),
    ),
    Reviewed(
        "TD-025",
        "patient_diabetes",
        "Bị hạ đường huyết phải xử trí thế nào?",
        ("150 mL", "không đường", "không có máy đo", "115", "sulfonylurea", "đi khám ngay trong ngày"),
    ),
    Reviewed(
        "TD-018",
        "patient_diabetes",
        "Quên uống thuốc tiểu đường thì phải làm sao?",
        ("không uống gấp đôi", "sulfonylurea", "sắp ăn hoặc đang ăn", "bỏ qua liều đó"),
    ),
    Reviewed(
        "TD-028",
        "patient_diabetes",
        "Đường huyết sau ăn bao nhiêu là tốt?",
        ("mang thai", "dưới 5,3 mmol/L", "dưới 7,8 mmol/L", "dưới 6,7 mmol/L"),
    ),
    Reviewed(
        "TD-032",
        "patient_diabetes",
        "Người tiểu đường có cần khám mắt không?",
        ("đột ngột nhìn mờ", "chớp sáng", "cấp cứu mắt", "ngay trong ngày"),
    ),
    Reviewed(
        "TD-022",
        "patient_diabetes",
        "Bảo quản insulin như thế nào?",
        ("2–8°C", "dưới 30°C"),
        ("phòng mát",),
    ),
    Reviewed(
        "TD-024",
        "patient_diabetes",
        "Dấu hiệu hạ đường huyết là gì?",
        ("3,9 mmol/L", "nói líu lưỡi"),
        ("nói lắp",),
    ),
    Reviewed(
        "BSNK-011",
        "doctor_dental",
        "Liều tối đa thuốc tê tại chỗ cho trẻ em?",
        ("4,4 mg/kg", "300 mg", "articaine cho trẻ dưới 4 tuổi"),
    ),
    Reviewed(
        "BSNT-034",
        "doctor_endocrine",
        "Chỉ định phẫu thuật chuyển hóa ở người đái tháo đường típ 2 béo phì?",
        ("ADA 2025", "BMI ≥ 30 kg/m²", "≥ 27,5 kg/m² ở người châu Á"),
        ("32,5",),
    ),
]


@pytest.mark.parametrize("entry", REVIEWED, ids=[e.code for e in REVIEWED])
async def test_reviewed_entry_answers_with_its_safety_facts(sample_runtime, entry: Reviewed) -> None:
    out = await run_medical_flow(engine_deps(sample_runtime), {"role": entry.role, "input": entry.question})
    assert out.citations[:1] == [entry.code], (entry.question, out.citations, out.text[:300])
    answer = out.text
    missing = [fact for fact in entry.must if fact.lower() not in answer.lower()]
    assert not missing, f"{entry.code}: answer lacks {missing}"
    stale = [text for text in entry.must_not if text.lower() in answer.lower()]
    assert not stale, f"{entry.code}: answer still says {stale}"


# A sample question that describes an emergency gets the emergency card, by design; every other question of the
# sample KB must reach its answer, not a false alarm (a patient asking the KB's own question about sick days
# was sent the 115 card before the review).
EMERGENCY_QUESTIONS = {
    "NK-018": "bleeding after an extraction that does not stop: the dental bleeding card (bite on gauze 30 min)",
    "BSNT-023": "a clinician's question about HHS: clinician roles get the clinical answer first, the card after",
}


def test_sample_questions_raise_no_false_alarm() -> None:
    flagged = {
        row[2]
        for rows in sample_rows().values()
        for row in rows
        if triage.triage(row[3], model=triage.default_model()).is_emergency
    }
    assert flagged == set(EMERGENCY_QUESTIONS)
