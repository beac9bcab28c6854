"""A fake Telegram Bot API server for end-to-end tests (aiohttp, real HTTP on 127.0.0.1, random port).

The bot under test is pointed at it with ``TELEGRAM_API_BASE``; aiogram then talks to it exactly as to
api.telegram.org. It implements the methods the bot uses and checks what Telegram checks:

- callback data at most 64 bytes, at most 100 buttons; message text 1–4096 characters *after entity
  parsing* (HTML tags stripped, entities decoded, counted in UTF-16 code units as Telegram does);
- HTML parse errors (unknown or unbalanced tags, a bare ``&`` or ``<``) → 400 "can't parse entities";
- identical edits → 400 "message is not modified";
- callback queries the bot never answered are tracked (``unanswered_callbacks``);
- injected 429s with ``retry_after``; uploaded documents served through getFile + file download.

Updates reach the bot either through ``getUpdates`` (long polling) or as webhooks with the
``X-Telegram-Bot-Api-Secret-Token`` header, delivered one update per chat at a time (the next update of a
chat waits for the previous one's HTTP 200) while different chats are delivered concurrently. With several
``webhook_targets`` the fake acts as a load balancer, alternating between them.

Forum supergroups (the staff handoff): ``add_forum`` makes a supergroup with topics where the bot is an admin
allowed to manage topics (or not: ``bot_admin=False``); ``getChat``, ``getChatMember``, ``createForumTopic``
and ``deleteForumTopic`` behave as Telegram's, a ``sendMessage`` with ``message_thread_id`` goes into that
topic (400 "message thread not found" for an unknown one), and ``send_group_text`` posts a member's message
(in a topic: ``message_thread_id`` and ``is_topic_message``, as Telegram sends them).

Driving API for tests: ``send_text``, ``send_command``, ``send_document``, ``send_sticker``, ``tap``,
``deliver`` (a raw update, e.g. twice), ``wait_for_messages``, ``wait_for``; sent messages are kept per
chat (``messages[chat_id]``) with their ``reply_markup`` and edit history. Synchronisation uses an
``asyncio.Condition`` — no sleeps.
"""

# ruff: noqa: ASYNC109  (the driving API takes timeouts by design: wait_for_messages(chat, n, timeout))
from __future__ import annotations

import asyncio
import html
import itertools
import json
import re
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from testkit.fakes.local_http import serve

ALLOWED_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
    "tg-spoiler", "span", "blockquote", "tg-emoji",
}  # fmt: skip
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^<>]*)?)\s*>")
_ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
BOT_USER = {"id": 123, "is_bot": True, "first_name": "MedBot VN", "username": "medbot_vn_bot"}


@dataclass
class Hold:
    """A call of ``method`` the fake keeps mid-flight: ``arrived`` is set when it comes in, and the fake takes
    it (records, answers) only once ``release`` is set. A client killed meanwhile never got an answer, and,
    while ``release`` stays unset, Telegram never saw the call."""

    method: str
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


class ApiError(Exception):
    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parse_html(text: str) -> str:
    """The plain text Telegram would show for an HTML-formatted message; ApiError when it cannot parse."""
    out: list[str] = []
    stack: list[str] = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch == "<":
            m = _TAG.match(text, pos)
            if not m:
                raise ApiError(
                    400, f"Bad Request: can't parse entities: unsupported start tag at byte offset {pos}"
                )
            closing, name = m.group(1), m.group(2).lower()
            if name not in ALLOWED_TAGS:
                raise ApiError(400, f'Bad Request: can\'t parse entities: unsupported start tag "{name}"')
            if closing:
                if not stack or stack[-1] != name:
                    raise ApiError(400, f'Bad Request: can\'t parse entities: unmatched end tag "{name}"')
                stack.pop()
            else:
                stack.append(name)
            pos = m.end()
        elif ch == "&":
            m = _ENTITY.match(text, pos)
            if not m:
                raise ApiError(
                    400, f"Bad Request: can't parse entities: can't find end of entity at offset {pos}"
                )
            out.append(html.unescape(m.group(0)))
            pos = m.end()
        elif ch == ">":
            out.append(">")
            pos += 1
        else:
            out.append(ch)
            pos += 1
    if stack:
        raise ApiError(
            400, f"Bad Request: can't parse entities: can't find end tag corresponding to \"{stack[-1]}\""
        )
    return "".join(out)


