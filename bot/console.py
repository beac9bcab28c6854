"""The console channel: ``medbot chat`` (interactive) and ``medbot ask`` (one answer, or one per stdin line).

Both run the same ChatService, engine and database as the Telegram bot; the console user is a user of
channel ``console``, so conversations, memory and statistics behave exactly as on a chat app. The chat's
messages go through the same triage guard as every channel (``ChatService.guard``); ``ask`` reports the
flow's own triage (``red_flag`` in ``--json``).

``ask`` makes conversations explicit: each message (each stdin line of ``ask -``) is a conversation of its
own, so scripts and evaluations never leak context between unrelated messages; ``--conversation NAME`` keeps
every message given that name (in this run and later runs) in one conversation, as a chat would.
``medbot eval dialogue`` (``bot.dialogue_eval``) talks through the same ``ask_one``.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import logging
import sys
from typing import TextIO

from bot.service import ChatService, Emergency, Reply
from db.settings import Settings
from db.users import User
from engine import unknown_role_message

HELP = "Gõ câu hỏi của bạn. Gõ số để chọn câu hỏi gợi ý, /role để đổi chuyên khoa, /quit để thoát."
SWITCH_KEY = "0"  # in ``chat``: the "Chuyển sang mục …" button of the last reply


def render_plain(reply: Reply, *, chat: bool = False) -> str:
    """A reply as console text: the answer, the offer of another section (``Reply.switch_role``: number 0 in
    ``chat``, the ``--role`` to ask with in ``ask``), then numbered suggestions."""
    lines = [reply.text.rstrip()]
    if reply.switch_role:
        offer = (
            f"  {SWITCH_KEY}. ➡️ {reply.switch_label}"
            if chat
            else f"➡️ {reply.switch_label} (--role {reply.switch_role})"
        )
        lines += ["", offer]
    if reply.suggestions:
        lines.append("")
        lines.append("Câu hỏi gợi ý:")
        lines += [f"  {i}. {q}" for i, q in enumerate(reply.suggestions, 1)]
    return "\n".join(lines)


def reply_json(reply: Reply) -> dict[str, object]:
    return {
        "input_type": reply.input_type,
        "explain": reply.text,
        "suggestion_questions": reply.suggestions,
        "citations": reply.citations,
        "retrieval_score": round(reply.retrieval_score, 4),
        "confidence": reply.result.confidence if reply.result is not None else None,
        "red_flag": reply.red_flag,
        "latency_ms": reply.latency_ms,
        "switch_role": reply.switch_role,
    }


async def read_line(prompt: str) -> str | None:
    """A line typed on the console after ``prompt`` (read in a thread, so the event loop keeps running); None
    at the end of input."""
    try:
        return await asyncio.to_thread(input, prompt)
    except EOFError:
        return None


async def chat(
    service: ChatService, settings: Settings, role: str | None = None, out: TextIO = sys.stdout
) -> int:
    """``medbot chat``: an interactive conversation in the terminal on ``service`` (from ``bot.wiring``)."""
    if settings.log_level == "INFO":  # the terminal is the chat window: only warnings interleave with it
        logging.getLogger().setLevel(logging.WARNING)
    user = await service.user("console", getpass.getuser())
    wanted = role or user.role or settings.default_role
    if not await service.set_role(user, wanted):
        print(f"Không có chuyên khoa '{wanted}'. Chọn một trong: {', '.join(service.roles)}", file=out)
        return 2
    print(f"MedBot VN — chuyên khoa: {wanted}. {HELP}\n{settings.disclaimer}\n", file=out)
    last: Reply | None = None
    while True:
        line = await read_line("Bạn: ")
        if line is None or line.strip() in ("/quit", "/exit"):
            return 0
        text = line.strip()
        if not text:
            continue
        if text.startswith("/role"):
            parts = text.split()
            if len(parts) == 2 and await service.set_role(user, parts[1]):
                print(f"Đã chuyển sang: {parts[1]}", file=out)
            else:
                print("Chuyên khoa có sẵn: " + ", ".join(service.roles), file=out)
            continue
        if text == SWITCH_KEY and last and last.switch_role and last.message_id is not None:
            switched = await service.switch_and_answer(user, last.message_id, channel="console")
            if switched is None:
                print("Nút này không còn dùng được nữa.", file=out)
                continue
            print(
                f"Đã chuyển sang: {user.role}\n\nMedBot: " + render_plain(switched, chat=True) + "\n",
                file=out,
            )
            last = switched
            continue
        if text.isdigit() and last and 1 <= int(text) <= len(last.suggestions):
            text = last.suggestions[int(text) - 1]
            print(f"Bạn chọn: {text}", file=out)
        last = await _turn(service, user, text, out) or last


async def _turn(service: ChatService, user: User, text: str, out: TextIO) -> Reply | None:
    """One typed message through the triage guard, as on every channel; the reply shown, if any."""
    shown: list[Reply] = []

    async def deliver(answer: str) -> None:
        print("\nMedBot: " + answer + "\n", file=out, flush=True)

    async def handle(emergency: Emergency | None) -> None:
        reply = await service.handle_text(user, text, channel="console", emergency=emergency)
        if not reply.delivered:
            print("\nMedBot: " + render_plain(reply, chat=True) + "\n", file=out, flush=True)
            if emergency is not None:
                emergency.delivered = True
        shown.append(reply)

    await service.guard("console", user.external_id, text, deliver, handle)
    return shown[0] if shown else None


async def ask_user(service: ChatService, role: str, conversation: str | None) -> User | None:
    """The console user ``ask`` speaks as (one per named conversation), with ``role``; None if no such role."""
    name = f"ask:conversation:{conversation}" if conversation else f"ask:{role}"
    user = await service.user("console", name)
    return user if await service.set_role(user, role) else None


async def ask_one(service: ChatService, user: User, text: str, conversation: str | None) -> Reply:
    """One message of ``ask``: a conversation of its own, or the named conversation's next message."""
    return await service.handle_text(
        user, text, channel="console", conversation="keep" if conversation else "new"
    )


async def ask(
    service: ChatService,
    role: str,
    text: str,
    as_json: bool = False,
    out: TextIO = sys.stdout,
    conversation: str | None = None,
) -> int:
    """``medbot ask``: one answer (or one per stdin line with ``-``) from ``service`` (from ``bot.wiring``)."""
    user = await ask_user(service, role, conversation)
    if user is None:
        print(f"medbot: {unknown_role_message(role, service.roles)}", file=sys.stderr)
        return 2
    messages = (line.strip() for line in sys.stdin) if text == "-" else iter([text])
    for message in messages:
        if not message:
            continue
        reply = await ask_one(service, user, message, conversation)
        if as_json:
            print(json.dumps(reply_json(reply), ensure_ascii=False), file=out, flush=True)
        else:
            print(render_plain(reply), file=out, flush=True)
    return 0
