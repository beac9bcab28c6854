"""A thin client for the Zalo OA OpenAPI v3 (consultation messages), over ``httpx.AsyncClient``.

* ``POST {ZALO_API_BASE}/v3.0/oa/message/cs`` with the header ``access_token`` and the body
  ``{"recipient": {"user_id": ...}, "message": {...}}``. Zalo answers HTTP 200 with ``{"error": 0,
  "message": "Success", "data": {"message_id": ..., "user_id": ...}}`` or an ``error`` code ≠ 0.
* Text: ``message.text`` is at most 2,000 characters, so longer texts go out as several messages, split on
  paragraph boundaries (then lines, sentences, words) by :func:`split_text`.
* Buttons: the documented "consultation message with buttons" shape — ``message.text`` plus
  ``message.attachment = {"type": "template", "payload": {"buttons": [...]}}`` (no ``template_type``; the
  ``list`` template is for element cards with images). Each button is ``{"title", "type": "oa.query.hide",
  "payload"}``: tapping it sends ``payload`` back to the OA as a ``user_send_text`` event whose text is the
  payload, hidden in the user's chat. At most 5 buttons, titles at most 100 characters, payloads at most
  1,000.
* Errors: -216 (invalid access token) → refresh the token (``ZaloTokens.refresh`` with the rejected token,
  so concurrent senders refresh once) and resend once; 230 / -230 (the user has not interacted with the OA in
  the last 7 days, consultation messages are refused) → :class:`ZaloUserUnreachable`; anything else →
  :class:`ZaloAPIError` with Zalo's code and message.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx

from bot.splitting import PARAGRAPH, split_message
from bot.zalo.tokens import ZaloAuthError, ZaloTokens

log = logging.getLogger("medbot.zalo.client")

TEXT_LIMIT = 2000
MAX_BUTTONS = 5
TITLE_LIMIT = 100
PAYLOAD_LIMIT = 1000
INVALID_TOKEN = -216
UNREACHABLE = {230, -230}
TIMEOUT = httpx.Timeout(20.0, connect=5.0)

Recipient = dict[str, str]


class ZaloAPIError(RuntimeError):
    """Zalo refused a message (``code`` is Zalo's error code, None for transport errors)."""

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(f"Zalo error {code}: {message}")
        self.code = code
        self.message = message


class ZaloUserUnreachable(ZaloAPIError):
    """Error 230: the user has not interacted with the OA for 7 days; stop sending until they write again."""


@dataclass(frozen=True, slots=True)
class Button:
    title: str
    payload: str

    def as_zalo(self) -> dict[str, str]:
        title = self.title if len(self.title) <= TITLE_LIMIT else self.title[: TITLE_LIMIT - 1].rstrip() + "…"
        return {"title": title, "type": "oa.query.hide", "payload": self.payload[:PAYLOAD_LIMIT]}


def split_text(text: str, limit: int = TEXT_LIMIT) -> list[str]:
    """Split a message into chunks of at most ``limit`` characters on paragraph, line, sentence or word
    boundaries; no chunk is empty."""
    return split_message(text, limit, [PARAGRAPH, "\n", r"[.!?…]\s", r"\s"]) or [""]


class ZaloClient:
    def __init__(self, tokens: ZaloTokens, base_url: str, http: httpx.AsyncClient | None = None) -> None:
        self.tokens = tokens
        self.base_url = base_url.rstrip("/")
        self.http = http or httpx.AsyncClient(timeout=TIMEOUT)
        self._own_http = http is None

    async def close(self) -> None:
        if self._own_http:
            await self.http.aclose()

    async def send_text(self, recipient: Recipient, text: str) -> list[str]:
        """Send a text, split at 2,000 characters; the Zalo message ids."""
        return [await self.send_message(recipient, {"text": chunk}) for chunk in split_text(text)]

    async def send_answer(self, recipient: Recipient, text: str, buttons: list[Button]) -> list[str]:
        """A long text as several messages, the buttons attached to the last one."""
        chunks = split_text(text)
        ids = [await self.send_message(recipient, {"text": chunk}) for chunk in chunks[:-1]]
        if buttons:
            ids.append(await self.send_buttons(recipient, chunks[-1], buttons))
        else:
            ids.append(await self.send_message(recipient, {"text": chunks[-1]}))
        return ids

    async def send_buttons(self, recipient: Recipient, text: str, buttons: list[Button]) -> str:
        """One message (text ≤ 2,000 characters) with at most 5 ``oa.query.hide`` buttons."""
        if len(buttons) > MAX_BUTTONS:
            raise ValueError(f"Zalo allows at most {MAX_BUTTONS} buttons, got {len(buttons)}")
        message = {
            "text": text[:TEXT_LIMIT],
            "attachment": {"type": "template", "payload": {"buttons": [b.as_zalo() for b in buttons]}},
        }
        return await self.send_message(recipient, message)

    async def send_message(self, recipient: Recipient, message: dict[str, Any]) -> str:
        """POST one message; on -216 refresh the token and resend once. Returns Zalo's message id."""
        payload = {"recipient": recipient, "message": message}
        try:
            token = await self.tokens.access_token()
        except ZaloAuthError as exc:
            raise ZaloAPIError(None, str(exc)) from exc
        body = await self._post(token, payload)
        if body.get("error") == INVALID_TOKEN:
            log.info("zalo.send.invalid_token action=refresh")
            try:
                outcome = await self.tokens.refresh(stale=token)
            except ZaloAuthError as exc:
                log.error("zalo.send.refresh_failed error=%s", exc)
                raise ZaloAPIError(INVALID_TOKEN, str(exc)) from exc
            body = await self._post(outcome.access_token, payload)
        code = body.get("error")
        if code == 0:
            data = body.get("data") or {}
            return str(data.get("message_id", ""))
        text = str(body.get("message", ""))
        if code in UNREACHABLE:
            raise ZaloUserUnreachable(code, text)
        raise ZaloAPIError(code if isinstance(code, int) else None, text or "unexpected answer")

    async def _post(self, token: str, payload: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/v3.0/oa/message/cs"
        try:
            response = await self.http.post(url, json=payload, headers={"access_token": token})
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ZaloAPIError(None, f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(body, dict):
            raise ZaloAPIError(None, f"unexpected answer (http {response.status_code})")
        return body
