"""Clinic staff only, on Telegram end to end: the doctor roles and /verify, /guideline belong to staff
(``CLINICIAN_IDS``, ``ADMIN_IDS`` or the database admin flag, ``bot/access.py``). A patient's picker shows the
patient roles only; a deep link or a forged callback to a doctor role grants nothing; a patient still holding
a doctor role from before is asked to pick again (and gets the patient's emergency card); staff get the
doctor roles, whose answers say they are for health professionals."""

from __future__ import annotations

from collections.abc import Callable

import asyncpg

from db import users
from testkit.bot_process import CLINICIAN_ID, SECOND_ADMIN_ID
from testkit.fakes.telegram_server import FakeTelegram, SentMessage
from tests.e2e.conftest import add_kb

PATIENT_ROLES = {"role:patient_dental", "role:patient_diabetes"}
DOCTOR_ROLES = {"role:doctor_dental", "role:doctor_endocrine"}
FOR_STAFF = "dành riêng cho nhân viên y tế của phòng khám"
STAFF_ONLY = "chỉ dành cho nhân viên y tế của phòng khám"
HEALTH_PROFESSIONALS = "Thông tin chuyên môn dành cho nhân viên y tế, theo tài liệu của phòng khám:"
ENDOCRINE = [
    ("NT001", "Tiêu chuẩn chẩn đoán đái tháo đường bằng HbA1c là gì?",
     "Chẩn đoán đái tháo đường khi HbA1c ≥ 6,5% (xét nghiệm chuẩn hoá NGSP), nên lặp lại để khẳng định.",
     "Chẩn đoán"),
    ("NT002", "Khi nào bắt đầu insulin nền cho người đái tháo đường típ 2?",
     "Cân nhắc insulin nền khi HbA1c vẫn trên mục tiêu dù đã phối hợp ba thuốc uống.", "Điều trị"),
]  # fmt: skip


async def _next(
    fake: FakeTelegram, chat: int, after: int, pred: Callable[[SentMessage], object], what: str
) -> SentMessage:
    """The first message sent to ``chat`` after its first ``after`` ones that satisfies ``pred``."""
    return await fake.wait_for(
        lambda: next((m for m in fake.messages[chat][after:] if pred(m)), None), 15, what
    )


def roles_offered(message: SentMessage) -> set[str]:
    return {b["callback_data"] for b in message.buttons if b["callback_data"].startswith("role:")}


async def _role(db: asyncpg.Pool, chat: int) -> str | None:
    user = await users.get(db, "telegram", str(chat))
    return user.role if user else None


