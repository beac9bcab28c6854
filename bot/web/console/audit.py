"""``GET /console/audit`` (admins only): the console's audit log, newest first — who signed in and out and,
as pages are added, who viewed what."""

from __future__ import annotations

from aiohttp import web

from bot.web.console import security
from bot.web.console.security import requires
from db import staff as staff_db

routes = web.RouteTableDef()

ACTIONS = {
    "login": "Đăng nhập",
    "logout": "Đăng xuất",
    "view_conversation": "Xem cuộc trò chuyện",
    "verify_article": "Kiểm tra bài viết",
    "kb_edit": "Sửa mục kiến thức",
    "kb_create": "Thêm mục kiến thức",
    "kb_hide": "Ẩn mục kiến thức",
    "kb_restore": "Hiện lại mục kiến thức",
    "kb_revert": "Khôi phục phiên bản mục kiến thức",
    "kb_import_check": "Kiểm tra thử tệp nhập",
    "kb_import": "Nhập bảng tính",
    "kb_undo": "Hoàn tác lần nhập",
    "kb_export": "Xuất bảng tính",
    "view_unanswered": "Xem câu hỏi chưa trả lời",
    "handoff_reply": "Trả lời bệnh nhân (hỗ trợ trực tiếp)",
    "handoff_close": "Kết thúc hỗ trợ trực tiếp",
}


@routes.get("/audit")
@requires("admin")
async def audit_log(request: web.Request) -> web.Response:
    entries = await staff_db.recent_audit(security.pool(request), limit=200)
    return await security.render(request, "audit.html", {"entries": entries, "actions": ACTIONS})
