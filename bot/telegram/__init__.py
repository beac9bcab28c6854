"""Telegram channel (aiogram 3): routers, keyboards, webhook app."""
