"""Command menus per scope, in Vietnamese: patients (default scope) and each admin's own chat."""

from __future__ import annotations

import logging

import asyncpg
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import BotCommand, BotCommandScopeChat, BotCommandScopeDefault

from db import users
from db.settings import Settings

log = logging.getLogger("medbot.telegram")

PATIENT_COMMANDS = [
    BotCommand(command="start", description="Bắt đầu / chọn chuyên khoa"),
    BotCommand(command="chuyenkhoa", description="Đổi chuyên khoa"),
    BotCommand(command="help", description="Hướng dẫn sử dụng"),
    BotCommand(command="xoadulieu", description="Xoá dữ liệu của tôi"),
]
ADMIN_COMMANDS = [
    *PATIENT_COMMANDS,
    BotCommand(command="import", description="Nhập KB từ tệp .xlsx/.csv"),
    BotCommand(command="stats", description="Thống kê 7/30 ngày"),
    BotCommand(command="unanswered", description="Câu hỏi chưa trả lời tốt"),
    BotCommand(command="kb_add", description="Thêm một câu hỏi vào KB"),
    BotCommand(command="duyetkb", description="Xác nhận bác sĩ đã duyệt KB mẫu"),
    BotCommand(command="hoantac", description="Hoàn tác lần nhập KB gần nhất"),
    BotCommand(command="reload", description="Tải lại KB"),
]


async def set_menus(bot: Bot, pool: asyncpg.Pool, settings: Settings) -> None:
    await bot.set_my_commands(PATIENT_COMMANDS, scope=BotCommandScopeDefault())
    chats = await users.admin_chat_ids(pool, settings)
    for chat_id in [int(x) for x in chats if x.lstrip("-").isdigit()]:
        try:
            await bot.set_my_commands(ADMIN_COMMANDS, scope=BotCommandScopeChat(chat_id=chat_id))
        except TelegramAPIError as exc:  # e.g. the admin never opened the bot
            log.warning("menu.admin_failed chat=%s error=%s", chat_id, exc)
