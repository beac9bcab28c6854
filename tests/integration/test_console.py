"""The clinic console over plain HTTP against the real database: CSRF refusal, session expiry, lockout,
role checks, and the ``medbot staff`` commands an admin runs in a shell (as a subprocess)."""

from __future__ import annotations

import asyncio
import re
import subprocess

import asyncpg
import httpx

from db import staff as staff_db
from tests.console_support import ADMIN, CLINICIAN
from tests.medbot_cli import run_medbot

LOGIN_FAILED = "Email hoặc mật khẩu không đúng"
FORBIDDEN = "Không có quyền truy cập"


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


async def log_in(http: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    form = await http.get("/console/login")
    return await http.post(
        "/console/login", data={"email": email, "password": password, "csrf_token": csrf_of(form.text)}
    )


async def test_a_post_without_the_csrf_token_is_refused_and_changes_nothing(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    form = await http.get("/console/login")
    refused = await http.post("/console/login", data={"email": ADMIN[0], "password": ADMIN[1]})
    assert refused.status_code == 403 and FORBIDDEN in refused.text
    refused = await http.post(
        "/console/login",
        data={"email": ADMIN[0], "password": ADMIN[1], "csrf_token": "x" + csrf_of(form.text)},
    )
    assert refused.status_code == 403 and "medbot_session" not in http.cookies

    assert (await log_in(http, *ADMIN)).status_code == 303
    home = await http.get("/console/")
    assert home.status_code == 200 and ADMIN[0] in home.text
    for data in ({}, {"csrf_token": "not-the-token"}, {"csrf_token": csrf_of(form.text)}):
        out = await http.post("/console/logout", data=data)
        assert out.status_code == 403 and FORBIDDEN in out.text
    assert (await http.get("/console/")).status_code == 200  # still signed in
    assert await db.fetchval("SELECT count(*) FROM console_audit WHERE action = 'logout'") == 0

    out = await http.post("/console/logout", data={"csrf_token": csrf_of(home.text)})
    assert (out.status_code, out.headers["location"]) == (303, "/console/login")
    gone = await http.get("/console/kb")
    assert (gone.status_code, gone.headers["location"]) == (303, "/console/login")


async def test_an_expired_session_sends_the_browser_back_to_the_login_page(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    signed_in = await log_in(http, *CLINICIAN)
    cookie = signed_in.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/console" in cookie
    assert "Max-Age=43200" in cookie  # 12 hours
    stored = await db.fetchval("SELECT token_hash FROM staff_sessions")
    assert stored != http.cookies["medbot_session"] and len(stored) == 64  # only the sha256 is stored
    assert (await http.get("/console/kb")).status_code == 200

    account = await staff_db.get_by_email(db, CLINICIAN[0])
    assert account is not None
    await staff_db.expire_sessions(db, account.id)
    page = await http.get("/console/kb")
    assert (page.status_code, page.headers["location"]) == (303, "/console/login")
    login = await http.get("/console/login")
    assert "Phiên làm việc đã hết hạn" in login.text


async def test_five_wrong_passwords_lock_the_account_for_fifteen_minutes(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    unknown = await log_in(http, "ai.do@phongkham.vn", CLINICIAN[1])
    assert unknown.status_code == 401 and LOGIN_FAILED in unknown.text
    for _ in range(5):
        wrong = await log_in(http, CLINICIAN[0], "sai-mat-khau-roi")
        assert wrong.status_code == 401 and LOGIN_FAILED in wrong.text
    right = await log_in(http, CLINICIAN[0], CLINICIAN[1])  # the right password, while locked
    assert right.status_code == 401 and LOGIN_FAILED in right.text  # said the same way as a wrong one
    assert "medbot_session" not in http.cookies
    minutes = await db.fetchval(
        "SELECT extract(epoch FROM locked_until - now()) / 60 FROM staff_accounts WHERE email = $1",
        CLINICIAN[0],
    )
    assert 14 < minutes <= 15
    assert (await log_in(http, *ADMIN)).status_code == 303  # another account is not affected

    http.cookies.clear()
    await db.execute("UPDATE staff_accounts SET locked_until = now() - interval '1 second'")  # 15 min later
    assert (await log_in(http, *CLINICIAN)).status_code == 303


async def test_a_clinician_cannot_open_an_admin_page_and_the_admin_sees_the_audit_log(
    http: httpx.AsyncClient,
) -> None:
    await log_in(http, *CLINICIAN)
    page = await http.get("/console/audit")
    assert page.status_code == 403 and FORBIDDEN in page.text
    home = await http.get("/console/")
    assert 'href="/console/audit"' not in home.text  # not offered either
    await http.post("/console/logout", data={"csrf_token": csrf_of(home.text)})

    await log_in(http, *ADMIN)
    audit = await http.get("/console/audit")
    assert audit.status_code == 200
    rows = re.findall(r"<td>([^<]*@phongkham\.vn)</td>\s*<td>([^<]*)</td>", audit.text)
    assert rows[:3] == [(ADMIN[0], "Đăng nhập"), (CLINICIAN[0], "Đăng xuất"), (CLINICIAN[0], "Đăng nhập")]


async def test_healthz_and_static_files_need_no_login(http: httpx.AsyncClient) -> None:
    health = await http.get("/healthz")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    css = await http.get("/console/static/console.css")
    assert css.status_code == 200 and "body" in css.text
    assert (await http.get("/console")).headers["location"] == "/console/login"


async def test_cookies_are_secure_unless_the_console_is_opened_on_localhost(http: httpx.AsyncClient) -> None:
    local = await http.get("/console/login")
    assert "medbot_login=" in local.headers["set-cookie"] and "Secure" not in local.headers["set-cookie"]
    public = await http.get("/console/login", headers={"Host": "phongkham.example.vn"})
    assert "Secure" in public.headers["set-cookie"]  # behind the clinic's HTTPS proxy


async def test_the_staff_commands_add_list_and_disable_accounts(
    http: httpx.AsyncClient, db: asyncpg.Pool, db_url: str
) -> None:
    email = "Thu.Ngan@PhongKham.vn"

    def staff_add(role: str, password: str) -> subprocess.CompletedProcess[str]:
        return run_medbot(db_url, "staff", "add", email, "--role", role, "--password-stdin", input=password)

    # Two refusals (before the database is opened) and the account, started together (each process
    # spends most of its time starting up, on one core).
    bad_role, short, added = await asyncio.gather(
        asyncio.to_thread(staff_add, "doctor", "x" * 12),
        asyncio.to_thread(staff_add, "clinician", "ngan\n"),
        asyncio.to_thread(staff_add, "clinician", "mot-mat-khau-dai\n"),
    )
    assert bad_role.returncode == 2 and "Vai trò không hợp lệ: 'doctor'" in bad_role.stderr
    assert short.returncode == 2 and "ít nhất 10 ký tự" in short.stderr
    assert added.returncode == 0, added.stderr
    assert f"Đã tạo tài khoản {email}" in added.stdout
    again = run_medbot(
        db_url,
        "staff",
        "add",
        email.lower(),
        "--role",
        "admin",
        "--password-stdin",
        input="mot-mat-khau-dai\n",
    )
    assert (
        again.returncode == 2 and "Đã có tài khoản" in again.stderr
    )  # emails are the same whatever the case
    stored = await db.fetchval("SELECT password_hash FROM staff_accounts WHERE email = $1", email)
    assert stored.startswith("scrypt$16384$8$1$") and "mot-mat-khau-dai" not in stored

    listed = run_medbot(db_url, "staff", "list")
    assert listed.returncode == 0
    lines = [line.split("\t")[:3] for line in listed.stdout.splitlines()]
    assert [email, "clinician", "đang dùng"] in lines and [ADMIN[0], "admin", "đang dùng"] in lines

    assert (await log_in(http, "thu.ngan@phongkham.vn", "mot-mat-khau-dai")).status_code == 303
    assert (await http.get("/console/")).status_code == 200
    disabled, missing = await asyncio.gather(
        asyncio.to_thread(run_medbot, db_url, "staff", "disable", email),
        asyncio.to_thread(run_medbot, db_url, "staff", "disable", "khong.co@phongkham.vn"),
    )
    assert disabled.returncode == 0 and "Đã khóa tài khoản" in disabled.stdout
    assert missing.returncode == 1 and "không có tài khoản" in missing.stderr
    assert (await http.get("/console/")).status_code == 303  # its open session ended
    refused = await log_in(http, email, "mot-mat-khau-dai")
    assert refused.status_code == 401 and LOGIN_FAILED in refused.text
    assert "đã khóa" in run_medbot(db_url, "staff", "list").stdout

    enabled = run_medbot(db_url, "staff", "enable", email)
    assert enabled.returncode == 0 and "Đã mở lại tài khoản" in enabled.stdout
    assert (await log_in(http, email, "mot-mat-khau-dai")).status_code == 303
    reset = run_medbot(db_url, "staff", "password", email, "--password-stdin", input="mat-khau-moi-hon\n")
    assert reset.returncode == 0 and "Đã đặt mật khẩu mới" in reset.stdout, reset.stderr
    assert (await http.get("/console/")).status_code == 303  # the session opened with the old password ended
    assert (await log_in(http, email, "mot-mat-khau-dai")).status_code == 401
    assert (await log_in(http, email, "mat-khau-moi-hon")).status_code == 303
