"""The clinic console's staff: accounts and passwords, login sessions, and the console's audit log.

* Passwords are hashed with the standard library's scrypt, a random salt per password, stored as one
  self-describing string ``scrypt$n$r$p$salt$hash`` (salt and hash base64), so the cost can be raised later
  without breaking stored hashes; comparison is constant-time.
* :func:`check_login` counts wrong passwords: the fifth in a row locks the account for
  :data:`LOCK_MINUTES`; a locked, disabled or unknown account is refused exactly like a wrong password (the
  caller cannot tell them apart, nor can whoever is guessing).
* A session is a random token in the browser's cookie; only its sha256 is stored, with the session's CSRF
  token and its expiry. Disabling an account ends its sessions.
* ``console_audit``: one row per action worth knowing about (login, logout, later the pages that show a
  patient's conversation), read by the console's audit page; kept ``CONSOLE_AUDIT_DAYS`` (the worker's
  hourly cleanup, :func:`delete_audit_older_than`).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from db.types import Executor

ROLES = ("admin", "clinician")
MIN_PASSWORD_LENGTH = 10
MAX_FAILED_LOGINS = 5
LOCK_MINUTES = 15
SESSION_HOURS = 12

# scrypt cost: n=2**14, r=8, p=1 (16 MiB, ~50 ms on one core), the parameters RFC 7914 suggests for logins.
_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1
_SALT_BYTES, _KEY_BYTES = 16, 32


class StaffError(ValueError):
    """An account that cannot be created as asked (duplicate email, unknown role, short password)."""


@dataclass(frozen=True, slots=True)
class StaffAccount:
    id: int
    email: str
    role: str
    active: bool
    created_at: datetime
    failed_logins: int
    locked_until: datetime | None


@dataclass(frozen=True, slots=True)
class StaffSession:
    staff: StaffAccount
    csrf_token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    email: str | None
    action: str
    subject: str
    detail: dict[str, Any]
    at: datetime


_COLUMNS = "id, email, role, active, created_at, failed_logins, locked_until"
_PREFIXED = ", ".join(f"a.{c}" for c in _COLUMNS.split(", "))


def _account(row: asyncpg.Record | None) -> StaffAccount | None:
    return StaffAccount(**{k: row[k] for k in _COLUMNS.split(", ")}) if row else None


# ----- passwords ----------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str) -> str:
    """``scrypt$n$r$p$salt$hash`` for ``password`` with a fresh random salt."""
    salt = secrets.token_bytes(_SALT_BYTES)
    key = hashlib.scrypt(
        password.encode(), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=_KEY_BYTES
    )
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${_b64(salt)}${_b64(key)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches ``stored`` (constant-time); False for a malformed stored string."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(key)
        given = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
            maxmem=256 * 1024 * 1024,
        )
    except ValueError:
        return False
    return hmac.compare_digest(given, expected)


@functools.cache
def _decoy_hash() -> str:
    """A hash no password is checked against for real: an unknown email costs the same scrypt as a known one."""
    return hash_password(secrets.token_urlsafe(16))


def password_problem(password: str) -> str | None:
    """Why ``password`` cannot be used (Vietnamese, for the person choosing it), or None."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"Mật khẩu cần ít nhất {MIN_PASSWORD_LENGTH} ký tự."
    if password != password.strip():
        return "Mật khẩu không được bắt đầu hay kết thúc bằng khoảng trắng."
    return None


# ----- accounts -----------------------------------------------------------------------------------------


def normalize_email(email: str) -> str:
    return email.strip()


def account_problem(email: str, role: str) -> str | None:
    """Why an account with this email and role cannot exist (Vietnamese), or None."""
    email = normalize_email(email)
    if "@" not in email or len(email) > 254 or any(c.isspace() for c in email):
        return f"Email không hợp lệ: {email!r}."
    if role not in ROLES:
        return f"Vai trò không hợp lệ: {role!r} (chọn admin hoặc clinician)."
    return None


