"""``medbot chat`` and ``medbot ask``: the console channel (``bot.console``) on a runtime of its own, with the
process's ChatService from the composition root (``bot.wiring``)."""

from __future__ import annotations

import argparse

from bot import console
from bot.runtime import open_runtime
from bot.wiring import chat_service
from db.settings import Settings


async def chat_command(args: argparse.Namespace, settings: Settings) -> int:
    async with await open_runtime(settings) as runtime:
        return await console.chat(await chat_service(runtime), settings, role=args.role)


async def ask_command(args: argparse.Namespace, settings: Settings) -> int:
    async with await open_runtime(settings) as runtime:
        return await console.ask(
            await chat_service(runtime),
            role=args.role,
            text=" ".join(args.text),
            as_json=args.json,
            conversation=args.conversation,
        )
