"""The clinic console's staff: accounts with passwords, sessions, and the console's audit log.

* ``staff_accounts``: one row per person (``email`` unique whatever its case), ``role`` admin or clinician,
  ``password_hash`` a self-describing scrypt string (``db.staff``), ``active`` (a disabled account cannot log
  in and its sessions stop working), ``failed_logins`` / ``locked_until`` for the lockout after repeated
  wrong passwords.
* ``staff_sessions``: a browser's login. Only the sha256 of the cookie's token is stored (a leaked table
  gives no usable session), with the session's CSRF token and its expiry.
* ``console_audit``: who did what in the console (logins, logouts, and later: which conversation was viewed),
  ``subject`` naming what it was done to, ``detail`` anything else. Kept when the account is disabled.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE staff_accounts (
            id             bigserial   PRIMARY KEY,
            email          text        NOT NULL,
            role           text        NOT NULL CHECK (role IN ('admin', 'clinician')),
            password_hash  text        NOT NULL,
            active         boolean     NOT NULL DEFAULT true,
            created_at     timestamptz NOT NULL DEFAULT now(),
            failed_logins  integer     NOT NULL DEFAULT 0,
            locked_until   timestamptz
        )
        """
    )
    op.execute("CREATE UNIQUE INDEX staff_accounts_email_key ON staff_accounts (lower(email))")
    op.execute(
        """
        CREATE TABLE staff_sessions (
            token_hash  text        PRIMARY KEY,
            staff_id    bigint      NOT NULL REFERENCES staff_accounts(id) ON DELETE CASCADE,
            csrf_token  text        NOT NULL,
            created_at  timestamptz NOT NULL DEFAULT now(),
            expires_at  timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX staff_sessions_staff_idx ON staff_sessions (staff_id)")
    op.execute(
        """
        CREATE TABLE console_audit (
            id        bigserial   PRIMARY KEY,
            staff_id  bigint      REFERENCES staff_accounts(id) ON DELETE SET NULL,
            action    text        NOT NULL,
            subject   text        NOT NULL DEFAULT '',
            detail    jsonb       NOT NULL DEFAULT '{}',
            at        timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX console_audit_at_idx ON console_audit (at)")


def downgrade() -> None:
    op.execute("DROP TABLE console_audit")
    op.execute("DROP TABLE staff_sessions")
    op.execute("DROP TABLE staff_accounts")
