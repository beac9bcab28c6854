"""Clinic staff only, on Zalo (signed events over HTTP into the webhook app, the real engine and database, the
fake Zalo OpenAPI): a patient's picker has the patient roles only and a typed ``#role:doctor_…`` grants
nothing; ``zalo:<id>`` in ``CLINICIAN_IDS`` or the database admin flag makes a Zalo user staff, whose doctor
answers say they are for health professionals; a patient still holding a doctor role from before is asked to
pick again. The console, the operator's own machine, keeps every role."""

from __future__ import annotations

import asyncpg

from bot.runtime import Runtime
from bot.wiring import build_service
from bot.zalo.bot import STAFF_ONLY_ROLE
from db import users
from db.settings import load_settings
from engine.types import KBEntry
from kb_import.add import add_entries
from tests.integration.zalo_support import Zalo, zalo_harness

PATIENT_ROLES = ["#role:patient_dental", "#role:patient_diabetes"]
ALL_ROLES = [*PATIENT_ROLES, "#role:doctor_dental", "#role:doctor_endocrine"]
FOR_HEALTH_PROFESSIONALS = "Thông tin chuyên môn dành cho nhân viên y tế, theo tài liệu của phòng khám:"
HBA1C_Q = "Tiêu chuẩn chẩn đoán đái tháo đường bằng HbA1c là gì?"
HBA1C_A = "Chẩn đoán đái tháo đường khi HbA1c ≥ 6,5% (xét nghiệm chuẩn hoá NGSP), nên lặp lại để khẳng định."


async def seed_endocrine(z: Zalo, pool: asyncpg.Pool) -> None:
    entry = KBEntry(
        id=0, role="doctor_endocrine", code="NT001", question=HBA1C_Q, answer=HBA1C_A, topic="Chẩn đoán"
    )
    await add_entries(pool, z.runtime.extras["embedder"], [entry])


def picker(z: Zalo, uid: str) -> list[str]:
    """The role buttons of the last message to ``uid``."""
    return [b["payload"] for b in z.fake.to(uid)[-1].buttons]


async def test_patient_sees_patient_roles_and_cannot_type_a_doctor_role(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False, clinician_ids="zalo:doc1") as z:
        await z.post(z.event("p1", name="follow"))
        assert picker(z, "p1") == PATIENT_ROLES
        await z.say("p1", "#role:doctor_endocrine")
        refused = z.fake.to("p1")[-1]
        assert refused.text == STAFF_ONLY_ROLE and "nhân viên y tế" in refused.text
        assert picker(z, "p1") == PATIENT_ROLES
        user = await users.get(db, "zalo", "p1")
        assert user is not None and user.role is None
        await z.say("p1", "chuyên khoa")
        assert picker(z, "p1") == PATIENT_ROLES


async def test_staff_get_the_doctor_roles_and_the_professional_line(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False, clinician_ids="123, zalo:doc1") as z:
        await seed_endocrine(z, db)
        await z.post(z.event("doc1", name="follow"))
        assert picker(z, "doc1") == ALL_ROLES
        await z.choose_role("doc1", "doctor_endocrine")
        assert "Bác sĩ nội tiết" in z.fake.to("doc1")[-1].text
        await z.say("doc1", HBA1C_Q)
        answer = z.fake.to("doc1")[-1].text
        assert answer.startswith(FOR_HEALTH_PROFESSIONALS), answer
        assert "HbA1c ≥ 6,5%" in answer and "NT001" in answer

        # A Telegram id in CLINICIAN_IDS is not a Zalo user; the database admin flag is staff on any channel.
        await z.say("123", "chuyên khoa")
        assert picker(z, "123") == PATIENT_ROLES
        flagged = await users.get_or_create(db, "zalo", "adm1")
        await users.set_admin(db, flagged.id, True)
        await z.say("adm1", "#role:doctor_dental")
        assert (await users.get(db, "zalo", "adm1")).role == "doctor_dental"  # type: ignore[union-attr]


async def test_patient_still_holding_a_doctor_role_is_asked_to_pick_again(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False) as z:
        await seed_endocrine(z, db)
        user = await users.get_or_create(db, "zalo", "old1")
        await users.set_role(db, user.id, "doctor_endocrine")  # picked before doctor roles were staff-only
        await z.say("old1", HBA1C_Q)
        [ask_again] = z.fake.to("old1")
        assert "Bác sĩ nội tiết" in ask_again.text and "dành riêng cho nhân viên y tế" in ask_again.text
        assert picker(z, "old1") == PATIENT_ROLES
        assert await db.fetchval("SELECT count(*) FROM messages") == 0  # not answered as a doctor
        await z.choose_role("old1", "patient_diabetes")
        assert (await users.get(db, "zalo", "old1")).role == "patient_diabetes"  # type: ignore[union-attr]


async def test_console_keeps_every_role(db: asyncpg.Pool) -> None:
    """``medbot chat --role doctor_endocrine`` on the operator's machine: no staff list needed."""
    service = await build_service(Runtime(settings=load_settings(openai_api_key=None), url="", pool=db))
    operator = await service.user("console", "operator")
    assert service.roles_for(operator) == service.roles
    assert await service.set_role(operator, "doctor_endocrine")
    assert (await users.get(db, "console", "operator")).role == "doctor_endocrine"  # type: ignore[union-attr]
