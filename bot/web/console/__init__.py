"""The clinic console (``/console``): an aiohttp sub-application, one module per feature, each with its own
``routes`` table (``auth``, ``kb``, ``kb_edit``, ``audit``, ``conversations``, ``handoffs``, ``verify``, ``imports``,
``quality``), assembled by :func:`console_app`. How to add a page: docs/console.md."""

from __future__ import annotations

from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import web

from bot.web.console import audit, auth, conversations, handoffs, imports, kb, kb_edit, quality, verify
from bot.web.console.security import SERVICES, csrf_middleware, session_middleware
from bot.web.console.services import ConsoleServices

WEB_DIR = Path(__file__).resolve().parent.parent
TEMPLATES = WEB_DIR / "templates"
STATIC = WEB_DIR / "static"

# Every feature's routes; a new page's module adds its table here.
ROUTES = [
    auth.routes,
    kb.routes,
    kb_edit.routes,
    audit.routes,
    conversations.routes,
    handoffs.routes,
    verify.routes,
    imports.routes,
    quality.routes,
]


def console_app(services: ConsoleServices) -> web.Application:
    """The console as a sub-application, to be mounted at ``/console`` (``bot.web.app.add_console``)."""
    app = web.Application(middlewares=[session_middleware, imports.upload_limit_middleware, csrf_middleware])
    app[SERVICES] = services
    aiohttp_jinja2.setup(
        app,
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        default_helpers=False,
    )
    for table in ROUTES:
        app.router.add_routes(table)
    app.router.add_static("/static", STATIC)
    return app
