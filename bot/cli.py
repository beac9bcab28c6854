"""The ``medbot`` command line: one entry point for the bot, the worker, imports, evaluation and admin tasks.

Every subcommand of DESIGN.md section 9 is registered here and handled by one function of the module that
owns it (the table in docs/architecture.md), which opens the runtime it needs and takes its services from the
composition root (``bot.wiring``). Each handler imports its command's module when the command runs
(``# lazy:``): together they pull in aiogram, scikit-learn, alembic and openai, several seconds of imports that
``medbot --help``, a usage error or ``medbot db url`` should not wait for.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import engine
from bot.logs import setup_logging
from db.pool import database_url
from db.settings import Settings, SettingsError, load_settings

Handler = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, int]]


async def _db_upgrade(args: argparse.Namespace, settings: Settings) -> int:
    from db import migrate  # lazy: alembic (~0.5 s) only for the db commands

    url = await database_url(settings)
    await migrate.upgrade(url, args.revision)
    print(f"database migrated to {args.revision}")
    return 0


async def _db_downgrade(args: argparse.Namespace, settings: Settings) -> int:
    from db import migrate  # lazy: alembic (~0.5 s) only for the db commands

    url = await database_url(settings)
    await migrate.downgrade(url, args.revision)
    print(f"database downgraded to {args.revision}")
    return 0


async def _db_url(args: argparse.Namespace, settings: Settings) -> int:
    print(await database_url(settings))
    return 0


async def _eval(args: argparse.Namespace, settings: Settings) -> int:
    if args.eval_command == "dialogue":
        from bot.dialogue_eval import eval_dialogue  # lazy: the engine (scikit-learn) only when run

        return await eval_dialogue(args, settings)
    from bot.evaluate import eval_retrieval  # lazy: the engine (scikit-learn) only when a command runs

    return await eval_retrieval(args, settings)


async def _flow_show(args: argparse.Namespace, settings: Settings) -> int:
    # The engine's surface loads the flow (and scikit-learn) on first use, here.
    print(engine.flow_to_mermaid(engine.MEDICAL_FLOW))
    return 0


async def _setup(args: argparse.Namespace, settings: Settings) -> int:
    from bot.setup import setup  # lazy: the engine (scikit-learn) only when a command runs

    return await setup(settings)


async def _kb(args: argparse.Namespace, settings: Settings) -> int:
    from bot.kb_cli import kb_command  # lazy: the engine (scikit-learn) only when a command runs

    return await kb_command(args, settings)


async def _worker(args: argparse.Namespace, settings: Settings) -> int:
    from bot.worker.cli import worker_command  # lazy: aiogram and every feature's jobs only for the worker

    return await worker_command(args, settings)


async def _import(args: argparse.Namespace, settings: Settings) -> int:
    from bot.kb_cli import import_command  # lazy: the engine (scikit-learn) only when a command runs

    return await import_command(args, settings)


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    from bot.main import run  # lazy: aiogram (~3 s of models) and the engine only for medbot run

    return await run(settings)


async def _web(args: argparse.Namespace, settings: Settings) -> int:
    from bot.web_cli import serve  # lazy: aiohttp and jinja2 templates only for the web app

    return await serve(settings)


async def _staff(args: argparse.Namespace, settings: Settings) -> int:
    from bot.staff_cli import staff_command  # lazy: the database layer only when a command runs

    return await staff_command(args, settings)


async def _chat(args: argparse.Namespace, settings: Settings) -> int:
    from bot.console_cli import chat_command  # lazy: the engine (scikit-learn) only when a command runs

    return await chat_command(args, settings)


async def _guidelines_import(args: argparse.Namespace, settings: Settings) -> int:
    from bot.verify_console import cli_guidelines_import  # lazy: document readers only when run

    return await cli_guidelines_import(args, settings)


async def _verify(args: argparse.Namespace, settings: Settings) -> int:
    from bot.verify_console import cli_verify  # lazy: the verifier and the engine only when a command runs

    return await cli_verify(args, settings)


async def _llm(args: argparse.Namespace, settings: Settings) -> int:
    from bot.llm_cli import llm_check  # lazy: the engine and openai only when a command runs

    return await llm_check(args, settings)


async def _ask(args: argparse.Namespace, settings: Settings) -> int:
    # An unknown role is refused before the engine, the models and the database are loaded (~4 s), from the
    # roles file the service itself is built with.
    roles = engine.load_roles()
    if args.role not in roles:
        print(f"medbot: {engine.unknown_role_message(args.role, roles)}", file=sys.stderr)
        return 2
    from bot.console_cli import ask_command  # lazy: the engine (scikit-learn) only when a command runs

    return await ask_command(args, settings)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    parser = argparse.ArgumentParser(
        prog="medbot", description="MedBot VN: Vietnamese medical Q&A bot for clinics."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Handler] = {}

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler_name=name)
        handlers[name] = handler
        return p

    add("run", _run, "Run the Telegram bot (webhook or long polling); the console chat when no token is set.")
    add(
        "setup",
        _setup,
        "Prepare the database: start the embedded server if needed, migrate, load the sample KB.",
    )

    add("web", _web, "Serve the web app alone on PORT: the clinic console (/console) and /healthz.")

    p = add("staff", _staff, "Clinic console accounts: add, list, disable, enable, password.")
    ssub = p.add_subparsers(dest="staff_command", metavar="ACTION", required=True)
    sa = ssub.add_parser("add", help="create an account (the password is asked twice)")
    sa.add_argument("email", metavar="EMAIL")
    sa.add_argument(
        "--role", required=True, help="admin or clinician"
    )  # checked, in Vietnamese, by the command
    sa.add_argument("--password-stdin", action="store_true", help="read the password as one line from stdin")
    sa.set_defaults(handler_name="staff")
    ssub.add_parser("list", help="list the accounts").set_defaults(handler_name="staff")
    sd = ssub.add_parser("disable", help="disable an account: no login, its sessions end")
    sd.add_argument("email", metavar="EMAIL")
    sd.set_defaults(handler_name="staff")
    se = ssub.add_parser("enable", help="enable a disabled account again")
    se.add_argument("email", metavar="EMAIL")
    se.set_defaults(handler_name="staff")
    sp = ssub.add_parser(
        "password", help="set a new password (asked twice): lifts a lockout, ends open sessions"
    )
    sp.add_argument("email", metavar="EMAIL")
    sp.add_argument("--password-stdin", action="store_true", help="read the password as one line from stdin")
    sp.set_defaults(handler_name="staff")

    p = add("chat", _chat, "Console chat on the same engine and database; a number taps a suggestion.")
    p.add_argument("--role", default=None, help="role to chat as (default: DEFAULT_ROLE)")

    p = add(
        "ask", _ask, "Answer one message (or, with '-', one per stdin line); each is its own conversation."
    )
    p.add_argument("--role", required=True, help="role whose KB and persona answer")
    p.add_argument("--json", action="store_true", help="print one JSON object per answer")
    p.add_argument(
        "--conversation",
        metavar="NAME",
        help="keep the messages (and later runs with the same NAME) in one conversation",
    )
    p.add_argument("text", nargs="+", help="the message, or '-' to read one message per line from stdin")

    p = add("import", _import, "Import KB spreadsheets (.xlsx/.csv) with validation and a report.")
    p.add_argument("files", nargs="*", help="spreadsheets to import")
    p.add_argument("--role", help="role for files without a role sheet/column")
    p.add_argument("--dry-run", action="store_true", help="validate and report only")
    p.add_argument("--skip-invalid", action="store_true", help="import valid rows, list skipped ones")
    p.add_argument("--template", metavar="OUT.xlsx", help="write an empty template workbook and exit")
    p.add_argument(
        "--keep-missing", action="store_true", help="add and update only: hide no entry missing from the file"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="confirm hiding a large share of a role (more than 10 entries or 20%% of its active entries): "
        "without it such an import is refused",
    )
    p.add_argument(
        "--keep-console-edits",
        action="store_true",
        help="leave the entries changed in the clinic console since their last import as they are",
    )
    p.add_argument(
        "--allow-blank-question", action="store_true", help="accept rows with an answer but no question"
    )
    p.add_argument("--no-embed", action="store_true", help="leave embeddings to the background backfill")

    p = add(
        "kb",
        _kb,
        "KB maintenance: export, mark a role's sample entries reviewed, undo the last import, calibrate.",
    )
    kbsub = p.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    ex = kbsub.add_parser("export", help="write the active entries to an .xlsx that imports back unchanged")
    ex.add_argument("out", metavar="OUT.xlsx")
    ex.add_argument("--role", action="append", help="export only this role (repeatable; default: every role)")
    ex.set_defaults(handler_name="kb")
    rv = kbsub.add_parser(
        "reviewed",
        help="the clinic's doctors reviewed ROLE: its answers stop saying they are sample material",
    )
    rv.add_argument("role", metavar="ROLE", help="role id (patient_dental) or its Vietnamese label")
    rv.set_defaults(handler_name="kb")
    ud = kbsub.add_parser(
        "undo", help="undo the last import of ROLE: its entries back exactly as they were before it"
    )
    ud.add_argument("role", metavar="ROLE", help="role id (patient_dental) or its Vietnamese label")
    ud.set_defaults(handler_name="kb")
    cb = kbsub.add_parser(
        "calibrate", help="re-estimate ROLE's answer calibration on its own KB now (imports do it themselves)"
    )
    cb.add_argument("role", metavar="ROLE", help="role id (patient_dental)")
    cb.set_defaults(handler_name="kb")

    p = add("worker", _worker, "Run the scheduled background jobs (APScheduler).")
    p.add_argument("--once", metavar="JOB", help="run one job now and exit")
    p.add_argument("--list", action="store_true", help="list jobs, schedules and last runs")

    p = add("db", _db_upgrade, "Database maintenance.")
    dbsub = p.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    up = dbsub.add_parser("upgrade", help="apply migrations (default: to head)")
    up.add_argument("revision", nargs="?", default="head")
    up.set_defaults(handler_name="db upgrade")
    down = dbsub.add_parser("downgrade", help="revert migrations (default: to base)")
    down.add_argument("revision", nargs="?", default="base")
    down.set_defaults(handler_name="db downgrade")
    dbsub.add_parser("url", help="print the database URL in use").set_defaults(handler_name="db url")
    handlers["db upgrade"] = _db_upgrade
    handlers["db downgrade"] = _db_downgrade
    handlers["db url"] = _db_url

    p = add("eval", _eval, "Evaluate retrieval, or whole conversations, on labelled data.")
    evsub = p.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    ev = evsub.add_parser("retrieval", help="P@1, MRR@10, hit@10 on the production search path")
    ev.add_argument("--corpus", required=True)
    ev.add_argument("--queries", required=True)
    ev.add_argument("--qrels", required=True)
    ev.add_argument("--k", type=int, default=10)
    ev.add_argument("--mode", choices=["hybrid", "sparse", "dense"], default="hybrid")
    ev.add_argument("--strip-diacritics", action="store_true", help="remove every diacritic from the queries")
    ev.set_defaults(handler_name="eval")
    dv = evsub.add_parser("dialogue", help="turn accuracy and wrong answers on labelled multi-turn dialogues")
    dv.add_argument("file", metavar="FILE", help="dialogues JSONL (format: bot/dialogue_eval.py)")
    dv.add_argument("--show", choices=["wrong", "all", "none"], default="wrong", help="turns to print")
    dv.set_defaults(handler_name="eval")

    p = add("llm", _llm, "Check the configured LLM: per step, does it help, hurt or break?")
    lsub = p.add_subparsers(dest="llm_command", metavar="ACTION", required=True)
    lc = lsub.add_parser(
        "check", help="run a labelled set offline and with each LLM step; switch off what hurts"
    )
    lc.add_argument("--role", default="patient_dental", help="role whose KB gives the medical questions")
    lc.add_argument("--questions", type=int, default=12, help="medical questions taken from the KB")
    lc.set_defaults(handler_name="llm")

    p = add("flow", _flow_show, "Inspect the conversation flows.")
    fsub = p.add_subparsers(dest="flow_command", metavar="WHAT", required=True)
    fsub.add_parser("show", help="print the medical flow as a mermaid graph").set_defaults(
        handler_name="flow"
    )

    p = add("guidelines", _guidelines_import, "Manage the guideline corpus used by /verify.")
    gsub = p.add_subparsers(dest="guidelines_command", metavar="ACTION", required=True)
    gi = gsub.add_parser("import", help="import .md/.txt/.docx/.pdf guideline documents")
    gi.add_argument("files", nargs="+")
    gi.set_defaults(handler_name="guidelines")

    p = add("verify", _verify, "Verify an article sentence by sentence against guidelines.")
    p.add_argument("article")
    p.add_argument("--auto", action="store_true", help="accept every verdict (batch use)")
    p.add_argument("--out", default=".", help="folder for the report files")
    return parser, handlers


def main(argv: list[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler_name", None):
        parser.print_help()
        return 2
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"medbot: {exc}", file=sys.stderr)
        return 2
    setup_logging(settings.log_level)
    try:
        return asyncio.run(handlers[args.handler_name](args, settings))
    except KeyboardInterrupt:
        return 130
    finally:
        # The command is over and the process exits next: the interpreter's last collections would walk the
        # whole heap (aiogram's pydantic models, the fitted text models), up to about a second; frozen objects
        # are skipped. main() runs once per process (the `medbot` script, `python -m bot.cli`).
        gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
