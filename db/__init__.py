"""Settings, connection pool, embedded PostgreSQL, and repository functions: all SQL lives here."""
