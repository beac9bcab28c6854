"""A local Zalo OpenAPI for tests: real HTTP (aiohttp on 127.0.0.1, random port), the real request shapes.

* ``POST /v3.0/oa/message/cs`` — header ``access_token``; checks the token (-216 when it is not the current
  one), validates the message like Zalo documents it (text ≤ 2,000; attachment template with ≤ 5 buttons,
  titles ≤ 100, known button types; else -201) and records it in ``messages``.
* ``POST /v4/oa/access_token`` (OAuth v4) — form ``refresh_token``, ``app_id``, ``grant_type`` and header
  ``secret_key``; the refresh token is single-use (a spent one gets error -14014), each success issues a new
  pair and counts in ``refresh_calls``.

Scriptable: :meth:`FakeZalo.fail_next` queues error codes for the next sends (optionally to one user only,
e.g. 230), :meth:`FakeZalo.revoke_access_token` makes the current access token invalid (-216),
``refresh_delay`` widens the window of a refresh to provoke races. Waiting uses an ``asyncio.Condition``
(:meth:`wait_for_messages`), never sleeps.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from testkit.fakes.local_http import serve

BUTTON_TYPES = {"oa.open.url", "oa.query.show", "oa.query.hide", "oa.open.sms", "oa.open.phone"}


@dataclass
class Sent:
    """One accepted message."""

    recipient: dict[str, Any]
    message: dict[str, Any]
    token: str

    @property
    def user_id(self) -> str:
        return str(self.recipient.get("user_id") or self.recipient.get("anonymous_id") or "")

    @property
    def text(self) -> str:
        return str(self.message.get("text", ""))

    @property
    def buttons(self) -> list[dict[str, Any]]:
        attachment = self.message.get("attachment") or {}
        return list((attachment.get("payload") or {}).get("buttons") or [])


@dataclass
class ScriptedError:
    code: int
    message: str
    user_id: str | None = None


@dataclass
class FakeZalo:
    app_id: str = "fake-app"
    app_secret: str = "fake-app-secret"
    access_token: str = "access-1"
    refresh_token: str = "refresh-1"
    expires_in: int = 90000
    refresh_delay: float = 0.0  # server-side latency of a refresh (to overlap concurrent refreshes)
    messages: list[Sent] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)  # every send request, accepted or not
    refresh_calls: int = 0
    refresh_errors: int = 0
    script: list[ScriptedError] = field(default_factory=list)
    base_url: str = ""

    def __post_init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._changed = asyncio.Condition()
        self._issued = 1

    # -- scripting -------------------------------------------------------------------------------------

    def fail_next(self, code: int, message: str = "scripted error", *, user_id: str | None = None) -> None:
        self.script.append(ScriptedError(code, message, user_id))

    def revoke_access_token(self) -> None:
        """The access token the bot holds stops working (as when it expired)."""
        self.access_token = f"revoked-{self._issued}"

    def to(self, user_id: str) -> list[Sent]:
        return [m for m in self.messages if m.user_id == user_id]

    async def wait_for_messages(
        self, count: int, user_id: str | None = None, within: float = 30.0
    ) -> list[Sent]:
        """Wait until at least ``count`` messages were accepted (for ``user_id``), then return them."""

        def enough() -> bool:
            return len(self.to(user_id) if user_id else self.messages) >= count

        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(enough)
        return self.to(user_id) if user_id else list(self.messages)

    # -- protocol --------------------------------------------------------------------------------------

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _send(self, request: web.Request) -> web.Response:
        token = request.headers.get("access_token", "")
        body = await request.json()
        self.attempts.append(body)
        try:
            if token != self.access_token:
                return web.json_response({"error": -216, "message": "Access token is invalid"})
            recipient = body.get("recipient") or {}
            message = body.get("message") or {}
            uid = str(recipient.get("user_id") or recipient.get("anonymous_id") or "")
            if not uid:
                return web.json_response({"error": -201, "message": "recipient is missing"})
            for i, err in enumerate(self.script):
                if err.user_id in (None, uid):
                    del self.script[i]
                    return web.json_response({"error": err.code, "message": err.message})
            problem = _validate(message)
            if problem:
                return web.json_response({"error": -201, "message": problem})
            self.messages.append(Sent(recipient, message, token))
            return web.json_response(
                {
                    "error": 0,
                    "message": "Success",
                    "data": {"message_id": f"msg-{len(self.messages)}", "user_id": uid},
                }
            )
        finally:
            await self._notify()

    async def _oauth(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.refresh_calls += 1
        if self.refresh_delay:
            await asyncio.sleep(self.refresh_delay)  # server latency, not synchronisation
        if request.headers.get("secret_key") != self.app_secret or form.get("app_id") != self.app_id:
            self.refresh_errors += 1
            return web.json_response(
                {"error": -14002, "error_name": "Invalid app", "error_description": "bad secret"}
            )
        if form.get("grant_type") != "refresh_token" or form.get("refresh_token") != self.refresh_token:
            self.refresh_errors += 1
            return web.json_response(
                {
                    "error": -14014,
                    "error_name": "Invalid refresh token",
                    "error_description": "Refresh token is invalid",
                }
            )
        self._issued += 1
        self.access_token = f"access-{self._issued}"
        self.refresh_token = f"refresh-{self._issued}"
        return web.json_response(
            {
                "access_token": self.access_token,
                "refresh_token": self.refresh_token,
                "expires_in": str(self.expires_in),
            }
        )

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v3.0/oa/message/cs", self._send)
        app.router.add_post("/v4/oa/access_token", self._oauth)
        self._runner, self.base_url = await serve(app)
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def _validate(message: dict[str, Any]) -> str | None:
    """What Zalo would refuse in a consultation message (None when it is fine)."""
    text = message.get("text")
    attachment = message.get("attachment")
    if text is None and attachment is None:
        return "message.text or message.attachment is required"
    if text is not None and (not isinstance(text, str) or not 0 < len(text) <= 2000):
        return "message.text must be 1..2000 characters"
    if attachment is not None:
        if attachment.get("type") != "template":
            return "attachment.type must be template"
        buttons = (attachment.get("payload") or {}).get("buttons")
        if not isinstance(buttons, list) or not 1 <= len(buttons) <= 5:
            return "payload.buttons must hold 1..5 buttons"
        for b in buttons:
            if b.get("type") not in BUTTON_TYPES:
                return f"unknown button type {b.get('type')!r}"
            if not b.get("title") or len(b["title"]) > 100:
                return "button title must be 1..100 characters"
            if b["type"].startswith("oa.query") and (
                not isinstance(b.get("payload"), str) or len(b["payload"]) > 1000
            ):
                return "query button payload must be a string of at most 1000 characters"
    return None
