"""Login and logout: ``GET``/``POST /console/login``, ``POST /console/logout``.

A wrong password, an unknown email, a disabled or a locked account all get the same message (whoever guesses
learns nothing about which emails exist); the fifth wrong password in a row locks the account for 15 minutes
(``db.staff.check_login``). A successful login starts a 12-hour session (a new random token in an HttpOnly
cookie) and is recorded in the audit log, as is a logout.
"""

from __future__ import annotations

from aiohttp import web

from bot.web.console import security
from bot.web.console.security import PREFIX, SESSION_COOKIE
from db import staff as staff_db

routes = web.RouteTableDef()

LOGIN_FAILED = "Email hoặc mật khẩu không đúng. Sau 5 lần nhập sai liên tiếp, tài khoản bị tạm khóa 15 phút."


async def _login_page(request: web.Request, *, email: str = "", error: str | None = None) -> web.Response:
    security.login_csrf(request)
    status = 401 if error else 200
    response = await security.render(request, "login.html", {"email": email, "error": error}, status=status)
    security.keep_login_csrf(response, request)
    return response


@routes.get("/login")
async def login_form(request: web.Request) -> web.StreamResponse:
    if request.get(security.SESSION) is not None:
        raise web.HTTPSeeOther(f"{PREFIX}/")
    return await _login_page(request)


@routes.post("/login")
async def login(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    email = str(form.get("email", "")).strip()
    password = str(form.get("password", ""))
    pool = security.pool(request)
    account = await staff_db.check_login(pool, email, password) if email and password else None
    if account is None:
        return await _login_page(request, email=email, error=LOGIN_FAILED)
    token, _ = await staff_db.create_session(pool, account.id)
    await staff_db.audit(pool, account.id, "login")
    response = security.redirect(request, f"{PREFIX}/", "logged_in")
    security.set_cookie(response, request, SESSION_COOKIE, token, max_age=staff_db.SESSION_HOURS * 3600)
    security.clear_cookie(response, request, security.LOGIN_COOKIE)
    raise response


@routes.post("/logout")
async def logout(request: web.Request) -> web.StreamResponse:
    pool = security.pool(request)
    await staff_db.end_session(pool, request.cookies.get(SESSION_COOKIE, ""))
    await staff_db.audit(pool, security.staff(request).id, "logout")
    response = security.redirect(request, f"{PREFIX}/login", "logged_out")
    security.clear_cookie(response, request, SESSION_COOKIE)
    raise response
