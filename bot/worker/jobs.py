"""The worker's jobs: :func:`default_jobs` collects the jobs each feature registers (``JOBS`` in the module
that owns them); ``medbot worker`` schedules this list.

Default schedules (times in ``WORKER_TIMEZONE``, Asia/Ho_Chi_Minh unless set):

=====================  ==================  =====================  ==========================================
job                    default schedule    owner                  does
=====================  ==================  =====================  ==========================================
embedding_backfill     every 10m           ``kb_import.jobs``     embeds KB entries / guideline chunks
                                                                  missing a current vector
folder_import          every 1m            ``kb_import.jobs``     imports spreadsheets dropped in
                                                                  ``KB_IMPORT_DIR`` (strict)
kb_calibration         every 10m           ``kb_import.jobs``     re-estimates the answer calibration of
                                                                  roles whose KB changed since measured
retention              cron 30 2 * * *     ``db.housekeeping``    deletes messages (with traces) older than
                                                                  ``RETENTION_DAYS``
cleanup                every 1h            ``db.housekeeping``    expired suggestion sets and console
                                                                  sessions, old processed updates, job
                                                                  runs, console audit rows and uploads
digest                 cron 0 7 * * *      ``bot.telegram.jobs``  yesterday's numbers, unanswered and 👎
                                                                  questions, a chart
outbox_drain           every 15s           ``bot.telegram.jobs``  hands pending outbox rows to the Telegram
                                                                  sender
handoff_reminder       every 5m            ``bot.telegram.jobs``  reminds a staff topic nobody answered for
                                                                  ``HANDOFF_REMIND_MINUTES`` (once)
zalo_token_refresh     every 30m           ``bot.zalo.jobs``      refreshes the Zalo OA access token (when
                                                                  Zalo is configured)
zalo_outbox            every 30s           ``bot.zalo.jobs``      sends pending Zalo outbox rows (the staff
                                                                  handoff's), when Zalo is configured
=====================  ==================  =====================  ==========================================
"""

from __future__ import annotations

from bot.telegram.jobs import JOBS as TELEGRAM_JOBS
from bot.zalo.jobs import JOBS as ZALO_JOBS
from db.housekeeping import JOBS as STORAGE_JOBS
from db.job_context import Job
from kb_import.jobs import JOBS as KB_JOBS


def default_jobs() -> list[Job]:
    """Every feature's jobs, KB first (what ``--list`` shows, in this order)."""
    return [*KB_JOBS, *STORAGE_JOBS, *TELEGRAM_JOBS, *ZALO_JOBS]
