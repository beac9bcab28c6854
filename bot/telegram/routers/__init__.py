"""One aiogram Router per feature; :func:`all_routers` gives them in matching order (admin first, so its
commands and documents are authorised before the patient fallbacks see them)."""

from __future__ import annotations

from aiogram import Router

from db.settings import Settings


def all_routers(settings: Settings) -> list[Router]:
    from bot.telegram import verify
    from bot.telegram.routers import account, admin, fallback, questions, start

    # /verify's text handler only claims chats with an open verification, so it goes before questions.
    return [start.router, account.router, admin.build(settings), verify.router, questions.router, fallback.router]
