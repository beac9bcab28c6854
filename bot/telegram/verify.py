"""Telegram router for guideline verification (``/verify``) and guideline upload (``/guideline``).

Flow: ``/verify`` → the clinician sends the article (pasted text, or a .txt/.md/.docx file) → one message per
sentence with the claim, verdict, evidence and reasoning, and buttons ✅ accept and next, 🔁 search again,
⏭ skip (not a claim), ⏹ stop. A typed message while a sentence is open is taken as new search keywords
(or guidance) for that sentence. At the end or on stop: a summary message and the report files (.md, .csv).
Staff send ``/guideline`` and then a guideline file (.md/.txt/.docx/.pdf), or the file with caption
``/guideline``.

Both commands are for clinic staff only (``ChatService.is_staff``, the rule of ``bot/access.py``:
``ADMIN_IDS``, ``CLINICIAN_IDS`` or the database admin flag); anyone else gets a short refusal, and a
patient's messages never reach the article or keyword handlers (the filter below lets them through to the
question handlers without a query). Article files are parsed in a worker thread (``asyncio.to_thread``),
never on the event loop.

All state is in PostgreSQL (``db.verification``): what the chat waits for, the session, its position and
every verdict. Buttons carry ``vf:<action>:<session>:<idx>`` (CallbackData prefix "vf", < 64 bytes), so after a
restart the last message's buttons and typed keywords continue the same session, and a stale or doubled tap
changes nothing.

Wiring: ``router`` goes before the admin and chat routers (``bot.telegram.routers.all_routers``): its filters
only match chats that wait for an article or a guideline file, or have an open sentence, and never KB
spreadsheets or replies to other prompts; everything else falls through. Workflow data: ``verify_service``
(``bot.verify_service.VerificationService``), ``pool``, ``service`` (the ``ChatService``) and ``embedder``;
the sender's ``user`` comes from ``UserMiddleware``. End to end on the fake Bot API:
tests/e2e/test_verify_flow.py and tests/e2e/test_staff_access.py.
"""

from __future__ import annotations

import asyncio
import html
import io
import logging
import re
from pathlib import Path
from typing import Any

import asyncpg
from aiogram import Bot, F, Router
from aiogram.enums import ChatAction
from aiogram.filters import BaseFilter, Command
from aiogram.filters.callback_data import CallbackData
from aiogram.types import (
    BufferedInputFile,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
)

from bot.service import ChatService
from bot.telegram import texts
from bot.telegram.callbacks import DbId, Index
from bot.verify_service import ItemView, VerificationService
from db import users
from db import verification as repo
from engine.untrusted import vn_number
from engine.verify.article import parse_article
from engine.verify.documents import SUPPORTED_ARTICLE, SUPPORTED_GUIDELINE, DocumentError
from engine.verify.report import Report, report_stem
from engine.verify.types import STATUS_VI
from kb_import.guidelines import import_document, summary_vi
from kb_import.limits import MAX_ARTICLE_BYTES, MAX_GUIDELINE_BYTES

log = logging.getLogger("medbot.telegram.verify")

router = Router(name="verify")
CHANNEL = "telegram"
MAX_MESSAGE = 4096
KB_SPREADSHEETS = (".csv", ".xlsx")
_MD_HEADING = re.compile(r"(?m)^\s{0,3}#{1,6}\s+\S")
ICON = {"VALID": "✅", "FLAGGED": "⚠️", "UNCLEAR": "❔"}
# What one sentence message shows at most of each part (HTML-escaped characters), so that the message stays
# under MAX_MESSAGE whatever the article holds; the report files always have everything in full.
SENTENCE_SHOWN = 1500
SECTION_SHOWN = 200
REASONING_SHOWN = 800
SEARCH_SHOWN = 200

ASK_ARTICLE = (
    "📝 Hãy gửi bài viết cần kiểm tra: dán văn bản vào đây, hoặc gửi tệp .txt, .md, .docx.\n"
    "Bot sẽ đối chiếu từng câu với hướng dẫn chuyên môn của phòng khám."
)


class VerifyCB(CallbackData, prefix="vf"):
    action: str  # a = accept, r = search again, s = skip, q = stop, c = continue (resume)
    sid: DbId
    idx: Index