async def create_account(db: Executor, email: str, role: str, password: str) -> StaffAccount:
    """A new active account; :class:`StaffError` (Vietnamese message) when it cannot be created."""
    email = normalize_email(email)
    problem = account_problem(email, role) or password_problem(password)
    if problem:
        raise StaffError(problem)
    password_hash = await asyncio.to_thread(hash_password, password)
    try:
        row = await db.fetchrow(
            f"INSERT INTO staff_accounts (email, role, password_hash) VALUES ($1, $2, $3) RETURNING {_COLUMNS}",
            email,
            role,
            password_hash,
        )
    except asyncpg.UniqueViolationError:
        raise StaffError(f"Đã có tài khoản với email {email}.") from None
    account = _account(row)
    assert account is not None
    return account


async def get_by_email(db: Executor, email: str) -> StaffAccount | None:
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM staff_accounts WHERE lower(email) = lower($1)", normalize_email(email)
    )
    return _account(row)


async def list_accounts(db: Executor) -> list[StaffAccount]:
    rows = await db.fetch(f"SELECT {_COLUMNS} FROM staff_accounts ORDER BY lower(email)")
    return [a for a in map(_account, rows) if a is not None]


async def set_active(db: Executor, email: str, active: bool) -> StaffAccount | None:
    """Enable or disable an account (None when there is none); disabling ends its sessions."""
    row = await db.fetchrow(
        f"UPDATE staff_accounts SET active = $2 WHERE lower(email) = lower($1) RETURNING {_COLUMNS}",
        normalize_email(email),
        active,
    )
    account = _account(row)
    if account is not None and not active:
        await db.execute("DELETE FROM staff_sessions WHERE staff_id = $1", account.id)
    return account


async def set_password(db: Executor, email: str, password: str) -> StaffAccount | None:
    """A new password for the account (None when there is none): the lockout is lifted and every open session
    ends, so whoever knew the old password is signed out. :class:`StaffError` for a password that cannot be used."""
    problem = password_problem(password)
    if problem:
        raise StaffError(problem)
    password_hash = await asyncio.to_thread(hash_password, password)
    row = await db.fetchrow(
        "UPDATE staff_accounts SET password_hash = $2, failed_logins = 0, locked_until = NULL "
        f"WHERE lower(email) = lower($1) RETURNING {_COLUMNS}",
        normalize_email(email),
        password_hash,
    )
    account = _account(row)
    if account is not None:
        await db.execute("DELETE FROM staff_sessions WHERE staff_id = $1", account.id)
    return account


async def delete_account(db: Executor, email: str) -> StaffAccount | None:
    """Delete the account (None when there is none) and, by cascade, its sessions. What it did stays on record:
    its audit rows and KB history keep their place, shown as a deleted account's."""
    row = await db.fetchrow(
        f"DELETE FROM staff_accounts WHERE lower(email) = lower($1) RETURNING {_COLUMNS}",
        normalize_email(email),
    )
    return _account(row)


async def check_login(db: Executor, email: str, password: str) -> StaffAccount | None:
    """The account when ``password`` is right and the account active and not locked, else None.

    A wrong password for an existing account counts towards the lockout (the fifth in a row locks it for
    :data:`LOCK_MINUTES` and starts the count again); a right one resets the count. While locked, no password
    is checked at all."""
    row = await db.fetchrow(
        f"SELECT {_COLUMNS}, password_hash, locked_until > now() AS locked FROM staff_accounts "
        "WHERE lower(email) = lower($1)",
        normalize_email(email),
    )
    if row is None or row["locked"] or not row["active"]:
        await asyncio.to_thread(verify_password, password, _decoy_hash())  # the same time as a real check
        return None
    if await asyncio.to_thread(verify_password, password, row["password_hash"]):
        await db.execute(
            "UPDATE staff_accounts SET failed_logins = 0, locked_until = NULL WHERE id = $1", row["id"]
        )
        return _account(row)
    await db.execute(
        """
        UPDATE staff_accounts SET
            locked_until = CASE WHEN failed_logins + 1 >= $2 THEN now() + make_interval(mins => $3)
                                ELSE locked_until END,
            failed_logins = CASE WHEN failed_logins + 1 >= $2 THEN 0 ELSE failed_logins + 1 END
        WHERE id = $1
        """,
        row["id"],
        MAX_FAILED_LOGINS,
        LOCK_MINUTES,
    )
    return None


