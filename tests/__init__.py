"""Test suite: unit, integration (real PostgreSQL) and end-to-end."""