async def test_patient_cannot_pick_deep_link_or_forge_a_doctor_role(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    fake = shared_fake
    chat = 7201
    await fake.send_text(chat, "/start")
    welcome = await _next(fake, chat, 0, lambda m: m.buttons, "the role picker")
    assert roles_offered(welcome) == PATIENT_ROLES

    # A deep link to a doctor role: a polite note, the patients' picker, no role.
    n = len(fake.messages[chat])
    await fake.send_text(chat, "/start doctor_endocrine")
    refused = await _next(fake, chat, n, lambda m: m.buttons, "the picker after the deep link")
    assert FOR_STAFF in refused.plain and "chọn một chuyên khoa dành cho bệnh nhân" in refused.plain
    assert "Đã chọn" not in refused.plain
    assert roles_offered(refused) == PATIENT_ROLES
    assert await _role(db, chat) is None

    # A forged callback carrying a doctor role: an alert, nothing changes.
    n = len(fake.messages[chat])
    cq = await fake.tap(chat, refused.message_id, "role:doctor_endocrine", forged=True)
    alert = await fake.wait_callback_answered(cq)
    assert alert.get("show_alert") in (True, "true") and FOR_STAFF in alert["text"]
    assert await _role(db, chat) is None
    assert len(fake.messages[chat]) == n and roles_offered(refused) == PATIENT_ROLES  # picker untouched

    # /chuyenkhoa offers the patient roles; picking one works as before.
    await fake.send_text(chat, "/chuyenkhoa")
    picker = await _next(fake, chat, n, lambda m: m.buttons, "/chuyenkhoa picker")
    assert roles_offered(picker) == PATIENT_ROLES
    cq = await fake.tap(chat, picker.message_id, "role:patient_diabetes")
    await fake.wait_callback_answered(cq)
    assert await _role(db, chat) == "patient_diabetes"
    assert chat not in fake.unanswered_callbacks.values() and not fake.errors


async def test_clinician_and_admins_get_the_doctor_roles(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    await add_kb(db, ENDOCRINE, role="doctor_endocrine")

    # CLINICIAN_IDS: the picker has every role; the doctor answer says it is for health professionals.
    chat = CLINICIAN_ID
    n = len(fake.messages[chat])
    await fake.send_text(chat, "/start")
    welcome = await _next(fake, chat, n, lambda m: m.buttons, "the role picker")
    assert roles_offered(welcome) == PATIENT_ROLES | DOCTOR_ROLES
    cq = await fake.tap(chat, welcome.message_id, "role:doctor_endocrine")
    await fake.wait_callback_answered(cq)
    assert await _role(db, chat) == "doctor_endocrine"
    n = len(fake.messages[chat])
    await fake.send_text(chat, ENDOCRINE[0][1])
    answer = await _next(fake, chat, n, lambda m: "NT001" in m.plain, "the doctor answer")
    assert answer.plain.startswith(HEALTH_PROFESSIONALS), answer.plain
    assert "HbA1c ≥ 6,5%" in answer.plain

    # ADMIN_IDS: the deep link grants the doctor role.
    admin = SECOND_ADMIN_ID
    n = len(fake.messages[admin])
    await fake.send_text(admin, "/start doctor_dental")
    chosen = await _next(fake, admin, n, lambda m: "Đã chọn" in m.plain, "the role confirmation")
    assert "Bác sĩ nha khoa" in chosen.plain
    assert await _role(db, admin) == "doctor_dental"

    # The database admin flag: staff too.
    flagged = 7202
    await users.set_admin(db, (await users.get_or_create(db, "telegram", str(flagged))).id, True)
    await fake.send_text(flagged, "/chuyenkhoa")
    picker = await _next(fake, flagged, 0, lambda m: m.buttons, "/chuyenkhoa picker")
    assert roles_offered(picker) == PATIENT_ROLES | DOCTOR_ROLES
    assert not fake.errors, fake.errors


async def test_patient_still_holding_a_doctor_role_is_asked_to_pick_again(
    db: asyncpg.Pool, shared_fake: FakeTelegram
) -> None:
    """A doctor role picked before the rule (or by someone no longer staff) is not answered as a doctor."""
    fake = shared_fake
    await add_kb(db, ENDOCRINE, role="doctor_endocrine")
    chat = 7203
    user = await users.get_or_create(db, "telegram", str(chat))
    await users.set_role(db, user.id, "doctor_endocrine")

    await fake.wait_delivered(await fake.send_text(chat, ENDOCRINE[0][1]))
    [ask_again] = await fake.wait_for_messages(chat, 1)
    assert "Bác sĩ nội tiết" in ask_again.plain and FOR_STAFF in ask_again.plain
    assert roles_offered(ask_again) == PATIENT_ROLES
    assert await db.fetchval("SELECT count(*) FROM messages") == 0  # not answered, nothing stored
    n = len(fake.messages[chat])

    # An emergency from them gets the patient's card (first aid first), not the clinician's short one.
    update = await fake.send_text(
        chat, "mẹ tôi bị tiểu đường, đo đường huyết 2.1, giờ lơ mơ gọi không trả lời"
    )
    card = (await fake.wait_for_messages(chat, n + 1))[n]
    await fake.wait_delivered(update)
    assert "115" in card.plain and "Trong lúc chờ cấp cứu" in card.plain, card.plain
    again = await _next(fake, chat, n + 1, lambda m: m.buttons, "the picker after the card")
    assert roles_offered(again) == PATIENT_ROLES

    # Picking a patient role gets them answered again.
    cq = await fake.tap(chat, again.message_id, "role:patient_diabetes")
    await fake.wait_callback_answered(cq)
    assert await _role(db, chat) == "patient_diabetes"
    assert not fake.errors, fake.errors


async def test_verify_and_guideline_are_for_staff(db: asyncpg.Pool, shared_fake: FakeTelegram) -> None:
    fake = shared_fake
    patient = 7204
    await fake.send_text(patient, "/verify")
    [refused] = await fake.wait_for_messages(patient, 1)
    assert STAFF_ONLY in refused.plain
    await fake.send_text(patient, "/guideline")
    refused = (await fake.wait_for_messages(patient, 2))[1]
    assert STAFF_ONLY in refused.plain
    assert await db.fetchval("SELECT count(*) FROM verification_sessions") == 0
    # waits for nothing
    assert await db.fetchval("SELECT count(*) FROM chat_states WHERE state IS NOT NULL") == 0
    # An article pasted afterwards is an ordinary message (a patient with no role: the picker).
    await fake.send_text(patient, "Metformin là thuốc lựa chọn đầu tay cho người bệnh đái tháo đường típ 2.")
    picker = (await fake.wait_for_messages(patient, 3))[2]
    assert roles_offered(picker) == PATIENT_ROLES and "Bắt đầu kiểm tra" not in picker.plain
    # A forged /verify button does nothing either.
    cq = await fake.tap(patient, picker.message_id, "vf:a:1:0", forged=True)
    alert = await fake.wait_callback_answered(cq)
    assert alert.get("show_alert") in (True, "true") and STAFF_ONLY in alert["text"]
    await fake.send_text(patient, "/help")
    help_ = (await fake.wait_for_messages(patient, 4))[3]
    assert "/verify" not in help_.plain

    chat = CLINICIAN_ID
    n = len(fake.messages[chat])
    await fake.send_text(chat, "/verify")
    await _next(fake, chat, n, lambda m: "gửi bài viết" in m.plain, "the request for the article")
    await fake.send_text(chat, "/guideline")
    await _next(fake, chat, n, lambda m: "Gửi tệp hướng dẫn" in m.plain, "the request for a guideline file")
    await fake.send_text(chat, "/help")
    await _next(fake, chat, n, lambda m: "/verify" in m.plain and "/guideline" in m.plain, "staff help")
    assert chat not in fake.unanswered_callbacks.values() and not fake.errors, fake.errors
