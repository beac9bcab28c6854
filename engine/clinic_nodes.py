"""``ClinicServiceResponse``: the flow's answer to a message about the clinic rather than about health.

The routes ``booking``, ``human``, ``complaint``, ``praise``, ``clinic_info``, ``thanks``, ``goodbye`` and
``english`` of MainDecisionAgent all lead here (``engine.flows.MEDICAL_FLOW``). The reply comes from
``engine.clinic_replies`` with the clinic profile of the engine's config (a clinician role's thanks and goodbye
address "bác sĩ": ``engine.texts``); it offers no topic list and carries no medical disclaimer (Finalize adds
that to medical answers only).

``StaffHandoff``: where the ``human`` and ``complaint`` routes lead when a staff handoff is available
(``engine.flows.HANDOFF_FLOW``). It writes the same honest reply (what the patient gets if no handoff can be
opened) and sets ``handoff`` to the intent; the caller (``bot.service.ChatService``) opens the handoff and
replaces the reply. The engine itself knows no staff, no topic and no SQL.
"""

from __future__ import annotations

from typing import Any

from engine import clinic_replies, texts
from engine.clinic import ClinicProfile
from engine.core import Node, register
from engine.intents import clinic_topic
from engine.shared import deps_of, role_of, say
from engine.text import fold_plain


@register
class ClinicServiceResponse(Node):
    """Booking / person / complaint / praise / clinic facts / thanks / goodbye / English: an honest reply."""

    async def prep(self, shared: dict[str, Any]) -> tuple[str, str, ClinicProfile]:
        return shared.get("input_type", ""), shared["query"], deps_of(shared).config.clinic

    async def post(self, shared: dict[str, Any], p: tuple[str, str, ClinicProfile], _: Any) -> str:
        intent, query, profile = p
        if intent == "clinic_info":
            topic = clinic_topic(fold_plain(query))
            shared["clinic_topic"] = topic or "general"
            say(shared, clinic_replies.clinic_info(profile, topic, query))
        elif intent in ("thanks", "goodbye") and role_of(shared).clinician:  # "bác sĩ", not "bạn"
            say(shared, texts.THANKS_REPLY_CLINICIAN if intent == "thanks" else texts.GOODBYE_REPLY_CLINICIAN)
        else:
            say(shared, clinic_replies.REPLIES.get(intent, clinic_replies.thanks)(profile))
        shared["suggestion_questions"] = []
        return "default"


@register
class StaffHandoff(ClinicServiceResponse):
    """A request for a person, or a complaint, with staff available: mark it for the caller to hand over."""

    async def post(self, shared: dict[str, Any], p: tuple[str, str, ClinicProfile], _: Any) -> str:
        shared["handoff"] = p[0]
        return await super().post(shared, p, _)
