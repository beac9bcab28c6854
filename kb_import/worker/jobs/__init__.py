"""The worker's jobs, and :func:`default_jobs`, the list ``medbot worker`` schedules.

Default schedules (times in ``WORKER_TIMEZONE``, Asia/Ho_Chi_Minh unless set):

=====================  ==================  ==============================================================
job                    default schedule    does
=====================  ==================  ==============================================================
embedding_backfill     every 10m           embeds KB entries / guideline chunks missing a current vector
folder_import          every 1m            imports spreadsheets dropped in ``KB_IMPORT_DIR`` (strict)
retention              cron 30 2 * * *     deletes messages (with traces) older than ``RETENTION_DAYS``
digest                 cron 0 7 * * *      yesterday's numbers, unanswered and 👎 questions, a chart
outbox_drain           every 15s           hands pending outbox rows to the Telegram sender
cleanup                every 1h            expired suggestion sets, old processed updates, old job runs
zalo_token_refresh     every 30m           refreshes the Zalo OA access token (when Zalo is configured)
=====================  ==================  ==============================================================
"""

from __future__ import annotations

from kb_import.worker.context import Job


def default_jobs() -> list[Job]:
    from kb_import.worker.jobs import backfill, cleanup, digest, folder_import, outbox_drain, retention, zalo

    return [
        Job("embedding_backfill", backfill.run, "every 10m", "Embed KB entries and guideline chunks lacking a current vector"),
        Job("folder_import", folder_import.run, "every 1m", "Import spreadsheets dropped in KB_IMPORT_DIR (strict)",
            folder_import.unavailable),
        Job("retention", retention.run, "cron 30 2 * * *", "Delete messages and traces older than RETENTION_DAYS"),
        Job("digest", digest.run, "cron 0 7 * * *", "Daily digest of yesterday to the admins (outbox)"),
        Job("outbox_drain", outbox_drain.run, "every 15s", "Send pending outbox rows through the Telegram sender",
            outbox_drain.unavailable),
        Job("cleanup", cleanup.run, "every 1h", "Expired suggestion sets, old processed updates and job runs"),
        Job("zalo_token_refresh", zalo.run, "every 30m", "Refresh the Zalo OA access token (when configured)",
            zalo.unavailable),
    ]
