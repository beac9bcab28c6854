"""The Zalo OA webhook: ``POST /zalo/webhook`` on the one aiohttp app of ``medbot run``.

Each request is verified before anything else: ``X-ZEvent-Signature`` must equal ``mac=`` + hex SHA-256
of ``ZALO_APP_ID`` + the raw body + the event's ``timestamp`` field + ``ZALO_OA_SECRET`` (plain SHA-256, not
HMAC; compared in constant time). The signature is checked on the raw bytes before any JSON parsing: the
timestamp it covers is read from the bytes (a ``"timestamp": "<digits>"`` member), so an unauthenticated
body is never parsed. Answers, in order: a body over ``MAX_BODY_BYTES`` → 413; no header, a wrong signature,
Zalo not configured → 401; a body with no timestamp to check, or a signed body that is not a JSON object
(including one nested too deep to parse) → 400. Nothing is stored in any of these cases.

Replays: an event whose ``timestamp`` (ms) is more than ``REPLAY_WINDOW_MS`` (5 minutes) away from now is
answered 200 and not processed (logged ``zalo.webhook.stale``): 200 so that Zalo does not retry it, while a
captured event cannot be replayed later, even after its ``msg_id`` left ``processed_updates``. Triage still
reads it: an emergency in a stale message gets the emergency answer (and nothing else).

Triage first: the text of a verified event goes through ``ChatService.guard`` before anything that needs the
database, so an emergency is answered even when PostgreSQL is down (a redelivery of it repeats the card: better
twice than never). Then the event is claimed on ``message.msg_id`` (``processed_updates``, channel
``zalo``; follow / unfollow on event + user + timestamp) with a lease renewed while it is handled
(``db.updates``, ``UPDATE_LEASE_SECONDS``), handled under the same per-chat advisory lock as Telegram
(``ChatService.chat_lock("zalo", user)``), marked done and answered 200 once the reply is stored and sent. A
redelivery of a done event → 200, dropped; of an event whose handler died (the lease ran out) → handled; of
one being handled right now → 503 (Zalo may try again), or 200 when it was an emergency whose card just went
out. Events the bot does not act on (the OA's own messages echoed back, "seen", "received", …) get 200
straight away. An unexpected error while handling is logged and the patient is told to try again
(``ZaloBot.handle``); the event is marked done, so a redelivery is not answered twice. Only an error before
anything could be sent (database down) is answered 500, with the claim released so that a redelivery is
processed.

Within the replay window a captured, correctly signed event can only be replayed with its own ``msg_id``,
which is dropped as a duplicate (``processed_updates``).

Bounded concurrency: at most ``ZALO_CONCURRENCY`` events (default 8) are handled at once per process — claim,
chat lock, answer — and the others wait for a slot (``ZaloChannel.slots``) *after* triage, so an emergency's
answer never waits. Each event being handled holds one pool connection for its chat lock and borrows
another now and then for the engine's short queries, so the pool is sized ``pool_share`` (two per slot)
plus a reserve (``serve``; ``bot/telegram/app.py`` adds the share to Telegram's pool when both run in one
process), and the slots never exceed half the pool they are given. Without the bound, a burst of events
from more users than the pool has connections left every connection held by a chat lock whose handler
waited for one more: the process stopped answering (``bench/bench_zalo_burst.py`` measures a burst of 200).

Mounting (``bot/main.py``): with Telegram configured, call :func:`zalo_routes` on the Telegram webhook app
when :func:`bot.zalo.zalo_configured` is true; with Zalo alone, serve :func:`build_app` (``/zalo/webhook`` and
``GET /healthz``) on ``PORT``, e.g. with :func:`serve`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.runtime import Runtime
from bot.service import ChatService, Emergency
from bot.web.app import add_console
from bot.web.console.services import ConsoleServices
from bot.zalo import CHANNEL
from bot.zalo.bot import Incoming, ZaloBot, dedupe_key, parse_event
from bot.zalo.client import ZaloClient
from bot.zalo.tokens import ZaloTokens
from db import updates
from db.settings import Settings
from db.updates import Claim, UpdateClaim
from engine import triage

log = logging.getLogger("medbot.zalo.webhook")

POOL_RESERVE = 2  # connections beyond the handlers': emergency role lookups, /healthz, the token refresh

PATH = "/zalo/webhook"
SIGNATURE_HEADER = "X-ZEvent-Signature"


def sign(app_id: str, body: bytes, timestamp: str, secret: str) -> str:
    """The ``X-ZEvent-Signature`` value Zalo sends for an event."""
    digest = hashlib.sha256(app_id.encode() + body + timestamp.encode() + secret.encode()).hexdigest()
    return f"mac={digest}"


MAX_BODY_BYTES = 256 * 1024  # a real event is a few KB (texts are capped at 2,000 characters)
REPLAY_WINDOW_MS = 5 * 60 * 1000
_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"?(\d{1,20})(?=["\s,}])')
_MAX_TIMESTAMPS = 4  # candidates tried against the signature (the event's own one comes first in practice)


class Rejected(Exception):
    """A webhook request that is answered ``status`` and not processed."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def authenticate(settings: Settings, body: bytes, header: str | None) -> dict[str, Any]:
    """The event, once its signature is right; raises :class:`Rejected` (401 or 400) otherwise.

    The signature is checked on the raw bytes first: JSON is parsed only for a body Zalo signed."""
    if not header or not settings.zalo_app_id or settings.zalo_oa_secret is None:
        raise Rejected(401, "signature")
    secret = settings.zalo_oa_secret.get_secret_value()
    given = header.strip().encode()
    stamps = [m.group(1).decode() for m in _TIMESTAMP.finditer(body)][:_MAX_TIMESTAMPS]
    if not stamps:
        raise Rejected(400, "no_timestamp")
    app_id = settings.zalo_app_id
    signed = [ts for ts in stamps if hmac.compare_digest(sign(app_id, body, ts, secret).encode(), given)]
    if not signed:
        raise Rejected(401, "signature")
    try:
        event = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser goes
        raise Rejected(400, "json") from None
    if not isinstance(event, dict):
        raise Rejected(400, "not_object")
    if str(event.get("timestamp")) not in signed:
        raise Rejected(401, "signature")  # what was signed is not the event's own timestamp
    return event


