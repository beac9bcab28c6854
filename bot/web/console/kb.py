"""The KB, read-only, for every staff member: ``GET /console`` (home: each KB's entry counts, version and
last import), ``GET /console/kb?role=…&q=…&status=…&page=…`` (search one role's KB — the entries the bot
uses, the hidden ones (greyed) or both; without ``q`` the newest entries first) and ``GET /console/kb/{id}`` (one entry with every field)."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from bot.web.console import security
from db import kb_browse
from engine import fold_plain, load_roles

routes = web.RouteTableDef()
PAGE_SIZE = 20


@dataclass(frozen=True, slots=True)
class KB:
    key: str  # the KB's role id (kb_entries.role)
    label: str


def kbs() -> list[KB]:
    """The clinic's KBs, one per KB role (roles sharing a KB list it once), in the roles file's order."""
    seen: dict[str, KB] = {}
    for role in load_roles().values():
        if role.kb not in seen:
            seen[role.kb] = KB(role.kb, role.label)
    return list(seen.values())


@routes.get("")
@routes.get("/")
async def home(request: web.Request) -> web.Response:
    known = kbs()
    summaries = await kb_browse.role_summaries(security.pool(request), [k.key for k in known])
    return await security.render(request, "home.html", {"rows": list(zip(known, summaries, strict=True))})


def _page(request: web.Request) -> int:
    try:
        return max(1, int(request.query.get("page", "1")))
    except ValueError:
        return 1


@routes.get("/kb")
async def search(request: web.Request) -> web.Response:
    known = kbs()
    keys = [k.key for k in known]
    role = request.query.get("role", "")
    if role not in keys:
        role = keys[0] if keys else ""
    q = request.query.get("q", "").strip()[:200]
    page = _page(request)
    status = request.query.get("status", "active")
    if status not in kb_browse.STATUSES:
        status = "active"
    words = fold_plain(q).split()
    rows, total = await kb_browse.search(
        security.pool(request), role, words, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE, status=status
    )
    pages = max(1, -(-total // PAGE_SIZE))
    context = {
        "kbs": known,
        "role": role,
        "q": q,
        "status": status,
        "rows": rows,
        "total": total,
        "page": page,
        "pages": pages,
    }
    return await security.render(request, "kb_list.html", context)


@routes.get("/kb/{id:\\d+}")
async def entry(request: web.Request) -> web.Response:
    found = await kb_browse.entry(security.pool(request), int(request.match_info["id"]))
    if found is None:
        return await security.render(request, "not_found.html", status=404)
    labels = {k.key: k.label for k in kbs()}
    return await security.render(request, "kb_entry.html", {"e": found, "kb_label": labels.get(found.role)})
