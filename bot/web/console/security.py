"""What every console page relies on: the session, the CSRF check, role checks, page rendering, flashes.

* :func:`session_middleware` — every path under ``/console`` but the login page and the static files needs a
  live session (``db.staff.session_for``), else the browser is sent to the login page. The session is in
  ``request[SESSION]``; :func:`staff` returns its account. Every console response is ``Cache-Control:
  no-store``, so after logout the back button asks the server again and gets the login page, not a copy.
* :func:`csrf_middleware` — every POST carries ``csrf_token``: the session's token, or before login the
  value of the ``medbot_login`` cookie the login page set (double submit). Anything else gets the 403 page.
* :func:`requires` — ``@requires("admin")`` on a handler: other roles get the 403 page (checked on the
  server for every request, whatever the page shows or hides).
* :func:`render` — a template with what ``base.html`` needs (clinic name, the signed-in staff member, the
  CSRF token, the flash message, how many staff handoffs wait for a reply: the menu shows it).
* :func:`redirect` — a 303 to a console path, optionally with a flash message (a key of :data:`FLASHES`).

Cookies: ``HttpOnly``, ``SameSite=Strict``, ``Path=/console``, and ``Secure`` unless the request came to a
loopback host (``localhost``, ``127.0.0.1``, ``::1``): a deployment is reached over HTTPS (behind a proxy that
terminates TLS the app sees plain HTTP, so the request's own scheme cannot decide), while a developer's
``medbot web`` on http://localhost still works.
"""

from __future__ import annotations

import functools
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp_jinja2
import asyncpg
from aiohttp import web

from bot.web.console.services import ConsoleServices
from db import handoffs as handoffs_db
from db import staff as staff_db
from db.settings import Settings
from db.staff import StaffAccount, StaffSession

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

SERVICES: web.AppKey[ConsoleServices] = web.AppKey("console_services", ConsoleServices)
SESSION: web.RequestKey[StaffSession] = web.RequestKey("console_session", StaffSession)
LOGIN_CSRF: web.RequestKey[str] = web.RequestKey("console_login_csrf", str)

PREFIX = "/console"
SESSION_COOKIE = "medbot_session"
LOGIN_COOKIE = "medbot_login"  # the login form's CSRF token, before there is a session
FLASH_COOKIE = "medbot_flash"
PUBLIC_PATHS = {f"{PREFIX}/login"}
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}

# Flash messages, by key: the key travels in a cookie, the text never does.
FLASHES = {
    "logged_in": "Đăng nhập thành công.",
    "logged_out": "Bạn đã đăng xuất.",
    "session_ended": "Phiên làm việc đã hết hạn. Vui lòng đăng nhập lại.",
    "verify_started": "Đã bắt đầu kiểm tra bài viết.",
    "verify_done": "Đã duyệt xong mọi câu của bài viết.",
    "verify_stopped": "Đã dừng kiểm tra. Các câu chưa duyệt vẫn có trong báo cáo.",
    "verify_ended": "Phiên kiểm tra này đã kết thúc.",
    "kb_saved": "Đã lưu thay đổi. Bot trả lời theo nội dung mới ngay từ bây giờ.",
    "kb_unchanged": "Không có gì thay đổi nên không cần lưu.",
    "kb_created": "Đã thêm mục mới vào kho kiến thức. Bot dùng mục này ngay từ bây giờ.",
    "kb_hidden": "Đã ẩn mục này: bot không dùng nó để trả lời nữa.",
    "kb_restored": "Đã hiện lại mục này: bot dùng lại nó để trả lời.",
    "kb_reverted": "Đã khôi phục phiên bản cũ. Bot trả lời theo nội dung này ngay từ bây giờ.",
    "kb_conflict": "Mục này vừa được người khác thay đổi; chưa có gì được khôi phục. Hãy xem lại lịch sử.",
    "kb_embed_failed": "Không xử lý được nội dung lúc này (mô hình tìm kiếm không phản hồi). Chưa có gì thay đổi.",
    "try_empty": "Hãy nhập một tin nhắn để thử.",
    "try_too_long": "Tin nhắn quá dài: tối đa 4000 ký tự.",
    "try_bad_role": "Chuyên khoa này không có trong phòng khám. Hãy chọn một chuyên khoa trong danh sách.",
    "try_new": "Đã bắt đầu cuộc thử mới.",
    "handoff_sent": "Đã gửi câu trả lời cho bệnh nhân.",
    "handoff_empty": "Hãy nhập nội dung trả lời.",
    "handoff_too_long": "Câu trả lời quá dài: tối đa 3500 ký tự. Hãy chia thành nhiều tin.",
    "handoff_not_open": "Yêu cầu hỗ trợ này đã kết thúc; tin nhắn chưa được gửi.",
    "handoff_closed": "Đã kết thúc hỗ trợ. Bệnh nhân đã được báo; từ giờ bot trả lời bệnh nhân như trước.",
}


