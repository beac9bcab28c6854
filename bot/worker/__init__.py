"""The background worker (``medbot worker``), an application of its own beside the bot: scheduled jobs on
APScheduler 3 behind a leader lock.

* ``jobs``: :func:`~bot.worker.jobs.default_jobs`, the jobs each feature registers (the KB's in
  ``kb_import.jobs``, storage's in ``db.housekeeping``, Telegram's in ``bot.telegram.jobs``, Zalo's in
  ``bot.zalo.jobs``), all written against the contract of ``db.job_context`` with settings from
  ``db.worker_settings``;
* ``runner``: runs one job and records it in ``job_runs`` (shared by the scheduler and ``--once``);
* ``scheduler``: leader election on a PostgreSQL advisory lock and the APScheduler loop;
* ``cli``: the ``medbot worker [--once JOB] [--list]`` handler; its job context comes from the composition
  root (``bot.wiring.job_context``).
"""
