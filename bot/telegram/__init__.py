"""The Telegram channel (aiogram 3): routers per feature, middlewares, rendering, delivery (webhook/polling).

Entry point: :func:`bot.telegram.app.run_telegram`, called by ``medbot run`` when a bot token is set.
"""
