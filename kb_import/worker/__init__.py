"""The background worker (``medbot worker``): scheduled jobs on APScheduler 3 behind a leader lock.

* ``config``: ``WORKER_*`` settings and schedule specs;
* ``context``: what a job receives (pool, settings, embedder) and how it reports (counts, ``JobSkipped``);
* ``runner``: runs one job and records it in ``job_runs`` (shared by the scheduler and ``--once``);
* ``leader``/``scheduler``: leader election on a PostgreSQL advisory lock and the APScheduler loop;
* ``jobs``: the jobs themselves; ``adapters``: the calls into other parts of the bot (import job, Telegram
  outbox drain, Zalo token refresh), each isolated in one small function;
* ``cli``: the ``medbot worker [--once JOB] [--list]`` handler.
"""
