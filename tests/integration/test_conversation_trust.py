"""Issue 19 on the real chain (sample KB in PostgreSQL, production search and memory, offline): requests about
the clinic answered honestly from the clinic profile, the disclaimer where it matters, closing lines that fit,
sources without codes for patients, two-part questions, follow-ups decided on evidence, and the labelled
dialogue set through the ``medbot eval dialogue`` path."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bot.dialogue_eval import evaluate_dialogues, read_dialogues, run_dialogue
from bot.wiring import build_service, engine_deps
from engine.clinic import ClinicProfile
from engine.deps import EngineDeps
from engine.flows import run_medical_flow
from engine.result import FlowResult
from tests.conftest import SAMPLE_DISCLAIMER as DISCLAIMER

DIALOGUES = Path(__file__).parents[1] / "data" / "dialogues.jsonl"
CLINIC = ClinicProfile(
    name="Nha khoa Ánh Dương",
    phone="028 3999 1234",
    address="12 Lê Lợi, Quận 1, TP.HCM",
    hours="Thứ 2 – Thứ 7: 8:00–20:00",
    booking_url="https://anhduong.example/dat-lich",
    prices=(("Lấy cao răng", "200.000 – 400.000 đ"), ("Niềng răng", "từ 30 triệu đ")),
)
FALSE_CLAIMS = ("đã ghi nhận", "đã đặt", "đã chuyển", "đã gửi", "sẽ gọi lại")


@pytest.fixture
def deps(sample_runtime) -> EngineDeps:
    return engine_deps(sample_runtime)


async def ask(d: EngineDeps, text: str, role: str = "patient_dental", **shared: Any) -> FlowResult:
    return await run_medical_flow(d, {"role": role, "input": text, **shared})


async def test_requests_about_the_clinic_are_answered_from_the_profile(deps):
    deps.config.clinic = CLINIC
    booking = await ask(deps, "cho tôi đặt lịch khám sáng thứ 7 nhé")
    assert booking.input_type == "booking" and booking.citations == []
    assert "https://anhduong.example/dat-lich" in booking.text and "028 3999 1234" in booking.text
    human = await ask(deps, "tôi muốn nói chuyện với người thật, ko phải bot")
    assert human.input_type == "human" and "028 3999 1234" in human.text
    complaint = await ask(deps, "tôi chờ hai tiếng rồi mà chưa được khám")
    assert complaint.input_type == "complaint" and "xin lỗi" in complaint.text
    assert "028 3999 1234" in complaint.text and complaint.suggestions == []  # no dental topics
    hours = await ask(deps, "phong kham mo cua may gio")
    assert "Thứ 2 – Thứ 7: 8:00–20:00" in hours.text
    price = await ask(deps, "lấy cao răng hết bao nhiêu tiền")
    assert "Lấy cao răng: 200.000 – 400.000 đ" in price.text and "Niềng răng" not in price.text
    for out in (booking, human, complaint, hours, price):
        assert DISCLAIMER not in out.text and not any(c in out.text for c in FALSE_CLAIMS)


async def test_nothing_configured_says_so_instead_of_inventing(deps):
    deps.config.clinic = ClinicProfile()
    booking = await ask(deps, "dat lich kham rang khon cho minh vao chieu mai")
    assert "chưa tự đặt lịch được" in booking.text and "liên hệ trực tiếp" in booking.text
    insurance = await ask(deps, "có nhận bảo hiểm y tế không")
    assert "chưa có thông tin về bảo hiểm" in insurance.text
    english = await ask(deps, "my tooth hurts, what should I do")
    assert english.input_type == "english" and english.text.startswith("Hello!")
    assert "only answer in Vietnamese" in english.text and "contact the clinic directly" in english.text
    deps.config.clinic = CLINIC
    english = await ask(deps, "can I book an appointment for tomorrow")
    assert "please call Nha khoa Ánh Dương at 028 3999 1234" in english.text


async def test_no_match_gives_the_doctor_line_with_the_number(deps):
    deps.config.clinic = CLINIC
    out = await ask(deps, "Mổ ruột thừa nằm viện mấy ngày thì được về?")
    assert "hỏi trực tiếp bác sĩ bằng cách gọi Nha khoa Ánh Dương qua số 028 3999 1234" in out.text


async def test_disclaimer_with_the_first_answer_and_every_emergency_only(sample_runtime, new_user):
    service = await build_service(sample_runtime)
    user = await new_user(service)
    hello = await service.handle_text(user, "xin chào", channel="test")
    first = await service.handle_text(user, "Răng khôn mọc lệch có cần nhổ không?", channel="test")
    second = await service.handle_text(user, "Trám răng có đau không?", channel="test")
    thanks = await service.handle_text(user, "cảm ơn", channel="test")
    emergency = await service.handle_text(
        user, "Bố tôi đau ngực lan ra cánh tay trái, vã mồ hôi", channel="test"
    )
    assert DISCLAIMER not in hello.text and DISCLAIMER not in thanks.text
    assert first.citations == ["NK-013"] and first.text.endswith(DISCLAIMER)
    assert second.citations == ["NK-006"] and DISCLAIMER not in second.text
    assert emergency.red_flag and emergency.text.endswith(DISCLAIMER)


async def test_closing_lines_fit_the_entry_and_the_situation(deps):
    denture = await ask(deps, "Vệ sinh hàm giả tháo lắp như thế nào?")
    assert denture.citations == ["NK-039"] and "đặt lịch" not in denture.text
    sensitive = await ask(deps, "Răng bị ê buốt khi uống nước lạnh là bị gì?")
    assert "bạn nên đặt lịch để nha sĩ khám trực tiếp nhé." in sensitive.text
    exercise = await ask(deps, "Tập thể dục có làm hạ đường huyết không?", "patient_diabetes")
    assert exercise.citations == ["TD-015"] and "liều insulin" not in exercise.text
    forgot = await ask(deps, "Quên uống thuốc tiểu đường thì phải làm sao?", "patient_diabetes")
    assert "Đừng tự ý thay đổi thuốc hay liều insulin" in forgot.text
    deps.config.clinic = CLINIC
    sensitive = await ask(deps, "Răng bị ê buốt khi uống nước lạnh là bị gì?")
    assert (
        "khám trực tiếp nhé (đặt lịch tại https://anhduong.example/dat-lich hoặc gọi 028 3999 1234)."
        in sensitive.text
    )


async def test_codes_for_doctors_a_plain_source_for_patients(deps):
    patient = await ask(deps, "Răng khôn mọc lệch có cần nhổ không?")
    assert (
        "NK-013" not in patient.text and "📚 Nguồn: tài liệu mẫu của MedBot, mục “Răng khôn”." in patient.text
    )
    doctor = await ask(deps, "khi nào lấy tủy buồng", "doctor_dental")
    assert doctor.citations == ["BSNK-015"] and "📚 Mã tham khảo: BSNK-015" in doctor.text


async def test_two_part_question_gets_both_parts(deps):
    out = await ask(deps, "Răng khôn mọc lệch có cần nhổ không? Nhổ xong thì kiêng gì?")
    assert out.citations == ["NK-013", "NK-017"]
    text = out.text
    assert text.index("❓ Răng khôn mọc lệch có cần nhổ không?") < text.index(
        "❓ Sau khi nhổ răng cần kiêng gì?"
    )
    one = await ask(deps, "Tiêm insulin ở đâu và tiêm thế nào cho đúng?", "patient_diabetes")
    assert one.citations == ["TD-021"]  # one question with "và" in it stays one question


async def test_follow_ups_on_evidence_not_length(sample_runtime, new_user):
    """The trial's wrong answers: a short message that stands on its own is answered as asked; one that refers
    back gets the previous answer's context, and the previous reply's suggestions are candidates."""
    service = await build_service(sample_runtime)

    async def talk(*texts: str) -> list[list[str]]:
        user = await new_user(service)
        return [(await service.handle_text(user, t, channel="test")).citations for t in texts]

    _, toothache = await talk(
        "Trẻ bị ngã gãy hoặc rơi mất răng thì phải làm sao?", "đau răng về đêm không ngủ được"
    )
    assert toothache == ["NK-007"]
    _, ulcer = await talk("Bị hôi miệng kéo dài là do đâu?", "nhiệt miệng")
    assert ulcer == ["NK-041"]
    _, child = await talk("Răng sâu có tự lành được không?", "còn trẻ con thì sao?")
    assert child == ["NK-022"]  # "Răng sữa bị sâu có cần chữa không…", suggested under the first answer
    _, correction = await talk("Răng sâu có tự lành được không?", "không, ý tôi là răng sữa của bé bị sâu")
    assert correction == ["NK-022"]
    _, _, after_thanks = await talk("Răng khôn bị sưng đau phải làm sao?", "cảm ơn", "còn nhổ xong kiêng gì?")
    assert after_thanks == ["NK-017"]
    # "con tôi …" (my child) is not "còn …" (and …): a new question after an answer on whitening is asked on its
    # own, with or without marks; it was read with the whitening answer and answered from "Tẩy trắng răng có hại
    # không?", the suggestion sharing only the word "răng" with it.
    _, aligners = await talk("Niềng răng có đau không?", "vậy còn niềng răng trong suốt thì sao?")
    assert aligners == []  # no entry on clear aligners: not "Bao nhiêu tuổi thì niềng răng được?" for "niềng"
    for new_question in (
        "con toi 5 tuoi bi sau rang sua co can nho khong",
        "Con tôi 5 tuổi bị sâu răng sữa có cần nhổ không",
    ):
        user = await new_user(service)
        await service.handle_text(user, "Vì sao răng bị ê buốt sau khi tẩy trắng?", channel="test")
        reply = await service.handle_text(user, new_question, channel="test")
        assert "NK-035" not in reply.citations
        assert reply.suggestions[0] == "Răng sữa bị sâu có cần chữa không, dù sau này cũng thay?"


async def test_dialogue_set_no_wrong_follow_up(sample_runtime):
    """The labelled dialogue set (tests/data/dialogues.jsonl, 170 dialogues) through ``medbot eval dialogue``'s
    path: follow-ups, corrections and taps never answer from a wrong entry; overall accuracy holds."""
    dialogues = read_dialogues(DIALOGUES)
    assert len(dialogues) >= 150
    service = await build_service(sample_runtime)
    figures = (await evaluate_dialogues(service, dialogues)).as_dict()
    # the figures ``medbot eval dialogue`` prints (shown with -s)
    print({k: v for k, v in figures.items() if k != "by_kind"})
    kinds = figures["by_kind"]
    assert kinds["follow"]["wrong_answers"] == kinds["correction"]["wrong_answers"] == 0
    assert kinds["tap"]["wrong_answers"] == kinds["service"]["wrong_answers"] == 0
    assert kinds["switch"]["wrong_answers"] <= 1, figures  # "Bị gút kiêng ăn gì?" (see README)
    assert figures["accuracy"] >= 0.95, figures
    assert figures["section_offers"] == {}, figures  # in-role turns are never pointed to another section


async def test_a_suggestion_below_the_top_is_named_by_every_word(sample_runtime, new_user):
    """After the "có phải bạn muốn hỏi" list for a pregnant patient's wisdom tooth, "thế uống thuốc giảm đau gì
    được" (which painkiller can I take?) was answered "Đang uống thuốc chống đông có nhổ răng được không?": a
    suggestion of that list, far below the contextual top (p 0.02 vs 0.16), named by "uống thuốc" alone."""
    service = await build_service(sample_runtime)
    user = await new_user(service)
    await service.handle_text(
        user, "e đang có bầu 5 tháng, răng khôn sưng đau quá, nhổ đc ko ạ", channel="test"
    )
    reply = await service.handle_text(user, "thế uống thuốc giảm đau gì được", channel="test")
    assert reply.citations == [] and "❓ Đang uống thuốc chống đông" not in reply.text
    # A suggestion the message names (here the contextual top, p 0.05) is still the answer.
    user = await new_user(service)
    await service.handle_text(user, "Răng sâu có tự lành được không?", channel="test")
    child = await service.handle_text(user, "còn trẻ con thì sao?", channel="test")
    assert child.citations == ["NK-022"]


async def test_a_look_alike_of_a_farewell_does_not_end_the_chat(deps):
    """ "tầm soát ai" (whom to screen?), a doctor's follow-up, got "Tạm biệt bạn…": the statistical model's guess
    of a goodbye from letters alone ("tam" as in "tạm biệt"), which the farewell rules did not confirm."""
    for text in ("tầm soát ai", "tam soat ai", "tầm soát"):
        out = await ask(deps, text, "doctor_endocrine")
        assert out.input_type != "goodbye" and "Tạm biệt" not in out.text, text
    farewell = await ask(deps, "thôi chào nhé, cảm ơn bác sĩ", "doctor_endocrine")
    assert farewell.input_type in ("goodbye", "thanks")


async def test_the_previous_topic_does_not_answer_for_the_message(sample_runtime):
    """A dentist asked "hạ đường huyết thì sao?" after the entry on fainting and hypoglycaemia in the chair and
    got "Xử trí ban đầu rối loạn khớp thái dương hàm?": read with that entry's topic, "Khớp thái dương hàm &
    khác", the topic's words alone matched it (p 0.75), and folded, "dương" and "há" looked like "đường", "hạ"."""
    service = await build_service(sample_runtime)
    dialogue = next(d for d in read_dialogues(DIALOGUES) if d["id"] == "d177")
    first, follow = await run_dialogue(service, dialogue, "trust")
    assert first.cited == ["BSNK-039"]
    assert "BSNK-037" not in follow.cited and follow.cited in ([], ["BSNK-039"])