@dataclass
class SentMessage:
    """A message the bot sent (or a user message the fake injected, with ``from_bot=False``)."""

    chat_id: int
    message_id: int
    text: str = ""  # as sent (HTML when parse_mode is HTML)
    plain: str = ""  # what the user sees
    parse_mode: str | None = None
    reply_markup: dict[str, Any] | None = None
    kind: str = "text"  # text | photo | document
    file_bytes: bytes | None = None
    caption: str = ""
    edits: list[str] = field(default_factory=list)
    sent_at: float = field(default_factory=time.monotonic)
    thread_id: int | None = None  # the forum topic it was sent in
    chat_type: str = "private"

    @property
    def buttons(self) -> list[dict[str, Any]]:
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [b for row in rows for b in row]

    def button(self, startswith: str) -> dict[str, Any]:
        """The first inline button whose callback data starts with ``startswith``."""
        for b in self.buttons:
            if str(b.get("callback_data", "")).startswith(startswith):
                return b
        raise AssertionError(f"no button {startswith!r} in {self.buttons}")

    def as_api(self) -> dict[str, Any]:
        msg: dict[str, Any] = {
            "message_id": self.message_id,
            "date": int(time.time()),
            "chat": {"id": self.chat_id, "type": self.chat_type},
            "from": BOT_USER,
        }
        if self.thread_id is not None:
            msg.update(message_thread_id=self.thread_id, is_topic_message=True)
        if self.kind == "text":
            msg["text"] = self.plain
        elif self.kind == "photo":
            msg["photo"] = [{"file_id": f"photo{self.message_id}", "file_unique_id": f"p{self.message_id}",
                             "width": 800, "height": 600}]  # fmt: skip
            msg["caption"] = self.caption
        else:
            msg["document"] = {"file_id": f"doc{self.message_id}", "file_unique_id": f"d{self.message_id}"}
            msg["caption"] = self.caption
        if self.reply_markup and "inline_keyboard" in self.reply_markup:  # Telegram returns only inline ones
            msg["reply_markup"] = self.reply_markup
        return msg


