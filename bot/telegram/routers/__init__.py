"""One aiogram Router per feature; :func:`all_routers` gives them in matching order (admin first, so its
commands and documents are authorised before the patient fallbacks see them)."""

from __future__ import annotations

from aiogram import Router

from bot.telegram.routers import account, admin, fallback, handoff, questions, start, verify
from db.settings import Settings


def all_routers(settings: Settings) -> list[Router]:
    # verify goes before admin and questions: its handlers only claim a chat that waits for an article or a
    # guideline file, or has an open sentence (bot.telegram.states.Waiting); otherwise the admin router would
    # take every document (and refuse a clinician's article file) and questions every text.
    # The staff group's updates (the handoff) go first: none of them may reach a patient's handler.
    return [
        handoff.staff_router(settings),
        handoff.patient_router,
        start.router,
        account.router,
        verify.router,
        admin.build(settings),
        questions.router,
        fallback.router,
    ]