async def test_a_suggestion_is_named_as_spelled(sample_runtime):
    """After the list for "răng ê buốt", "nó có phải do sâu răng ko" (is it caries?) was answered "Vì sao răng bị
    ê buốt sau khi tẩy trắng?": folded, "sâu" (caries) named its "sau" (after)."""
    service = await build_service(sample_runtime)
    dialogue = next(d for d in read_dialogues(DIALOGUES) if d["id"] == "d178")
    _, caries = await run_dialogue(service, dialogue, "trust")
    assert "NK-003" not in caries.cited
    # Typed without marks, a word still names its spelled form.
    unmarked = {"id": "t", "role": "patient_dental", "turns": [{"say": "Răng sâu có tự lành được không?"}]}
    unmarked["turns"].append({"say": "con tre con thi sao"})
    assert (await run_dialogue(service, unmarked, "trust"))[1].cited == ["NK-022"]


async def test_a_clinician_is_addressed_as_one(deps):
    """A dentist's role greets "Chào bác sĩ. Tôi tra cứu…", but its "no match" told the dentist "Bạn có thể hỏi
    trực tiếp bác sĩ bằng cách gọi …" and its other replies spoke as "mình" to "bạn"."""
    deps.config.clinic = CLINIC
    patient_words = re.compile(r"\b(?:bạn|mình)\b", re.IGNORECASE)
    replies = {
        text: await ask(deps, text, "doctor_dental")
        for text in (
            "Mổ ruột thừa nằm viện mấy ngày thì được về?",  # no match
            "răng có vấn đề",  # a clarify
            "xyz qwrt",  # not understood
            "cho xem các chủ đề",
            "cảm ơn",
            "tạm biệt",
        )
    }
    for text, out in replies.items():
        assert not patient_words.search(out.text) and "bác sĩ" in out.text.lower(), (text, out.text)
    assert "028 3999 1234" not in replies["Mổ ruột thừa nằm viện mấy ngày thì được về?"].text
    patient = await ask(deps, "Mổ ruột thừa nằm viện mấy ngày thì được về?")
    assert "Bạn có thể hỏi trực tiếp bác sĩ bằng cách gọi Nha khoa Ánh Dương" in patient.text


