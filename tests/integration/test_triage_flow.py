"""Triage inside the medical flow, on the sample KB: a patient's emergency gets the card and nothing else; a
clinician asking how to manage an emergency gets the clinical protocol entry first and the card after it."""

from __future__ import annotations

from typing import Any

import pytest

from bot.wiring import engine_deps
from engine.clinic import ClinicProfile
from engine.deps import EngineDeps
from engine.flows import run_medical_flow
from engine.result import FlowResult

LAY_CARD = "Trong lúc chờ cấp cứu"
CLINICIAN_CARD = "Lưu ý cấp cứu"


@pytest.fixture
def deps(sample_runtime: Any) -> EngineDeps:
    return engine_deps(sample_runtime)


async def ask(d: EngineDeps, text: str, role: str) -> FlowResult:
    return await run_medical_flow(d, {"role": role, "input": text})


async def code_of(pool: Any, role: str, question: str) -> str:
    code = await pool.fetchval(
        "SELECT code FROM kb_entries WHERE role = $1 AND question = $2", role, question
    )
    assert code, question
    return str(code)


@pytest.mark.parametrize(
    ("role", "text", "question"),
    [
        ("doctor_dental", "xử trí ngất trên ghế nha", "Xử trí ngất và hạ đường huyết tại ghế nha?"),
        ("doctor_endocrine", "tiêu chuẩn chẩn đoán nhiễm toan ceton",
         "Tiêu chuẩn chẩn đoán nhiễm toan ceton do đái tháo đường (DKA)?"),
    ],
)  # fmt: skip
async def test_clinician_gets_the_protocol_then_the_card(deps, sample_pool, role, text, question):
    out = await ask(deps, text, role)
    code = await code_of(sample_pool, role, question)
    assert code in out.citations, (out.citations, out.text[:300])
    explain = out.text
    assert CLINICIAN_CARD in explain and LAY_CARD not in explain
    assert explain.index(code) < explain.index(CLINICIAN_CARD)  # the protocol first, the card after it


async def test_clinician_reporting_a_patient_now_still_gets_the_card(deps):
    out = await ask(deps, "bệnh nhân đang co giật trên ghế, gọi không tỉnh", "doctor_dental")
    assert out.red_flag and CLINICIAN_CARD in out.text and "115" in out.text


async def test_patient_emergency_card_names_the_clinic_phone(deps):
    deps.config.clinic = ClinicProfile(name="Nha khoa Ánh Dương", phone="028 3999 1234")
    out = await ask(deps, "răng nhổ từ chiều mà máu chảy không cầm, cắn gạc 2 tiếng vẫn ra đầy miệng",
                    "patient_dental")  # fmt: skip
    assert out.red_flag and out.input_type == "emergency" and out.citations == []
    text = out.text
    assert text.index("115") < text.index(LAY_CARD) < text.index("028 3999 1234")
    assert "báo cho Nha khoa Ánh Dương qua số 028 3999 1234" in text  # the clinic profile's name and phone


async def test_patient_general_question_about_an_emergency_is_answered_from_the_kb(deps):
    out = await ask(deps, "hạ đường huyết nhẹ xử trí tại nhà thế nào?", "patient_diabetes")
    assert not out.red_flag and out.input_type != "emergency"
    assert out.citations, out.text[:300]
