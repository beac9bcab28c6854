"""The KB's background jobs, registered with the worker by :data:`JOBS`:

* ``embedding_backfill`` (``kb_import.backfill``): embeds KB entries and guideline chunks lacking a vector of
  the current embedding model;
* ``folder_import`` (``kb_import.folder_import``): imports spreadsheets dropped in ``KB_IMPORT_DIR`` (strict);
* ``kb_calibration`` (``kb_import.calibrate``): re-estimates the calibration of roles whose KB changed since it
  was last measured (imports do it themselves; this catches imports without embeddings and backfills).
"""

from __future__ import annotations

from db.job_context import Job
from kb_import import backfill, calibrate, folder_import

JOBS = [
    Job(
        "embedding_backfill",
        backfill.run,
        "every 10m",
        "Embed KB entries and guideline chunks lacking a current vector",
    ),
    Job(
        "folder_import",
        folder_import.run,
        "every 1m",
        "Import spreadsheets dropped in KB_IMPORT_DIR (strict)",
        folder_import.unavailable,
    ),
    Job(
        "kb_calibration",
        calibrate.run,
        "every 10m",
        "Re-estimate the answer calibration of roles whose KB changed",
    ),
]
