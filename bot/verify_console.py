"""``medbot verify ARTICLE [--auto] [--out DIR]``: sentence-by-sentence verification in the terminal; and
``medbot guidelines import FILE...``, the guideline corpus it checks against.

For each sentence the claim, verdict, evidence and reasoning are printed, then a prompt:
``a`` accept and go on, ``r`` search again (then type keywords, or Enter for none), ``s`` skip (not a
claim), ``q`` stop. A line that is none of these is taken as search keywords, as on Telegram. ``--auto``
accepts every verdict without asking (batch use). The session lives in the database like a Telegram one, as
user ``console``/login name; an unfinished console session for the same article is resumed.
At the end (or on ``q``) ``<article>.report.md`` and ``<article>.report.csv`` are written to ``--out``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import TextIO

from bot.console import read_line
from bot.runtime import open_runtime
from bot.verify_service import ItemView, VerificationService
from bot.wiring import verification_for
from db import users
from db.settings import Settings
from engine.untrusted import size_text
from engine.verify.article import MAX_ARTICLE_BYTES, parse_article
from engine.verify.documents import SUPPORTED_ARTICLE, DocumentError
from engine.verify.types import STATUS_VI
from kb_import.embedders import make_inner_embedder
from kb_import.guidelines import import_files, summary_vi

PROMPT = "[a] chấp nhận · [r] tìm lại · [s] bỏ qua · [q] dừng > "
ICON = {"VALID": "✅", "FLAGGED": "⚠️", "UNCLEAR": "❔"}


def render_item(view: ItemView, max_evidence: int = 3) -> str:
    """A sentence with its verdict as plain text (console; the Telegram renderer mirrors it)."""
    conf = f"{view.confidence:.2f}" if view.confidence is not None else "—"
    lines = [
        f"── Câu {view.number}/{view.total}" + (f" · {view.section}" if view.section else ""),
        f"“{view.sentence}”",
        f"{ICON.get(view.status, '')} {view.status} — {STATUS_VI.get(view.status, '')} (độ tin cậy {conf})",
        f"Lý do: {view.reasoning}",
    ]
    if view.evidence:
        lines.append("Bằng chứng:")
        for n, ev in enumerate(view.evidence[:max_evidence], 1):
            where = " › ".join(p for p in (ev.document, ev.heading) if p)
            text = ev.text.replace("\n", " ")
            lines.append(
                f"  {n}. [{where}] (điểm {ev.score:.2f}) {text[:400]}{'…' if len(text) > 400 else ''}"
            )
    return "\n".join(lines)


async def run_verify(
    service: VerificationService,
    data: bytes,
    article_name: str,
    *,
    user_id: int | None,
    auto: bool,
    out_dir: Path,
    out: TextIO = sys.stdout,
) -> tuple[Path, Path]:
    """The console loop over one article; returns the report paths."""
    article = parse_article(data, article_name)
    session = None
    if user_id is not None:
        session = await service.open_session(user_id)
        if session is not None and (session.channel != "console" or session.article_name != article_name):
            session = None
    if session is not None:
        print(f"Tiếp tục phiên kiểm tra “{session.title}” đang dở.", file=out)
    else:
        session = await service.start_session(
            article, user_id=user_id, article_name=article_name, channel="console"
        )
        print(f"Kiểm tra “{article.title}”: {len(article.claims)} câu.", file=out)
    view = await service.current(session.id)
    while view is not None:
        print("\n" + render_item(view), file=out)
        if auto:
            view = await service.accept(session.id, view.idx)
            continue
        answer = await read_line(PROMPT)
        if answer is None or answer.strip().lower() in ("q", "quit", "stop"):
            await service.stop(session.id)
            print("Đã dừng phiên kiểm tra.", file=out)
            break
        choice = answer.strip()
        if choice.lower() == "a":
            view = await service.accept(session.id, view.idx)
        elif choice.lower() == "s":
            view = await service.skip(session.id, view.idx)
        elif choice.lower() == "r":
            keywords = await read_line("Từ khóa (Enter để tìm lại như cũ): ")
            view = await service.research(session.id, keywords or None)
        elif choice:
            view = await service.research(session.id, choice)
    report = await service.report(session.id)
    paths = report.write(out_dir, article_name)
    print("\n" + report.summary_vi(), file=out)
    print(f"Báo cáo: {paths[0]}\n         {paths[1]}", file=out)
    return paths


def _load(name: str) -> bytes | None:
    path = Path(name)
    if not path.is_file():
        print(f"medbot: không tìm thấy tệp {path}", file=sys.stderr)
        return None
    if path.suffix.lower() not in SUPPORTED_ARTICLE:
        print(f"medbot: định dạng {path.suffix!r} chưa hỗ trợ; dùng .txt, .md hoặc .docx", file=sys.stderr)
        return None
    if path.stat().st_size > MAX_ARTICLE_BYTES:  # refused before it is read into memory
        print(f"medbot: tệp quá lớn: tối đa {size_text(MAX_ARTICLE_BYTES)}", file=sys.stderr)
        return None
    return path.read_bytes()


async def cli_verify(args: argparse.Namespace, settings: Settings) -> int:
    data = _load(args.article)
    if data is None:
        return 2
    runtime = await open_runtime(settings)
    try:
        user = await users.get_or_create(runtime.pool, "console", getpass.getuser())
        service = verification_for(runtime)
        await run_verify(
            service, data, Path(args.article).name, user_id=user.id, auto=args.auto, out_dir=Path(args.out)
        )
        return 0
    except DocumentError as exc:
        print(f"medbot: không đọc được bài viết: {exc}", file=sys.stderr)
        return 2
    finally:
        await runtime.close()


async def cli_guidelines_import(args: argparse.Namespace, settings: Settings) -> int:
    """``medbot guidelines import FILE...``: exit code 1 when any file was rejected."""
    runtime = await open_runtime(settings)
    try:
        embedder = make_inner_embedder(settings)
        results, errors = await import_files(
            runtime.pool, embedder, [Path(f) for f in args.files], imported_by="cli"
        )
        print(summary_vi(results, errors))
        return 1 if errors else 0
    finally:
        await runtime.close()
