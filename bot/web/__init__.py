"""The web app: ``/healthz`` and the clinic console (``/console``), served alone by ``medbot web`` and with
the Telegram webhook by ``medbot run`` (``bot.web.app``)."""
