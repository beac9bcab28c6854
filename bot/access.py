"""Who counts as clinic staff: the one rule behind doctor roles, ``/verify`` and ``/guideline``; and who is
an administrator (``is_admin``: the admin commands of Telegram).

A sender is staff when

* on Telegram: their user id is in ``ADMIN_IDS`` or ``CLINICIAN_IDS``, or their user row has the admin flag;
* on Zalo: ``zalo:<their Zalo user id>`` is in ``CLINICIAN_IDS``, or their user row has the admin flag
  (an anonymous Zalo chat, ``anon:<id>``, never is: it cannot be told apart from any other visitor);
* on the console (``medbot chat`` / ``ask``): always — it runs on the operator's own machine;
* in the web console's "try it" (channel ``db.stats.TRIAL_CHANNEL``): always — only a signed-in staff member
  reaches it;
* on any other channel: only with the admin flag.

The rule needs nothing but the settings and the loaded user row (no query), so it costs nothing on the path
of every patient message. ``ChatService`` applies it (``is_staff``, ``roles_for``, ``choose_role``,
``answer_role``); channels only translate its decisions into their own messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from db.settings import Settings
from db.stats import TRIAL_CHANNEL
from db.users import User

TRUSTED_CHANNELS = frozenset({"console", TRIAL_CHANNEL})


@dataclass(frozen=True, slots=True)
class StaffRule:
    """The staff ids of each channel, as stored in ``users.external_id``."""

    telegram_ids: frozenset[str] = field(default_factory=frozenset)
    zalo_ids: frozenset[str] = field(default_factory=frozenset)
    admin_ids: frozenset[str] = field(default_factory=frozenset)  # Telegram ids of ``ADMIN_IDS``

    @classmethod
    def from_settings(cls, settings: Settings) -> StaffRule:
        telegram = {str(i) for i in settings.admin_ids}
        zalo: set[str] = set()
        for entry in settings.clinician_ids:
            if entry.startswith("zalo:"):
                zalo.add(entry.removeprefix("zalo:"))
            else:
                telegram.add(entry)
        return cls(frozenset(telegram), frozenset(zalo), frozenset(str(i) for i in settings.admin_ids))

    def is_staff(self, user: User) -> bool:
        if user.is_admin or user.channel in TRUSTED_CHANNELS:
            return True
        if user.channel == "telegram":
            return user.external_id in self.telegram_ids
        if user.channel == "zalo":
            return user.external_id in self.zalo_ids
        return False

    def is_admin(self, user: User) -> bool:
        """An administrator (KB import, statistics, unanswered questions): the database admin flag, or a
        Telegram user in ``ADMIN_IDS``. Every admin is staff; not every staff member is an admin."""
        return user.is_admin or (user.channel == "telegram" and user.external_id in self.admin_ids)