def services(request: web.Request) -> ConsoleServices:
    return request.app[SERVICES]


def pool(request: web.Request) -> asyncpg.Pool:
    return services(request).pool


def settings(request: web.Request) -> Settings:
    return services(request).settings


def session(request: web.Request) -> StaffSession:
    return request[SESSION]


def staff(request: web.Request) -> StaffAccount:
    """The signed-in staff member (every page but the login page has one)."""
    return session(request).staff


def secure_cookies(request: web.Request) -> bool:
    return request.secure or (request.url.host or "").lower() not in LOOPBACK_HOSTS


def set_cookie(
    response: web.StreamResponse, request: web.Request, name: str, value: str, max_age: int | None = None
) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=PREFIX,
        httponly=True,
        samesite="Strict",
        secure=secure_cookies(request),
    )


def clear_cookie(response: web.StreamResponse, request: web.Request, name: str) -> None:
    response.del_cookie(name, path=PREFIX, secure=secure_cookies(request), httponly=True, samesite="Strict")


def redirect(request: web.Request, path: str, flash: str | None = None) -> web.HTTPSeeOther:
    """A 303 to ``path`` (under /console), with the flash message ``flash`` (a key of FLASHES) for the next page."""
    response = web.HTTPSeeOther(path)
    if flash is not None:
        assert flash in FLASHES, flash
        set_cookie(response, request, FLASH_COOKIE, flash, max_age=60)
    return response


async def render(
    request: web.Request, template: str, context: dict[str, Any] | None = None, *, status: int = 200
) -> web.Response:
    """``template`` with ``context`` and the base page's values; a pending flash message is shown once."""
    current: StaffSession | None = request.get(SESSION)
    flash = FLASHES.get(request.cookies.get(FLASH_COOKIE, ""))
    base = {
        "clinic_name": settings(request).clinic.name or "MedBot VN",
        "staff": current.staff if current else None,
        "csrf_token": current.csrf_token if current else request.get(LOGIN_CSRF, ""),
        "flash": flash,
        "path": request.path,
        # the menu's "Hỗ trợ trực tiếp (n)": open handoffs waiting for a staff reply
        "waiting_handoffs": await handoffs_db.waiting_count(pool(request)) if current else 0,
    }
    response = aiohttp_jinja2.render_template(template, request, {**base, **(context or {})}, status=status)
    if FLASH_COOKIE in request.cookies:
        clear_cookie(response, request, FLASH_COOKIE)
    return response


async def forbidden(request: web.Request) -> web.Response:
    return await render(request, "forbidden.html", status=403)


def requires(*roles: str) -> Callable[[Handler], Handler]:
    """Let only staff with one of ``roles`` through; others get the 403 page."""
    unknown = set(roles) - set(staff_db.ROLES)
    assert not unknown, f"unknown staff roles: {unknown}"

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def checked(request: web.Request) -> web.StreamResponse:
            if staff(request).role not in roles:
                return await forbidden(request)
            return await handler(request)

        return checked

    return decorate


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(f"{PREFIX}/static/")


@web.middleware
async def session_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    token = request.cookies.get(SESSION_COOKIE, "")
    current = await staff_db.session_for(pool(request), token) if token else None
    if current is not None:
        request[SESSION] = current
    elif not _public(request.path):
        target = redirect(request, f"{PREFIX}/login", "session_ended" if token else None)
        if token:
            clear_cookie(target, request, SESSION_COOKIE)
        raise target
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers["Cache-Control"] = "no-store"
        raise
    if not request.path.startswith(f"{PREFIX}/static/"):
        response.headers["Cache-Control"] = "no-store"
    return response


@web.middleware
async def csrf_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.method == "POST":
        try:
            form = await request.post()
        except web.HTTPRequestEntityTooLarge:  # aiohttp's limit (client_max_size), before any handler
            return await render(request, "too_large.html", {"mb": upload_limit_mb(request)}, status=413)
        given = str(form.get("csrf_token", ""))
        current: StaffSession | None = request.get(SESSION)
        expected = current.csrf_token if current else request.cookies.get(LOGIN_COOKIE, "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            return await forbidden(request)
    return await handler(request)


def upload_limit_mb(request: web.Request, cap: int | None = None) -> int:
    """The largest form (a file included) the server accepts, in whole MB, at most ``cap`` bytes."""
    limit = request.client_max_size if cap is None else min(cap, request.client_max_size)
    return max(1, limit // (1024 * 1024))


def login_csrf(request: web.Request) -> str:
    """The login form's CSRF token: the browser's current one, or a new one (set by :func:`keep_login_csrf`)."""
    token = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(32)
    request[LOGIN_CSRF] = token
    return token


def keep_login_csrf(response: web.StreamResponse, request: web.Request) -> None:
    set_cookie(response, request, LOGIN_COOKIE, request[LOGIN_CSRF], max_age=3600)
