"""The staff rule (``bot/access.py``) and its setting ``CLINICIAN_IDS``: Telegram ids and ``zalo:<id>`` entries,
a bad entry stopping start-up with a message naming the variable."""

from __future__ import annotations

import pytest

from bot.access import StaffRule
from db.settings import SettingsError, load_settings
from db.users import User


def user(channel: str, external_id: str, *, is_admin: bool = False) -> User:
    return User(id=1, channel=channel, external_id=external_id, role=None, language="vi", is_admin=is_admin,
                consent_at=None, active=True)  # fmt: skip


def test_clinician_ids_mix_telegram_and_zalo_entries() -> None:
    settings = load_settings(clinician_ids=" 555 ; zalo:8420133; ZALO: abc_9,007,", admin_ids="999")
    assert settings.clinician_ids == ["555", "zalo:8420133", "zalo:abc_9", "7"]
    rule = StaffRule.from_settings(settings)
    assert rule.is_staff(user("telegram", "555")) and rule.is_staff(user("telegram", "7"))
    assert rule.is_staff(user("telegram", "999"))  # ADMIN_IDS
    assert rule.is_staff(user("zalo", "8420133")) and rule.is_staff(user("zalo", "abc_9"))
    assert not rule.is_staff(user("telegram", "8420133"))  # a Zalo id is not a Telegram one …
    assert not rule.is_staff(user("zalo", "555"))  # … nor the other way round
    assert not rule.is_staff(user("zalo", "anon:8420133"))  # an anonymous Zalo chat never is
    assert rule.is_staff(user("zalo", "42", is_admin=True))  # the database admin flag, on any channel
    assert rule.is_staff(user("console", "operator"))  # the operator's own machine
    assert not rule.is_staff(user("test", "555"))


@pytest.mark.parametrize("bad", ["bs.lan", "zalo:", "zalo:a b", "-5", "telegram:5"])
def test_a_bad_clinician_id_names_the_setting(bad: str) -> None:
    with pytest.raises(SettingsError, match="CLINICIAN_IDS"):
        load_settings(clinician_ids=f"555,{bad}")


def test_admins_are_admin_ids_on_telegram_or_the_database_flag() -> None:
    rule = StaffRule.from_settings(load_settings(clinician_ids="555,zalo:77", admin_ids="999"))
    assert rule.is_admin(user("telegram", "999")) and rule.is_admin(user("zalo", "77", is_admin=True))
    assert not rule.is_admin(user("telegram", "555"))  # staff (CLINICIAN_IDS) is not an admin
    assert not rule.is_admin(user("zalo", "999"))  # ADMIN_IDS are Telegram ids
    assert not rule.is_admin(user("console", "operator"))  # staff on the console, not an admin
