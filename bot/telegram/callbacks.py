"""Typed callback data for every inline button. Packed values stay far below Telegram's 64-byte limit:
buttons carry short ids (suggestion set id + index, message id, pending-action id), never text."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData


class RoleCb(CallbackData, prefix="role"):
    role: str


class SuggestCb(CallbackData, prefix="sq"):
    set_id: int
    i: int


class FeedbackCb(CallbackData, prefix="fb"):
    message_id: int
    rating: int


class EraseCb(CallbackData, prefix="erase"):
    confirm: bool


class ImportCb(CallbackData, prefix="imp"):
    action: str  # "ok" | "no"
    pending_id: int


class UnansweredCb(CallbackData, prefix="ua"):
    message_id: int
