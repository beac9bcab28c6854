"""Settings, connection pool, embedded PostgreSQL, and repository functions: all SQL lives here. Also the
background-job contract every feature writes its jobs against (``job_context``, ``worker_settings``) and
storage's own jobs (``housekeeping``: retention, clean-ups). Imports only ``engine``."""
