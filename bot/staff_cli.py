"""``medbot staff add EMAIL --role admin|clinician`` / ``list`` / ``disable EMAIL`` / ``enable EMAIL`` /
``password EMAIL`` (a new password: lifts a lockout, ends open sessions): the clinic console's
accounts (``db.staff``). Messages are for the clinic's staff, in Vietnamese; bad input exits with 2, an
unknown account with 1.

The password is asked twice without echo, or read as one line from stdin with ``--password-stdin`` (scripts,
tests): never as an argument, where it would stay in the shell's history and the process list.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from bot.runtime import open_runtime
from db import staff as staff_db
from db.settings import Settings

ROLE_LABELS = {"admin": "quản trị", "clinician": "bác sĩ"}


def _fail(message: str, code: int = 2) -> int:
    print(f"medbot: {message}", file=sys.stderr)
    return code


def read_password(from_stdin: bool) -> str | None:
    """The new password, or None (after saying why) when it was not given the same way twice."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    try:
        first = getpass.getpass("Mật khẩu mới: ")
        second = getpass.getpass("Nhập lại mật khẩu: ")
    except EOFError:
        print("medbot: chưa nhập mật khẩu.", file=sys.stderr)
        return None
    if first != second:
        print("medbot: hai lần nhập mật khẩu không khớp nhau.", file=sys.stderr)
        return None
    return first


async def staff_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.staff_command == "add":
        problem = staff_db.account_problem(args.email, args.role)
        if problem:  # before the password is asked for
            return _fail(problem)
        password = read_password(args.password_stdin)
        if password is None:
            return 2
        problem = staff_db.password_problem(password)
        if problem:  # before the database is even opened
            return _fail(problem)
        async with await open_runtime(settings, pool_size=2) as runtime:
            try:
                account = await staff_db.create_account(runtime.pool, args.email, args.role, password)
            except staff_db.StaffError as exc:
                return _fail(str(exc))
        print(f"Đã tạo tài khoản {account.email} ({ROLE_LABELS[account.role]}).")
        return 0
    if args.staff_command == "password":
        password = read_password(args.password_stdin)
        if password is None:
            return 2
        problem = staff_db.password_problem(password)
        if problem:
            return _fail(problem)
        async with await open_runtime(settings, pool_size=2) as runtime:
            account = await staff_db.set_password(runtime.pool, args.email, password)
        if account is None:
            return _fail(f"không có tài khoản nào với email {args.email}.", 1)
        print(f"Đã đặt mật khẩu mới cho {account.email}; các phiên đang mở đã kết thúc.")
        return 0
    async with await open_runtime(settings, pool_size=2) as runtime:
        if args.staff_command == "list":
            accounts = await staff_db.list_accounts(runtime.pool)
            if not accounts:
                print("Chưa có tài khoản nào. Tạo tài khoản đầu tiên: medbot staff add EMAIL --role admin")
            for a in accounts:
                state = "đang dùng" if a.active else "đã khóa"
                print(f"{a.email}\t{a.role}\t{state}\t{a.created_at:%Y-%m-%d}")
            return 0
        enable = args.staff_command == "enable"
        account = await staff_db.set_active(runtime.pool, args.email, enable)
    if account is None:
        return _fail(f"không có tài khoản nào với email {args.email}.", 1)
    if enable:
        print(f"Đã mở lại tài khoản {account.email}.")
    else:
        print(f"Đã khóa tài khoản {account.email}: không đăng nhập được nữa, các phiên đang mở đã kết thúc.")
    return 0