class FakeTelegram:
    """The fake Bot API server and the test's handle on it."""

    def __init__(self, token: str = "123:ABC", *, webhook_targets: list[str] | None = None) -> None:
        self.token = token
        self.webhook_targets = list(webhook_targets or [])
        self.webhook_url: str | None = None
        self.webhook_secret: str | None = None
        self.base_url = ""
        self.messages: dict[int, list[SentMessage]] = defaultdict(list)
        self.user_messages: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.errors: list[tuple[str, str]] = []
        self.commands: dict[str, list[dict[str, Any]]] = {}  # scope key → commands
        self.chat_actions: list[tuple[int, str]] = []
        self.unanswered_callbacks: dict[str, int] = {}  # callback query id → chat id
        self.callback_answers: dict[str, dict[str, Any]] = {}
        self.delivered: dict[int, int] = {}  # update_id → HTTP status of the (last) webhook delivery
        self.files: dict[str, tuple[bytes, str]] = {}
        self.blocked_chats: set[int] = set()  # users who blocked the bot: sends to them get 403
        # forum supergroups: chat id → {"title", "bot_admin", "topics": {thread id: name}}
        self.forums: dict[int, dict[str, Any]] = {}
        self.delivery_started: dict[int, float] = {}  # update_id → monotonic time of the first POST
        self._fail: deque[tuple[str, int, str, dict[str, Any] | None]] = deque()
        self._holds: list[Hold] = []
        self._ids = itertools.count(1)
        # Like Telegram's, update ids never repeat across fake instances sharing one database.
        self._update_ids = itertools.count(int(time.time() * 1000) % 1_000_000_000)
        self._message_ids: dict[int, itertools.count[int]] = defaultdict(lambda: itertools.count(1))
        self._cond = asyncio.Condition()
        self._updates: list[dict[str, Any]] = []  # for getUpdates
        self._chat_queues: dict[int, asyncio.Queue[dict[str, Any]]] = {}
        self._in_flight = 0  # webhook updates queued or being delivered (``settle``)
        self._chat_tasks: dict[int, asyncio.Task[None]] = {}
        self._rr = itertools.count()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    # ---------------------------------------------------------------- lifecycle
    async def start(self) -> str:
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.+}", self._file)
        self._runner, self.base_url = await serve(app, access_log=None, shutdown_timeout=0.5)
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        return self.base_url

    async def stop(self) -> None:
        for task in self._chat_tasks.values():
            task.cancel()
        await asyncio.gather(*self._chat_tasks.values(), return_exceptions=True)
        if self._session:
            await self._session.close()
        if self._runner:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def start_over(self) -> None:
        """Forget what earlier users of this fake did, as a fresh fake would (for a fake shared by tests):
        every chat's history, the users' own messages, blocked chats, pending callback answers, chat actions,
        errors, and injected errors and holds not yet used. Ids keep counting, so a late edit of an
        earlier message finds nothing rather than a new message with the same id."""
        self.messages.clear()
        self.user_messages.clear()
        self.chat_actions.clear()
        self.unanswered_callbacks.clear()
        self.errors.clear()
        self.blocked_chats.clear()
        self._fail.clear()
        self._holds.clear()

    # ---------------------------------------------------------------- driving API
    def inject_error(self, method: str, code: int = 429, *, retry_after: int = 1, times: int = 1,
                     description: str | None = None) -> None:  # fmt: skip
        """Make the next ``times`` calls of ``method`` fail (429 with ``retry_after`` by default)."""
        params = {"retry_after": retry_after} if code == 429 else None
        desc = description or (
            f"Too Many Requests: retry after {retry_after}"
            if code == 429
            else "Forbidden: bot was blocked by the user"
        )
        for _ in range(times):
            self._fail.append((method, code, desc, params))

    def hold(self, method: str) -> Hold:
        """Keep the next call of ``method`` mid-flight until the test sets ``release`` (see :class:`Hold`)."""
        held = Hold(method)
        self._holds.append(held)
        return held

    def add_forum(self, chat_id: int, title: str = "Nhân viên phòng khám", *, bot_admin: bool = True,
                  is_forum: bool = True) -> None:  # fmt: skip
        """A supergroup (with topics unless ``is_forum`` is False) the bot is a member of; an admin allowed to
        manage topics when ``bot_admin``."""
        self.forums[chat_id] = {"title": title, "bot_admin": bot_admin, "is_forum": is_forum, "topics": {}}

    def topic_messages(self, chat_id: int, thread_id: int) -> list[SentMessage]:
        """What the bot sent into one topic of a forum, oldest first."""
        return [m for m in self.messages[chat_id] if m.thread_id == thread_id]

    async def send_group_text(self, chat_id: int, from_id: int, text: str, *, thread_id: int | None = None,
                              first_name: str = "Hoa", is_bot: bool = False, **extra: Any) -> int:  # fmt: skip
        """Member ``from_id`` writes ``text`` in supergroup ``chat_id`` (in topic ``thread_id``); the update id."""
        message_id = next(self._message_ids[chat_id])
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "supergroup", "title": "Nhóm",
                     **({"is_forum": True} if chat_id in self.forums else {})},
            "from": {"id": from_id, "is_bot": is_bot, "first_name": first_name, "language_code": "vi"},
        }  # fmt: skip
        if thread_id is not None:
            message.update(message_thread_id=thread_id, is_topic_message=True)
        if text:
            message["text"] = text
            if text.startswith("/"):
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        message.update(extra)
        self.user_messages[chat_id].append(message)
        update = {"update_id": next(self._update_ids), "message": message}
        await self.deliver(update)
        return update["update_id"]

    def _user(self, chat_id: int, first_name: str = "Lan") -> dict[str, Any]:
        return {"id": chat_id, "is_bot": False, "first_name": first_name, "language_code": "vi"}

    def make_message_update(self, chat_id: int, text: str | None = None, **extra: Any) -> dict[str, Any]:
        message_id = next(self._message_ids[chat_id])
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private", "first_name": "Lan"},
            "from": self._user(chat_id),
        }
        if text is not None:
            message["text"] = text
            if text.startswith("/"):
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        message.update(extra)
        self.user_messages[chat_id].append(message)
        return {"update_id": next(self._update_ids), "message": message}

    async def send_text(self, chat_id: int, text: str, *, reply_to: int | None = None) -> int:
        """The user types ``text``; returns the update id."""
        extra: dict[str, Any] = {}
        if reply_to is not None:
            original = next(m for m in self.messages[chat_id] if m.message_id == reply_to)
            extra["reply_to_message"] = original.as_api()
        update = self.make_message_update(chat_id, text, **extra)
        await self.deliver(update)
        return update["update_id"]

    async def send_document(self, chat_id: int, data: bytes, filename: str, mime: str = "text/csv") -> int:
        file_id = f"upload{next(self._ids)}"
        self.files[file_id] = (data, f"documents/{filename}")
        document = {"file_id": file_id, "file_unique_id": file_id + "u", "file_name": filename,
                    "mime_type": mime, "file_size": len(data)}  # fmt: skip
        update = self.make_message_update(chat_id, None, document=document)
        await self.deliver(update)
        return update["update_id"]

    async def send_sticker(self, chat_id: int) -> int:
        sticker = {"file_id": "stk1", "file_unique_id": "stk1u", "type": "regular", "width": 512,
                   "height": 512, "is_animated": False, "is_video": False}  # fmt: skip
        update = self.make_message_update(chat_id, None, sticker=sticker)
        await self.deliver(update)
        return update["update_id"]

    async def tap(self, chat_id: int, message_id: int, callback_data: str, *, forged: bool = False,
                  from_id: int | None = None) -> str:  # fmt: skip
        """The user taps an inline button; returns the callback query id. ``forged``: the data need not be a
        button of the message (a tampered client sends any callback data it likes)."""
        original = next(m for m in self.messages[chat_id] if m.message_id == message_id)
        datas = [b.get("callback_data") for b in original.buttons]
        if not forged:
            assert callback_data in datas, (
                f"{callback_data!r} is not a button of message {message_id}: {datas}"
            )
        cq_id = f"cq{next(self._ids)}"
        self.unanswered_callbacks[cq_id] = chat_id
        update = {
            "update_id": next(self._update_ids),
            "callback_query": {
                "id": cq_id,
                "from": self._user(chat_id if from_id is None else from_id),
                "chat_instance": f"ci{chat_id}",
                "message": original.as_api(),
                "data": callback_data,
            },
        }
        await self.deliver(update)
        return cq_id

    async def tap_forged(self, chat_id: int, callback_data: str, *, from_id: int | None = None,
                         chat_type: str = "private") -> str:  # fmt: skip
        """A callback query with any ``callback_data`` (a forged, garbled or long-stale payload) on a bot
        message in ``chat_id``, sent by ``from_id`` (default: the chat itself); returns the query id."""
        sender = chat_id if from_id is None else from_id
        cq_id = f"cq{next(self._ids)}"
        self.unanswered_callbacks[cq_id] = chat_id
        message = {"message_id": 1, "date": int(time.time()), "chat": {"id": chat_id, "type": chat_type},
                   "from": BOT_USER, "text": "…"}  # fmt: skip
        update = {
            "update_id": next(self._update_ids),
            "callback_query": {"id": cq_id, "from": self._user(sender), "chat_instance": f"ci{chat_id}",
                               "message": message, "data": callback_data},
        }  # fmt: skip
        await self.deliver(update)
        return cq_id

    async def deliver(self, update: dict[str, Any]) -> None:
        """Hand an update to the bot: queue it for getUpdates or for this chat's webhook delivery."""
        chat_id = _chat_of(update)
        if self.webhook_url or self.webhook_targets:
            queue = self._chat_queues.get(chat_id)
            if queue is None:
                queue = self._chat_queues[chat_id] = asyncio.Queue()
                self._chat_tasks[chat_id] = asyncio.create_task(self._deliver_chat(queue))
            self._in_flight += 1
            await queue.put(update)
        else:
            async with self._cond:
                self._updates.append(update)
                self._cond.notify_all()

    async def _deliver_chat(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        assert self._session is not None
        while True:
            update = await queue.get()
            self.delivery_started.setdefault(update["update_id"], time.monotonic())
            for attempt in range(50):
                targets = self.webhook_targets or [self.webhook_url]
                url = targets[next(self._rr) % len(targets)]
                headers = {"X-Telegram-Bot-Api-Secret-Token": self.webhook_secret or ""}
                try:
                    async with self._session.post(url, json=update, headers=headers) as resp:
                        status = resp.status
                except aiohttp.ClientError:
                    status = 599
                async with self._cond:
                    self.delivered[update["update_id"]] = status
                    self._cond.notify_all()
                if status == 200 or status == 401:
                    break
                await asyncio.sleep(min(0.05 * (attempt + 1), 0.5))  # Telegram's redelivery backoff
            async with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    async def wait_for(
        self, predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition"
    ) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked on every API call or delivery)."""
        async with self._cond:
            try:
                await asyncio.wait_for(self._cond.wait_for(predicate), timeout)
            except TimeoutError:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None
            return predicate()

    async def wait_for_messages(self, chat_id: int, n: int, timeout: float = 15.0) -> list[SentMessage]:
        """Wait until the bot has sent at least ``n`` messages to ``chat_id``; return them all."""
        await self.wait_for(lambda: len(self.messages[chat_id]) >= n, timeout,
                            f"{n} messages in chat {chat_id} (have {len(self.messages[chat_id])})")  # fmt: skip
        return list(self.messages[chat_id])

    async def settle(self, timeout: float = 15.0) -> None:
        """Wait until every webhook update handed to the bot so far has been handled (the bot answers a
        webhook only once its handlers are done, edits and callback answers included): a test sharing this
        fake with the next one must not leave a late edit to land in that test's fresh chats."""
        await self.wait_for(lambda: self._in_flight == 0, timeout, f"{self._in_flight} updates in flight")

    async def wait_delivered(self, update_id: int, timeout: float = 15.0) -> int:
        return await self.wait_for(lambda: self.delivered.get(update_id), timeout, f"delivery of {update_id}")

    async def wait_callback_answered(self, cq_id: str, timeout: float = 15.0) -> dict[str, Any]:
        return await self.wait_for(lambda: self.callback_answers.get(cq_id), timeout, f"answer to {cq_id}")

    def count_calls(self, method: str) -> int:
        return sum(1 for m, _ in self.calls if m == method)

    # ---------------------------------------------------------------- HTTP side
    async def _file(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        for data, file_path in self.files.values():
            if file_path == path:
                return web.Response(body=data)
        return web.Response(status=404)

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        method = request.match_info["method"]
        params = await _params(request)
        held = next((h for h in self._holds if h.method == method), None)
        if held is not None:
            self._holds.remove(held)
            held.arrived.set()
            await held.release.wait()
        try:
            result = await self._call(method, params)
        except ApiError as exc:
            body: dict[str, Any] = {"ok": False, "error_code": exc.code, "description": exc.description}
            if exc.parameters:
                body["parameters"] = exc.parameters
            async with self._cond:
                self.errors.append((method, exc.description))
                self._cond.notify_all()
            return web.json_response(body, status=exc.code)
        return web.json_response({"ok": True, "result": result})

    async def _call(self, method: str, p: dict[str, Any]) -> Any:
        if method == "getUpdates":
            return await self._get_updates(p)
        async with self._cond:
            self.calls.append((method, p))
            self._cond.notify_all()
            for i, (m, code, desc, params) in enumerate(self._fail):
                if m == method:
                    del self._fail[i]
                    raise ApiError(code, desc, params)
            handler = getattr(self, "_m_" + method, None)
            if handler is None:
                raise ApiError(404, "Not Found: method not found")
            return handler(p)

    async def _get_updates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(p.get("offset") or 0)
        timeout = float(p.get("timeout") or 0)
        async with self._cond:
            self.calls.append(("getUpdates", p))
            self._cond.notify_all()
            if offset:
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            try:
                await asyncio.wait_for(self._cond.wait_for(lambda: bool(self._updates)), timeout)
            except TimeoutError:
                return []
            return list(self._updates[:100])

    # ---------------------------------------------------------------- methods (called under the condition)
    def _m_getMe(self, p: dict[str, Any]) -> dict[str, Any]:
        return BOT_USER

    def _m_setWebhook(self, p: dict[str, Any]) -> bool:
        self.webhook_url = p["url"]
        self.webhook_secret = p.get("secret_token")
        return True

    def _m_deleteWebhook(self, p: dict[str, Any]) -> bool:
        self.webhook_url = None
        return True

    def _m_setMyCommands(self, p: dict[str, Any]) -> bool:
        scope = p.get("scope") or {"type": "default"}
        key = scope["type"] + (f":{scope['chat_id']}" if "chat_id" in scope else "")
        self.commands[key] = p["commands"]
        return True

    def _m_sendChatAction(self, p: dict[str, Any]) -> bool:
        self.chat_actions.append((int(p["chat_id"]), p["action"]))
        return True

    def _m_answerCallbackQuery(self, p: dict[str, Any]) -> bool:
        cq_id = p["callback_query_id"]
        if cq_id in self.callback_answers:
            raise ApiError(
                400, "Bad Request: query is too old and response timeout expired or query ID is invalid"
            )
        self.unanswered_callbacks.pop(cq_id, None)
        self.callback_answers[cq_id] = p
        return True

    def _check_markup(self, markup: Any) -> dict[str, Any] | None:
        if not markup:
            return None
        rows = markup.get("inline_keyboard")
        if rows is None:
            return markup  # ForceReply / ReplyKeyboard: passed through
        buttons = [b for row in rows for b in row]
        if len(buttons) > 100:
            raise ApiError(400, "Bad Request: too many inline keyboard buttons")
        for b in buttons:
            if not b.get("text"):
                raise ApiError(400, "Bad Request: text buttons are unallowed in the inline keyboard")
            data = b.get("callback_data")
            if data is not None and not 1 <= len(data.encode()) <= 64:
                raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
        return markup

    def _render_text(self, text: str, parse_mode: str | None) -> str:
        plain = parse_html(text) if (parse_mode or "").upper() == "HTML" else text
        if not plain.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16_len(plain) > 4096:
            raise ApiError(400, "Bad Request: message is too long")
        return plain

    def _m_sendMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(p["chat_id"])
        if chat_id in self.blocked_chats:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        thread = int(p["message_thread_id"]) if p.get("message_thread_id") not in (None, "") else None
        forum = self.forums.get(chat_id)
        if thread is not None and (forum is None or thread not in forum["topics"]):
            raise ApiError(400, "Bad Request: message thread not found")
        plain = self._render_text(p.get("text", ""), p.get("parse_mode"))
        markup = self._check_markup(p.get("reply_markup"))
        msg = SentMessage(
            chat_id, next(self._message_ids[chat_id]), p["text"], plain, p.get("parse_mode"), markup
        )
        msg.thread_id = thread
        msg.chat_type = "supergroup" if forum is not None else "private"
        self.messages[chat_id].append(msg)
        return msg.as_api()

    def _m_getChat(self, p: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(p["chat_id"])
        forum = self.forums.get(chat_id)
        if forum is None:
            if chat_id < 0:
                raise ApiError(400, "Bad Request: chat not found")
            return {"id": chat_id, "type": "private", "first_name": "Lan", "accent_color_id": 0,
                    "max_reaction_count": 11, "accepted_gift_types": _GIFT_TYPES}  # fmt: skip
        return {"id": chat_id, "type": "supergroup", "title": forum["title"], "is_forum": forum["is_forum"],
                "accent_color_id": 0, "max_reaction_count": 11, "accepted_gift_types": _GIFT_TYPES}  # fmt: skip

    def _m_getChatMember(self, p: dict[str, Any]) -> dict[str, Any]:
        chat_id, user_id = int(p["chat_id"]), int(p["user_id"])
        forum = self.forums.get(chat_id)
        if forum is None:
            raise ApiError(400, "Bad Request: chat not found")
        user = BOT_USER if user_id == BOT_USER["id"] else self._user(user_id)
        if user_id == BOT_USER["id"] and forum["bot_admin"]:
            rights = dict.fromkeys(_ADMIN_RIGHTS, False)
            return {"status": "administrator", "user": user, **rights, "can_manage_topics": True,
                    "can_delete_messages": True}  # fmt: skip
        return {"status": "member", "user": user}

    def _forum_admin(self, chat_id: int) -> dict[str, Any]:
        forum = self.forums.get(chat_id)
        if forum is None:
            raise ApiError(400, "Bad Request: chat not found")
        if not forum["is_forum"]:
            raise ApiError(400, "Bad Request: the chat is not a forum")
        if not forum["bot_admin"]:
            raise ApiError(400, "Bad Request: not enough rights to create a topic")
        return forum

    def _m_createForumTopic(self, p: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(p["chat_id"])
        forum = self._forum_admin(chat_id)
        name = str(p.get("name") or "")
        if not 1 <= len(name) <= 128:
            raise ApiError(
                400, "Bad Request: TOPIC_TITLE_EMPTY" if not name else "Bad Request: topic name too long"
            )
        # As in Telegram, the topic's id is the id of its "topic created" service message.
        thread = next(self._message_ids[chat_id])
        forum["topics"][thread] = name
        return {"message_thread_id": thread, "name": name, "icon_color": 7322096}

    def _m_deleteForumTopic(self, p: dict[str, Any]) -> bool:
        chat_id, thread = int(p["chat_id"]), int(p["message_thread_id"])
        forum = self._forum_admin(chat_id)
        if forum["topics"].pop(thread, None) is None:
            raise ApiError(400, "Bad Request: message thread not found")
        self.messages[chat_id] = [m for m in self.messages[chat_id] if m.thread_id != thread]
        return True

    def _find(self, p: dict[str, Any]) -> SentMessage:
        chat_id, message_id = int(p["chat_id"]), int(p["message_id"])
        for m in self.messages[chat_id]:
            if m.message_id == message_id:
                return m
        raise ApiError(400, "Bad Request: message to edit not found")

    def _m_editMessageText(self, p: dict[str, Any]) -> dict[str, Any]:
        msg = self._find(p)
        plain = self._render_text(p.get("text", ""), p.get("parse_mode"))
        markup = self._check_markup(p.get("reply_markup"))
        if plain == msg.plain and markup == msg.reply_markup:
            raise ApiError(
                400,
                "Bad Request: message is not modified: specified new message content and reply "
                "markup are exactly the same as a current content and reply markup of the message",
            )
        msg.edits.append(msg.plain)
        msg.text, msg.plain, msg.parse_mode, msg.reply_markup = p["text"], plain, p.get("parse_mode"), markup
        return msg.as_api()

    def _m_editMessageReplyMarkup(self, p: dict[str, Any]) -> dict[str, Any]:
        msg = self._find(p)
        markup = self._check_markup(p.get("reply_markup"))
        if markup == msg.reply_markup:
            raise ApiError(400, "Bad Request: message is not modified")
        msg.reply_markup = markup
        return msg.as_api()

    def _m_deleteMessage(self, p: dict[str, Any]) -> bool:
        msg = self._find(p)
        self.messages[msg.chat_id].remove(msg)
        return True

    def _send_file(self, p: dict[str, Any], kind: str) -> dict[str, Any]:
        chat_id = int(p["chat_id"])
        data = p.get(kind)
        if not isinstance(data, bytes | str) or not data:
            raise ApiError(400, f"Bad Request: there is no {kind} in the request")
        caption = p.get("caption", "")
        plain_caption = (
            parse_html(caption) if caption and (p.get("parse_mode") or "").upper() == "HTML" else caption
        )
        if utf16_len(plain_caption) > 1024:
            raise ApiError(400, "Bad Request: message caption is too long")
        msg = SentMessage(chat_id, next(self._message_ids[chat_id]), kind=kind, caption=plain_caption,
                          file_bytes=data if isinstance(data, bytes) else None,
                          reply_markup=self._check_markup(p.get("reply_markup")))  # fmt: skip
        self.messages[chat_id].append(msg)
        return msg.as_api()

    def _m_sendPhoto(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._send_file(p, "photo")

    def _m_sendDocument(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._send_file(p, "document")

    def _m_getFile(self, p: dict[str, Any]) -> dict[str, Any]:
        file_id = p["file_id"]
        if file_id not in self.files:
            raise ApiError(400, "Bad Request: invalid file_id")
        data, path = self.files[file_id]
        return {
            "file_id": file_id,
            "file_unique_id": file_id + "u",
            "file_size": len(data),
            "file_path": path,
        }


_GIFT_TYPES = {"unlimited_gifts": False, "limited_gifts": False, "unique_gifts": False,
               "premium_subscription": False, "gifts_from_channels": False}  # fmt: skip
_ADMIN_RIGHTS = (
    "can_be_edited", "is_anonymous", "can_manage_chat", "can_delete_messages", "can_manage_video_chats",
    "can_restrict_members", "can_promote_members", "can_change_info", "can_invite_users", "can_post_stories",
    "can_edit_stories", "can_delete_stories", "can_send_welcome_messages",
)  # fmt: skip


def _chat_of(update: dict[str, Any]) -> int:
    if "message" in update:
        return int(update["message"]["chat"]["id"])
    if "callback_query" in update:
        return int(update["callback_query"]["from"]["id"])
    return 0


async def _params(request: web.Request) -> dict[str, Any]:
    """Bot API parameters from a query string, JSON body, urlencoded or multipart form (aiogram's way)."""
    params: dict[str, Any] = dict(request.query)
    if request.content_type == "application/json":
        params.update(await request.json())
        return params
    if request.content_type.startswith("multipart/"):
        reader = await request.multipart()
        async for part in reader:
            if part.name is None:
                continue
            if part.filename:  # type: ignore[union-attr]
                params[part.name] = bytes(await part.read())  # type: ignore[union-attr]
            else:
                params[part.name] = await part.text()  # type: ignore[union-attr]
    elif request.can_read_body:
        params.update(await request.post())
    for key, value in list(params.items()):
        if isinstance(value, str) and value.startswith("attach://"):
            params[key] = params.pop(value[len("attach://") :], b"")
        elif isinstance(value, str) and value[:1] in "{[":
            try:
                params[key] = json.loads(value)
            except ValueError:
                pass
    return params