async def test_the_frame_of_a_question_names_no_suggestion(sample_runtime):
    """ "giữ được bao lâu" (how long does a crown last?) after the crown answer was "Niềng răng có đau không, mất
    bao lâu?": the suggestion had "bao lâu", half of the message's words. "bao lâu thì lành" still names its
    entry by "lành"."""
    service = await build_service(sample_runtime)
    dialogue = next(d for d in read_dialogues(DIALOGUES) if d["id"] == "d179")
    filling, last = await run_dialogue(service, dialogue, "trust")
    assert filling.cited == ["NK-006"] and "NK-027" not in last.cited
    heal = {"id": "t", "role": "patient_dental", "turns": [{"say": "Răng khôn mọc lệch có cần nhổ không?"}]}
    heal["turns"].append({"say": "bao lâu thì lành"})
    assert (await run_dialogue(service, heal, "trust"))[1].cited == ["NK-015"]


async def test_a_medical_action_is_no_subject_of_its_own(sample_runtime):
    """ "điều trị thế nào" (how is it treated?) after the DKA criteria was read on its own, for its medical word
    "điều trị", and the endocrinologist was offered the dentists' section; "có cần đi khám ngay ko" after a
    child's loose tooth, the diabetes section. Words that name an action (khám, thuốc, kiêng, điều trị) leave a
    short message without a subject: it is read with the previous answer."""
    service = await build_service(sample_runtime)
    dialogue = next(d for d in read_dialogues(DIALOGUES) if d["id"] == "d180")
    criteria, treatment = await run_dialogue(service, dialogue, "trust")
    assert criteria.cited == ["BSNT-021"] and treatment.cited == ["BSNT-022"] and not treatment.switch_role
    tooth = {
        "id": "t",
        "role": "patient_dental",
        "turns": [{"say": "bé nhà em bị ngã va vào răng cửa, răng lung lay"}],
    }
    tooth["turns"].append({"say": "có cần đi khám ngay ko"})
    assert (await run_dialogue(service, tooth, "trust"))[1].switch_role is None
