"""Patients' questions the sample KB answers, which the bot used to clarify or decline or answer from the
wrong entry (seventh retrieval round, ``bench/retrieval_shapes_results.md``): the reply must cite the entry.
The production flow offline on the sample KB in PostgreSQL (``bot.wiring.engine_deps``), as ``medbot ask``."""

from __future__ import annotations

import pytest

from bot.wiring import engine_deps
from engine.deps import EngineDeps
from engine.flows import run_medical_flow


@pytest.fixture
def deps(sample_runtime) -> EngineDeps:
    return engine_deps(sample_runtime)


async def answer(deps: EngineDeps, role: str, text: str) -> list[str]:
    out = await run_medical_flow(deps, {"role": role, "input": text})
    assert out.input_type == "medical_question", (text, out.input_type)
    return out.citations


# The message names the entry's subject by one of its keywords, in words its question does not use.
@pytest.mark.parametrize(
    ("role", "text", "code"),
    [
        ("patient_diabetes", "nhiễm toan ceton là gì", "TD-035"),  # keyword "nhiễm toan ceton"
        ("patient_dental", "Bé nhà em 2 tuổi chưa chịu đánh răng", "NK-021"),  # "em bé đánh răng"
        ("patient_dental", "sao miệng em lúc nào cũng có mùi hôi", "NK-033"),  # "miệng có mùi"
        ("patient_diabetes", "dạo này em khát nước với đi tiểu nhiều, có phải bị tiểu đường không", "TD-004"),
        ("patient_diabetes", "một ngày nên thử đường máu mấy lần", "TD-027"),  # "đo mấy lần"
    ],
)
async def test_a_subject_named_by_a_keyword_is_answered(deps, role, text, code):
    assert await answer(deps, role, text) == [code]


async def test_everyday_words_a_small_kb_lacks_do_not_hide_a_keyword_named_in_full(deps):
    """ "em" and "trăm" are in no entry of the diabetes KB: the off-topic cap held the HbA1c entry at 0.3
    although the message names it by its keyword "chỉ số A1c"."""
    assert await answer(deps, "patient_diabetes", "chỉ số A1c của em 7 phần trăm có sao không") == ["TD-002"]


@pytest.mark.parametrize(
    ("role", "text", "other"),
    [
        # NK-029 / NK-040 are about it; the diabetes KB's foot care shares only "chăm sóc … thế nào"
        ("patient_dental", "chăm sóc răng thế nào", "TD-036"),
        # TD-027 is about it; the dental KB's check-ups share only "bao lâu … một lần"
        ("patient_diabetes", "bao lâu đo đường huyết một lần", "NK-032"),
    ],
)
async def test_another_section_is_not_offered_for_a_frame_it_shares(deps, role, text, other):
    """The other KB's entry looks sure on a shared question frame, but the message is closer in meaning to
    this KB's entries: no section is offered (the check is still traced)."""
    out = await run_medical_flow(deps, {"role": role, "input": text})
    assert not out.switch_role and "có vẻ thuộc mục" not in out.text
    check = next(r["cross_role"] for r in out.trace if "cross_role" in r)
    assert [c["code"] for c in check["checked"]] == [other] and check["offer"] is None


async def test_a_word_the_kb_spells_otherwise_is_not_answered_from_its_namesake(deps):
    """ "trĩ" (haemorrhoids) folds to "trị" (treatment), which the dental KB uses: the message looked fully
    known and got the periodontitis entry ("… có nguy hiểm không?") at p 0.82."""
    out = await run_medical_flow(deps, {"role": "patient_dental", "input": "bị trĩ có nguy hiểm không"})
    assert out.citations == [] and out.retrieval_score < 0.5


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("đang niềng răng thì đánh răng sao", "Đang niềng răng vệ sinh thế nào cho đúng?"),  # NK-028
        ("chăm sóc răng thế nào", "Chải răng thế nào cho đúng?"),  # NK-029, NK-040 a close second
    ],
)
async def test_an_entry_both_searches_single_out_is_offered_not_declined(deps, text, first):
    """Both legs rank the entry first, its words above the KB's near-miss level, but a close second keeps the
    probability low: the reply asks which one ("có phải bạn muốn hỏi"), it does not say the KB has nothing."""
    out = await run_medical_flow(deps, {"role": "patient_dental", "input": text})
    assert next(r for r in out.trace if r["node"] == "score")["action"] == "clarify"
    assert "chưa có nội dung phù hợp" not in out.text and out.citations == []
    assert out.suggestions[0] == first


async def test_chat_words_the_kb_lacks_do_not_push_the_entry_out(deps):
    """ "mẹ", "em", "mãi" are in no entry of the diabetes KB: counted as unknown words they made the foot-ulcer
    entry look off-topic (p 0.07, "no match"); it is now offered first."""
    text = "mẹ em bị tiểu đường chân bị loét mãi không lành"
    out = await run_medical_flow(deps, {"role": "patient_diabetes", "input": text})
    assert "chưa có nội dung phù hợp" not in out.text
    assert out.citations == ["TD-037"] or out.suggestions[0] == "Vết thương ở chân lâu lành thì phải làm sao?"