def verify(settings: Settings, body: bytes, header: str | None) -> dict[str, Any] | None:
    """The event when the signature is right, else None."""
    try:
        return authenticate(settings, body, header)
    except Rejected:
        return None


def is_stale(event: dict[str, Any], now_ms: int | None = None) -> bool:
    """True when the event's ``timestamp`` (ms) is outside the replay window around now."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    try:
        return abs(now - int(str(event.get("timestamp")))) > REPLAY_WINDOW_MS
    except ValueError:
        return True


async def read_body(request: web.Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request body, or :class:`Rejected` (413) as soon as it is larger than ``limit``."""
    if request.content_length is not None and request.content_length > limit:
        raise Rejected(413, "too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            raise Rejected(413, "too_large")
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass
class ZaloChannel:
    """What the webhook needs, built once per process."""

    service: ChatService
    settings: Settings
    tokens: ZaloTokens
    client: ZaloClient
    bot: ZaloBot
    slots: asyncio.Semaphore  # events handled at once (after triage)

    async def close(self) -> None:
        await self.client.close()
        await self.tokens.close()


CHANNEL_KEY: web.AppKey[ZaloChannel] = web.AppKey("zalo_channel", ZaloChannel)


def pool_share(settings: Settings) -> int:
    """Pool connections the Zalo channel needs: one held by each slot's chat lock, one beside it for the
    engine's short queries."""
    return 2 * settings.zalo_concurrency


def handling_slots(settings: Settings, pool_size: int) -> int:
    """``ZALO_CONCURRENCY``, but at most half of a pool of ``pool_size`` (a smaller pool than ``pool_share``
    must still leave every lock holder a connection for its queries)."""
    slots = max(1, min(settings.zalo_concurrency, pool_size // 2))
    if slots < settings.zalo_concurrency:
        log.warning(
            "zalo.concurrency_capped wanted=%d slots=%d pool=%d", settings.zalo_concurrency, slots, pool_size
        )
    return slots


async def build_channel(runtime: Runtime, service: ChatService) -> ZaloChannel:
    """Tokens (seeded from the environment on first start), the OpenAPI client and the channel logic."""
    settings = runtime.settings
    if not settings.zalo_app_id or settings.zalo_oa_secret is None:
        log.warning("zalo.not_configured missing=ZALO_APP_ID/ZALO_OA_SECRET: every webhook call gets 401")
    tokens = ZaloTokens(runtime.pool, settings)
    await tokens.seed()
    client = ZaloClient(tokens, settings.zalo_api_base)
    slots = asyncio.Semaphore(handling_slots(settings, runtime.pool.get_max_size()))
    return ZaloChannel(service, settings, tokens, client, ZaloBot(service, client, settings), slots)


async def handle_webhook(request: web.Request) -> web.Response:
    channel = request.app[CHANNEL_KEY]
    try:
        body = await read_body(request)
        event = authenticate(channel.settings, body, request.headers.get(SIGNATURE_HEADER))
    except Rejected as rejected:
        log.warning("zalo.webhook.rejected status=%d reason=%s remote=%s", rejected.status, rejected.reason,
                    request.remote)  # fmt: skip
        error = "invalid signature" if rejected.status == 401 else "bad request"
        return web.json_response({"ok": False, "error": error}, status=rejected.status)
    incoming = parse_event(event)
    if is_stale(event):
        log.warning("zalo.webhook.stale event=%s timestamp=%s remote=%s", event.get("event_name"),
                    event.get("timestamp"), request.remote)  # fmt: skip
        await alarm_only(channel, incoming)
        return web.json_response({"ok": True, "ignored": "stale"})
    if incoming is None:
        log.debug("zalo.webhook.ignored event=%s", event.get("event_name"))
        return web.json_response({"ok": True})
    key = dedupe_key(incoming, event)
    pool = channel.service.pool
    lease = channel.settings.update_lease_seconds
    held: UpdateClaim | None = None
    carded = False

    async def handle(emergency: Emergency | None) -> None:
        nonlocal held, carded
        carded = emergency is not None and emergency.delivered
        async with channel.slots:  # after triage: an emergency's answer has gone out already
            if key is None:
                async with channel.service.chat_lock(CHANNEL, incoming.external_id):
                    await channel.bot.handle(incoming, emergency)
                return
            held = await updates.claim(pool, CHANNEL, key, lease)
            if not held.ours:
                return
            if held.outcome is Claim.TAKEN_OVER:
                log.warning(
                    "zalo.webhook.taken_over event=%s (its handler stopped before answering)", incoming.event
                )
            async with (
                updates.keep_alive(pool, held, lease),
                channel.service.chat_lock(CHANNEL, incoming.external_id),
            ):
                await channel.bot.handle(incoming, emergency)

    async def deliver(answer: str) -> None:
        await channel.client.send_text(incoming.recipient, answer)

    try:
        # Triage first, before the dedupe claim and the lock: an emergency is answered from the text alone.
        await channel.service.guard(CHANNEL, incoming.external_id, incoming.text, deliver, handle)
    except Exception:
        # Only failures before the user could be told anything get here (e.g. the database is down):
        # forget the event so a redelivery is handled, and let Zalo see the error.
        log.exception("zalo.webhook.failed event=%s", incoming.event)
        if held is not None and held.ours:
            try:
                await updates.release(pool, held)
            except Exception:
                log.exception("zalo.webhook.release_failed")
        return web.json_response({"ok": False}, status=500)
    if held is not None and held.outcome is Claim.DONE:
        log.info("zalo.webhook.duplicate event=%s", incoming.event)
        return web.json_response({"ok": True, "duplicate": True})
    if held is not None and held.outcome is Claim.BUSY:
        log.info("zalo.webhook.in_progress event=%s carded=%s", incoming.event, carded)
        if carded:  # the sender has the emergency answer; the live handler records the rest
            return web.json_response({"ok": True, "in_progress": True})
        return web.json_response({"ok": False, "error": "in progress"}, status=503)
    if held is not None:
        try:
            await updates.done(pool, held)
        except Exception as exc:  # answered all the same; the claim's lease runs out
            log.warning("zalo.webhook.done_failed event=%s error=%r", incoming.event, exc)
    return web.json_response({"ok": True})


async def alarm_only(channel: ZaloChannel, incoming: Incoming | None) -> None:
    """A stale event is not handled, but an emergency in it still gets the emergency answer: a late genuine
    message may be someone in danger, and a replayed one can only repeat a card to its own sender."""
    if incoming is None or not incoming.text:
        return
    verdict = triage.triage(incoming.text)
    if not verdict.is_emergency:
        return
    log.warning("zalo.webhook.stale_emergency categories=%s", ",".join(verdict.categories))
    try:
        await channel.client.send_text(incoming.recipient, channel.service.emergency_text(verdict))
    except Exception:
        log.exception("zalo.webhook.stale_emergency_send_failed")


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


def zalo_routes(app: web.Application, channel: ZaloChannel, *, close_on_cleanup: bool = True) -> None:
    """Add ``POST /zalo/webhook`` to ``app`` (the Telegram webhook app, or :func:`build_app`'s)."""
    app[CHANNEL_KEY] = channel
    app.router.add_post(PATH, handle_webhook)
    if close_on_cleanup:

        async def _close(_: web.Application) -> None:
            await channel.close()

        app.on_cleanup.append(_close)


async def build_app(
    runtime: Runtime, service: ChatService, console: ConsoleServices, *, channel: ZaloChannel | None = None
) -> web.Application:
    """A Zalo-only app: ``POST /zalo/webhook``, ``GET /healthz`` and the clinic console (for a clinic without
    Telegram); ``channel``: one built already (``build_channel``), else a new one."""
    app = web.Application()
    zalo_routes(app, channel or await build_channel(runtime, service))
    app.router.add_get("/healthz", healthz)
    add_console(app, console)
    return app


def pool_size(settings: Settings) -> int:
    """Connections ``medbot run`` opens when it serves Zalo alone."""
    return pool_share(settings) + POOL_RESERVE


async def serve(
    runtime: Runtime, service: ChatService, console: ConsoleServices, *, channel: ZaloChannel | None = None
) -> int:
    """``medbot run`` with Zalo alone: serve :func:`build_app` on ``PORT`` until cancelled (the caller owns
    the runtime)."""
    runner = web.AppRunner(await build_app(runtime, service, console, channel=channel))
    try:
        await runner.setup()
        await web.TCPSite(runner, "0.0.0.0", runtime.settings.port).start()
        log.info("zalo.serving port=%d path=%s", runtime.settings.port, PATH)
        await asyncio.Event().wait()
        return 0
    finally:
        await runner.cleanup()