def keyboard(view: ItemView) -> InlineKeyboardMarkup:
    def button(text: str, action: str) -> InlineKeyboardButton:
        return InlineKeyboardButton(
            text=text, callback_data=VerifyCB(action=action, sid=view.session_id, idx=view.idx).pack()
        )

    return InlineKeyboardMarkup(
        inline_keyboard=[
            [button("✅ Chấp nhận, câu tiếp", "a"), button("🔁 Tìm lại", "r")],
            [button("⏭ Bỏ qua (không phải nhận định)", "s"), button("⏹ Dừng", "q")],
        ]
    )


def clip(text: str, limit: int) -> str:
    """``text`` HTML-escaped and, when longer than ``limit`` escaped characters, cut with "…" to fit."""
    escaped = html.escape(text)
    if len(escaped) <= limit:
        return escaped
    pieces: list[str] = []
    used = 0
    for char in text:  # at most ``limit`` steps: every character costs at least one
        piece = html.escape(char)
        if used + len(piece) > limit - 1:
            break
        pieces.append(piece)
        used += len(piece)
    return "".join(pieces).rstrip() + "…"


def render_item(view: ItemView) -> str:
    """The sentence message (HTML), kept under Telegram's 4096 characters: a long sentence, heading,
    reasoning or search is shown shortened (with a note for the sentence), then the evidence fills the rest."""
    e = html.escape
    conf = f"{view.confidence:.2f}" if view.confidence is not None else "—"
    sentence = clip(view.sentence, SENTENCE_SHOWN)
    if sentence != e(view.sentence):
        sentence += (
            f"\n<i>(Câu dài {vn_number(len(view.sentence))} ký tự, đã rút gọn khi hiển thị; báo cáo có đủ "
            "nguyên văn.)</i>"
        )
    head = [
        f"<b>Câu {view.number}/{view.total}</b>"
        + (f" · <i>{clip(view.section, SECTION_SHOWN)}</i>" if view.section else ""),
        f"<blockquote>{sentence}</blockquote>",
        f"{ICON.get(view.status, '')} <b>{e(view.status)}</b> — {e(STATUS_VI.get(view.status, ''))} "
        f"(độ tin cậy {conf})",
        f"<b>Lý do:</b> {clip(view.reasoning, REASONING_SHOWN)}",
    ]
    if view.searches and view.searches[-1]:
        head.append(f"🔎 Tìm lại với: <i>{clip(view.searches[-1], SEARCH_SHOWN)}</i>")
    tail = "\n\n<i>Gõ từ khóa để tìm lại cho câu này.</i>"
    text = "\n".join(head)
    budget = MAX_MESSAGE - len(text) - len(tail) - 40
    if view.evidence:
        parts = ["\n\n<b>Bằng chứng:</b>"]
        per = max(200, budget // max(1, min(3, len(view.evidence))) - 80)
        for n, ev in enumerate(view.evidence[:3], 1):
            where = " › ".join(p for p in (ev.document, ev.heading) if p)
            body = ev.text.replace("\n", " ")
            body = body if len(body) <= per else body[: per - 1] + "…"
            part = f"\n{n}. <i>{e(where)}</i> (điểm {ev.score:.2f})\n{e(body)}"
            if sum(len(p) for p in parts) + len(part) > budget:
                break
            parts.append(part)
        text += "".join(parts)
    else:
        text += "\n\nKhông tìm thấy đoạn hướng dẫn liên quan."
    return text + tail


async def _send_item(message: Message, view: ItemView | None, service: VerificationService, sid: int) -> None:
    if view is None:
        await _finish(message, service, sid)
        return
    await message.answer(render_item(view), reply_markup=keyboard(view), parse_mode="HTML")


async def _finish(message: Message, service: VerificationService, sid: int) -> None:
    report = await service.report(sid)
    await _send_report(message, report)


async def _send_report(message: Message, report: Report) -> None:
    await message.answer(html.escape(report.summary_vi()), parse_mode="HTML")
    stem = report_stem(report.article_name or report.title)
    await message.answer_document(
        BufferedInputFile(report.markdown().encode("utf-8"), filename=f"{stem}.report.md"),
        caption="Báo cáo chi tiết (Markdown)",
    )
    await message.answer_document(
        BufferedInputFile(report.csv().encode("utf-8-sig"), filename=f"{stem}.report.csv"),
        caption="Bảng kết quả (CSV)",
    )


# -- commands --------------------------------------------------------------------------------------------


@router.message(Command("verify"))
async def cmd_verify(
    message: Message,
    user: users.User,
    service: ChatService,
    pool: asyncpg.Pool,
    verify_service: VerificationService,
) -> None:
    if not service.is_staff(user):
        log.warning("verify.refused user=%s", user.id)
        await message.answer(texts.STAFF_ONLY)
        return
    await repo.set_pending(pool, user.id, "article", CHANNEL)
    markup = None
    current = await verify_service.open_session(user.id)
    text = ASK_ARTICLE
    if current is not None:
        text += f"\n\nBạn còn phiên kiểm tra “{html.escape(current.title)}” đang dở."
        markup = InlineKeyboardMarkup(
            inline_keyboard=[
                [
                    InlineKeyboardButton(
                        text="▶️ Tiếp tục phiên đang dở",
                        callback_data=VerifyCB(action="c", sid=current.id, idx=current.current_index).pack(),
                    )
                ]
            ]
        )
    await message.answer(text, reply_markup=markup, parse_mode="HTML")


@router.message(Command("guideline"), ~F.document)
async def cmd_guideline(message: Message, user: users.User, service: ChatService, pool: asyncpg.Pool) -> None:
    if not service.is_staff(user):
        log.warning("guideline.refused user=%s", user.id)
        await message.answer(texts.STAFF_ONLY)
        return
    await repo.set_pending(pool, user.id, "guideline", CHANNEL)
    await message.answer(
        "📚 Gửi tệp hướng dẫn chuyên môn (.md, .txt, .docx hoặc .pdf) để nhập vào kho đối chiếu."
    )


# -- incoming files and text -----------------------------------------------------------------------------


class VerifyState(BaseFilter):
    """Matches a message only when this chat waits for an article/guideline or has an open sentence."""

    def __init__(self, want_document: bool) -> None:
        self.want_document = want_document

    async def __call__(self, message: Message, service: ChatService, user: users.User | None = None) -> Any:
        if message.from_user is None or (message.text or "").startswith("/"):
            return False
        document = message.document
        if document is not None and Path(document.file_name or "").suffix.lower() in KB_SPREADSHEETS:
            return False  # an admin's KB import, never an article or a guideline
        if user is None:  # loaded by UserMiddleware for every human sender
            return False
        caption = (message.caption or "").strip().lower()
        if self.want_document and caption.startswith("/guideline"):
            return {"vf_kind": "guideline", "vf_user": user}  # refused in on_document unless staff
        if not service.is_staff(user):
            return False  # a patient's message: never an article or keywords, and no query for it
        # One query for both states: this filter sees every staff message.
        kind, session = await repo.chat_state(service.db, user.id)
        if kind is not None:
            return {"vf_kind": kind, "vf_user": user}
        if self.want_document:
            return False
        reply_to = message.reply_to_message
        if reply_to is not None and not (reply_to.text or "").startswith("Câu "):
            # an answer to another prompt (e.g. an admin's #Q answer), not keywords for a sentence
            return False
        if session is None:
            return False
        return {"vf_kind": "keywords", "vf_user": user, "vf_session": session}


@router.message(F.document, VerifyState(want_document=True))
async def on_document(
    message: Message,
    bot: Bot,
    pool: asyncpg.Pool,
    service: ChatService,
    verify_service: VerificationService,
    embedder: Any,
    vf_kind: str,
    vf_user: users.User,
) -> None:
    document = message.document
    assert document is not None and message.from_user is not None
    name = document.file_name or "tai-lieu.txt"
    suffix = Path(name).suffix.lower()
    cap = MAX_GUIDELINE_BYTES if vf_kind == "guideline" else MAX_ARTICLE_BYTES
    if (document.file_size or 0) > cap:
        await message.answer(f"Tệp quá lớn (tối đa {cap // 2**20} MB).")
        return
    if not service.is_staff(vf_user):
        log.warning("guideline.refused user=%s", vf_user.id)
        await message.answer(texts.STAFF_ONLY)
        return
    if vf_kind == "guideline":
        if suffix not in SUPPORTED_GUIDELINE:
            await message.answer("Định dạng chưa hỗ trợ. Hãy gửi tệp .md, .txt, .docx hoặc .pdf.")
            return
        await bot.send_chat_action(message.chat.id, ChatAction.UPLOAD_DOCUMENT)
        data = await _download(bot, document.file_id)
        try:
            result = await import_document(
                pool, embedder, data, name, imported_by=f"telegram:{message.from_user.id}"
            )
        except DocumentError as exc:
            await message.answer(html.escape(summary_vi([], [(name, str(exc))])), parse_mode="HTML")
            return
        await repo.clear_pending(pool, vf_user.id)
        await message.answer(html.escape(summary_vi([result], [])), parse_mode="HTML")
        return
    if suffix not in SUPPORTED_ARTICLE:
        await message.answer("Định dạng chưa hỗ trợ. Hãy gửi tệp .txt, .md, .docx hoặc dán văn bản.")
        return
    await _start(message, bot, verify_service, vf_user, await _download(bot, document.file_id), name)


@router.message(F.text, VerifyState(want_document=False))
async def on_text(
    message: Message,
    bot: Bot,
    verify_service: VerificationService,
    vf_kind: str,
    vf_user: users.User,
    vf_session: repo.Session | None = None,
) -> None:
    text = message.text or ""
    if vf_kind == "article":
        await _start(message, bot, verify_service, vf_user, text, "")
    elif vf_kind == "guideline":
        await message.answer("Hãy gửi hướng dẫn dưới dạng tệp (.md, .txt, .docx hoặc .pdf).")
    elif vf_session is not None:
        await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
        view = await verify_service.research(vf_session.id, text)
        await _send_item(message, view, verify_service, vf_session.id)


async def _download(bot: Bot, file_id: str) -> bytes:
    buffer = io.BytesIO()
    await bot.download(file_id, destination=buffer)
    return buffer.getvalue()


async def _start(
    message: Message, bot: Bot, service: VerificationService, user: users.User, data: bytes | str, name: str
) -> None:
    # Pasted text is read as Markdown when it has Markdown headings (copied from a .md file or a chat).
    markdown = isinstance(data, str) and _MD_HEADING.search(data) is not None
    try:
        # .docx unzipping and sentence splitting are CPU work: off the event loop, like any blocking call.
        filename = name or ("bai-viet.md" if markdown else "bai-viet.txt")
        article = await asyncio.to_thread(parse_article, data, filename)
    except DocumentError as exc:
        await message.answer(
            f"Không đọc được bài viết: {html.escape(str(exc))}. Hãy gửi lại.", parse_mode="HTML"
        )
        return
    if not article.claims:
        await message.answer("Bài viết không có câu nào để kiểm tra. Hãy gửi lại.")
        return
    session = await service.start_session(article, user_id=user.id, article_name=name, channel=CHANNEL)
    await message.answer(
        f"Bắt đầu kiểm tra “{html.escape(article.title)}”: {len(article.claims)} câu.", parse_mode="HTML"
    )
    await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
    await _send_item(message, await service.current(session.id), service, session.id)


# -- buttons ---------------------------------------------------------------------------------------------


@router.callback_query(VerifyCB.filter())
async def on_button(
    query: CallbackQuery,
    callback_data: VerifyCB,
    bot: Bot,
    user: users.User,
    pool: asyncpg.Pool,
    service: ChatService,
    verify_service: VerificationService,
) -> None:
    if not service.is_staff(user):
        await query.answer(texts.STAFF_ONLY, show_alert=True)
        return
    session = await verify_service.session(callback_data.sid)
    message = query.message
    if session is None or session.user_id != user.id or not isinstance(message, Message):
        await query.answer("Phiên kiểm tra không còn hiệu lực.", show_alert=True)
        return
    if session.status != repo.OPEN:
        await query.answer("Phiên kiểm tra này đã kết thúc.")
        return
    await query.answer()
    action, sid = callback_data.action, callback_data.sid
    if action in ("a", "s", "q"):
        try:
            await message.edit_reply_markup(reply_markup=None)
        except Exception:  # the message may be too old to edit; the decision still counts
            log.debug("verify.edit_markup_failed", exc_info=True)
    if action == "a":
        await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
        await _send_item(message, await verify_service.accept(sid, callback_data.idx), verify_service, sid)
    elif action == "s":
        await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
        await _send_item(message, await verify_service.skip(sid, callback_data.idx), verify_service, sid)
    elif action == "r":
        await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
        await _send_item(message, await verify_service.research(sid), verify_service, sid)
    elif action == "q":
        await _send_report(message, await verify_service.stop(sid))
    elif action == "c":
        await repo.clear_pending(pool, user.id)
        await _send_item(message, await verify_service.current(sid), verify_service, sid)
