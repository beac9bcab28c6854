"""One aiogram Router per feature; :func:`all_routers` gives them in matching order (admin first, so its
commands and documents are authorised before the patient fallbacks see them)."""

from __future__ import annotations

from aiogram import Router

from db.settings import Settings


def all_routers(settings: Settings) -> list[Router]:
    from bot.telegram.routers import account, admin, fallback, questions, start

    return [start.router, account.router, admin.build(settings), questions.router, fallback.router]