# ----- sessions -----------------------------------------------------------------------------------------


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def create_session(
    db: Executor, staff_id: int, *, hours: float = SESSION_HOURS
) -> tuple[str, StaffSession]:
    """A new session for the account: (the token for the cookie, the session). Expired sessions go."""
    await db.execute("DELETE FROM staff_sessions WHERE expires_at < now()")
    token = secrets.token_urlsafe(32)
    await db.execute(
        "INSERT INTO staff_sessions (token_hash, staff_id, csrf_token, expires_at) "
        "VALUES ($1, $2, $3, now() + make_interval(secs => $4))",
        token_hash(token),
        staff_id,
        secrets.token_urlsafe(32),
        float(hours * 3600),
    )
    session = await session_for(db, token)
    assert session is not None
    return token, session


async def session_for(db: Executor, token: str) -> StaffSession | None:
    """The live session of ``token``: not expired, its account active; else None."""
    row = await db.fetchrow(
        f"""
        SELECT {_PREFIXED}, s.csrf_token, s.expires_at FROM staff_sessions s
        JOIN staff_accounts a ON a.id = s.staff_id
        WHERE s.token_hash = $1 AND s.expires_at > now() AND a.active
        """,
        token_hash(token),
    )
    account = _account(row)
    if row is None or account is None:
        return None
    return StaffSession(staff=account, csrf_token=row["csrf_token"], expires_at=row["expires_at"])


async def delete_expired_sessions(db: Executor) -> int:
    """Remove expired sessions (the worker's hourly cleanup); how many went."""
    status = await db.execute("DELETE FROM staff_sessions WHERE expires_at < now()")
    return int(status.split()[-1])


async def end_session(db: Executor, token: str) -> None:
    await db.execute("DELETE FROM staff_sessions WHERE token_hash = $1", token_hash(token))


async def expire_sessions(db: Executor, staff_id: int, when: timedelta = timedelta(0)) -> None:
    """Set the account's sessions to expire ``when`` from now (zero: now)."""
    await db.execute("UPDATE staff_sessions SET expires_at = now() + $2 WHERE staff_id = $1", staff_id, when)


# ----- audit --------------------------------------------------------------------------------------------


async def audit(
    db: Executor, staff_id: int | None, action: str, subject: str = "", detail: dict[str, Any] | None = None
) -> None:
    """Record that ``staff_id`` did ``action`` (``login``, ``logout``, ``view_conversation``…) to ``subject``."""
    await db.execute(
        "INSERT INTO console_audit (staff_id, action, subject, detail) VALUES ($1, $2, $3, $4)",
        staff_id,
        action,
        subject,
        detail or {},
    )


async def recent_audit(db: Executor, limit: int = 100) -> list[AuditEntry]:
    rows = await db.fetch(
        """
        SELECT c.id, a.email, c.action, c.subject, c.detail, c.at FROM console_audit c
        LEFT JOIN staff_accounts a ON a.id = c.staff_id ORDER BY c.id DESC LIMIT $1
        """,
        limit,
    )
    return [AuditEntry(**dict(r)) for r in rows]


async def delete_audit_older_than(db: Executor, days: int) -> int:
    """Remove the audit rows older than ``days`` days (``CONSOLE_AUDIT_DAYS``; 0 keeps them all); how many went.
    A row exactly at the cut-off is kept."""
    if days == 0:
        return 0
    status = await db.execute("DELETE FROM console_audit WHERE at < now() - make_interval(days => $1)", days)
    return int(status.split()[-1])
