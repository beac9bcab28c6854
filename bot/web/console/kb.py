"""The KB, read-only, for every staff member: ``GET /console`` (home: each KB's entry counts, version and
last import), ``GET /console/kb?role=…&q=…&status=…&page=…`` (search one role's KB — the entries the bot
uses, the hidden ones (greyed) or both; without ``q`` the newest entries first) and ``GET /console/kb/{id}`` (one entry with every field).

A role's first page of entries in use (no search) ends with the entries that may say the same thing
(``kb_import.duplicates``: stored vectors nearly the same), each linked to its page so a doctor can merge them
or hide one; the search is capped in time (``DUPLICATES_TIMEOUT_S``), past which the page says so."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from bot.web.console import security
from db import kb_browse
from db.kb_duplicates import NearDuplicates
from engine import fold_plain, load_roles
from engine.embedding import EmbeddingUnavailable, model_name
from kb_import import duplicates

routes = web.RouteTableDef()
PAGE_SIZE = 20
DUPLICATES_SHOWN = 50  # near-duplicate pairs listed on a role's page, most similar first (with the total)
DUPLICATES_TIMEOUT_S = 10.0  # a clinic's KB takes milliseconds; faq-val's 12.5k entries 3.8 s


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
    found: NearDuplicates | None = None
    unfinished = False
    if role and not q and page == 1 and status == "active":
        found = await _duplicates(request, role)
        unfinished = found is None
    context = {
        "kbs": known,
        "role": role,
        "q": q,
        "status": status,
        "rows": rows,
        "total": total,
        "page": page,
        "pages": pages,
        "duplicates": found if found is not None and found.total else None,
        "dup_unfinished": unfinished,
    }
    return await security.render(request, "kb_list.html", context)


async def _duplicates(request: web.Request, role: str) -> NearDuplicates | None:
    """The role's entries that may say the same thing (empty without an embedder); None: not found in time."""
    try:
        model = await model_name(security.services(request).embedder)
    except EmbeddingUnavailable:
        return NearDuplicates()  # no vectors can be compared: nothing to show, nothing to apologise for
    return await duplicates.of_role(
        security.pool(request), role, model, limit=DUPLICATES_SHOWN, timeout_s=DUPLICATES_TIMEOUT_S
    )


@routes.get("/kb/{id:\\d+}")
async def entry(request: web.Request) -> web.Response:
    found = await kb_browse.entry(security.pool(request), int(request.match_info["id"]))
    if found is None:
        return await security.render(request, "not_found.html", status=404)
    labels = {k.key: k.label for k in kbs()}
    return await security.render(request, "kb_entry.html", {"e": found, "kb_label": labels.get(found.role)})
