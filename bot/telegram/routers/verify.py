"""Clinician verification on Telegram: ``/verify`` (an article checked sentence by sentence against the
guidelines) and ``/guideline`` (a guideline document imported into the corpus). Clinic staff only.

Flow: ``/verify`` → the clinician sends the article (pasted text, or a .txt/.md/.docx file) → one message per
sentence with the claim, verdict, evidence and reasoning, and buttons ✅ accept and next, 🔁 search again,
⏭ skip (not a claim), ⏹ stop. A typed message while a sentence is open is taken as new search keywords
(or guidance) for that sentence. At the end or on stop: a summary message and the report files (.md, .csv).
Staff send ``/guideline`` and then a guideline file (.md/.txt/.docx/.pdf), or the file with caption
``/guideline``.

What the chat waits for is its FSM state (``bot.telegram.states.Waiting``: article, guideline, sentence), kept
in PostgreSQL like the session itself (``db.verification``: its sentences, position and every verdict), so a
restart loses nothing. The handlers match only in those states (and a document captioned /guideline), so a
patient's message, a KB spreadsheet or an answer to another prompt never reaches them. Who is staff is the
one rule of ``bot/access.py`` (``ChatService.is_staff``): ``StaffMiddleware`` refuses anyone else once a
command, a captioned file or a button matched, and the waiting-state handlers do not match for them (their
message is an ordinary one); the sender's ``user`` comes from ``UserMiddleware``.
Buttons carry ``vf:<action>:<session>:<idx>`` (``callbacks.VerifyCb``), so the last message's buttons still
work after a restart and a stale or doubled tap changes nothing. Article files are parsed in a worker thread
(``asyncio.to_thread``), never on the event loop. End to end on the fake Bot API:
tests/e2e/test_verify_flow.py and tests/e2e/test_staff_access.py.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Collection
from pathlib import Path
from typing import Any

from aiogram import Bot, F, Router
from aiogram.dispatcher.event.bases import SkipHandler
from aiogram.enums import ChatAction
from aiogram.filters import Command, StateFilter, and_f, or_f
from aiogram.fsm.context import FSMContext
from aiogram.types import (
    BufferedInputFile,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
)

from bot.service import ChatService
from bot.telegram import texts
from bot.telegram.callbacks import VerifyCb
from bot.telegram.middlewares import StaffMiddleware
from bot.telegram.session import download
from bot.telegram.states import Waiting
from bot.verify_service import ItemView, VerificationService
from db import users
from db import verification as repo
from engine import vn_number
from engine.verify.article import parse_article, pasted_name
from engine.verify.documents import SUPPORTED_ARTICLE, SUPPORTED_GUIDELINE, DocumentError
from engine.verify.report import Report, report_stem
from engine.verify.types import STATUS_VI
from kb_import.guidelines import import_document, summary_vi
from kb_import.limits import MAX_ARTICLE_BYTES, MAX_GUIDELINE_BYTES

log = logging.getLogger("medbot.telegram.verify")

router = Router(name="verify")
router.message.middleware(StaffMiddleware())
router.callback_query.middleware(StaffMiddleware())
WAITING = (Waiting.article, Waiting.guideline, Waiting.sentence)
CHANNEL = "telegram"
MAX_MESSAGE = 4096
KB_SPREADSHEETS = (".csv", ".xlsx")
ICON = {"VALID": "✅", "FLAGGED": "⚠️", "UNCLEAR": "❔"}
# What one sentence message shows at most of each part (HTML-escaped characters), so that the message stays
# under MAX_MESSAGE whatever the article holds; the report files always have everything in full.
SENTENCE_SHOWN = 1500
SECTION_SHOWN = 200
REASONING_SHOWN = 800
SEARCH_SHOWN = 200


def keyboard(view: ItemView) -> InlineKeyboardMarkup:
    def button(text: str, action: str) -> InlineKeyboardButton:
        return InlineKeyboardButton(
            text=text, callback_data=VerifyCb(action=action, sid=view.session_id, idx=view.idx).pack()
        )

    return InlineKeyboardMarkup(
        inline_keyboard=[
            [button(texts.VERIFY_ACCEPT, "a"), button(texts.VERIFY_RESEARCH, "r")],
            [button(texts.VERIFY_SKIP, "s"), button(texts.VERIFY_STOP, "q")],
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
        sentence += texts.VERIFY_SENTENCE_CLIPPED.format(n=vn_number(len(view.sentence)))
    head = [
        texts.VERIFY_SENTENCE_HEAD.format(number=view.number, total=view.total)
        + (f" · <i>{clip(view.section, SECTION_SHOWN)}</i>" if view.section else ""),
        f"<blockquote>{sentence}</blockquote>",
        texts.VERIFY_VERDICT.format(
            icon=ICON.get(view.status, ""),
            status=e(view.status),
            status_vi=e(STATUS_VI.get(view.status, "")),
            confidence=conf,
        ),
        texts.VERIFY_REASONING.format(reasoning=clip(view.reasoning, REASONING_SHOWN)),
    ]
    if view.searches and view.searches[-1]:
        head.append(texts.VERIFY_SEARCHED.format(search=clip(view.searches[-1], SEARCH_SHOWN)))
    tail = texts.VERIFY_TYPE_KEYWORDS
    text = "\n".join(head)
    budget = MAX_MESSAGE - len(text) - len(tail) - 40
    if view.evidence:
        parts = [texts.VERIFY_EVIDENCE_HEAD]
        per = max(200, budget // max(1, min(3, len(view.evidence))) - 80)
        for n, ev in enumerate(view.evidence[:3], 1):
            where = " › ".join(p for p in (ev.document, ev.heading) if p)
            body = ev.text.replace("\n", " ")
            body = body if len(body) <= per else body[: per - 1] + "…"
            part = texts.VERIFY_EVIDENCE_ITEM.format(n=n, where=e(where), score=ev.score, body=e(body))
            if sum(len(p) for p in parts) + len(part) > budget:
                break
            parts.append(part)
        text += "".join(parts)
    else:
        text += texts.VERIFY_NO_EVIDENCE
    return text + tail


async def _stop_waiting(state: FSMContext) -> None:
    """The chat waits for nothing of verification any more (other features' data slots stay)."""
    await state.set_state(None)
    await state.update_data(session=None)


async def _send_item(
    message: Message, view: ItemView | None, service: VerificationService, sid: int, state: FSMContext
) -> None:
    """The sentence the session stands on, or, once it is finished, the report (and the chat waits no more)."""
    if view is None:
        await _stop_waiting(state)
        await _send_report(message, await service.report(sid))
        return
    await state.set_state(Waiting.sentence)
    await state.update_data(session=sid)
    await message.answer(render_item(view), reply_markup=keyboard(view), parse_mode="HTML")


async def _send_report(message: Message, report: Report) -> None:
    await message.answer(html.escape(report.summary_vi()), parse_mode="HTML")
    stem = report_stem(report.article_name or report.title)
    await message.answer_document(
        BufferedInputFile(report.markdown().encode("utf-8"), filename=f"{stem}.report.md"),
        caption=texts.VERIFY_REPORT_MD,
    )
    await message.answer_document(
        BufferedInputFile(report.csv().encode("utf-8-sig"), filename=f"{stem}.report.csv"),
        caption=texts.VERIFY_REPORT_CSV,
    )


# -- commands --------------------------------------------------------------------------------------------


@router.message(Command("verify"))
async def cmd_verify(
    message: Message, user: users.User, verify_service: VerificationService, state: FSMContext
) -> None:
    await state.set_state(Waiting.article)
    markup = None
    current = await verify_service.open_session(user.id)
    text = texts.VERIFY_ASK_ARTICLE
    if current is not None:
        text += texts.VERIFY_OPEN_SESSION.format(title=html.escape(current.title))
        resume = VerifyCb(action="c", sid=current.id, idx=current.current_index).pack()
        markup = InlineKeyboardMarkup(
            inline_keyboard=[[InlineKeyboardButton(text=texts.VERIFY_RESUME, callback_data=resume)]]
        )
    await message.answer(text, reply_markup=markup, parse_mode="HTML")


@router.message(Command("guideline"), ~F.document)
async def cmd_guideline(message: Message, state: FSMContext) -> None:
    await state.set_state(Waiting.guideline)
    await message.answer(texts.VERIFY_ASK_GUIDELINE)


# -- incoming files and text -----------------------------------------------------------------------------


def _not_spreadsheet(message: Message) -> bool:
    """An admin's KB import (.csv/.xlsx) is never an article or a guideline: the admin router takes it."""
    document = message.document
    return document is None or Path(document.file_name or "").suffix.lower() not in KB_SPREADSHEETS


def _staff(message: Message, service: ChatService, user: users.User | None = None) -> bool:
    """Only staff are ever put in a verification state, but the rule (``bot/access.py``) may have changed
    since: a former clinician's message is then an ordinary one."""
    return user is not None and service.is_staff(user)


def _guideline_caption(message: Message) -> bool:
    return (message.caption or "").strip().lower().startswith("/guideline")


@router.message(
    F.document,
    _not_spreadsheet,
    or_f(_guideline_caption, and_f(_staff, StateFilter(Waiting.article, Waiting.guideline))),
)
async def on_document(
    message: Message,
    bot: Bot,
    user: users.User,
    service: ChatService,
    verify_service: VerificationService,
    embedder: Any,
    state: FSMContext,
    raw_state: str | None,
) -> None:
    """A guideline file (after /guideline, or captioned /guideline) or the article to verify."""
    if _guideline_caption(message) or raw_state == Waiting.guideline.state:
        await _guideline(message, bot, service, embedder, state)
        return
    document = message.document
    assert document is not None
    name = document.file_name or "bai-viet.txt"
    if await _usable(message, name, MAX_ARTICLE_BYTES, SUPPORTED_ARTICLE, texts.VERIFY_ARTICLE_TYPES):
        await _start(message, bot, verify_service, user, await download(bot, document.file_id), name, state)


async def _usable(message: Message, name: str, cap: int, supported: Collection[str], wrong_type: str) -> bool:
    """True when the sent file is small enough and of a supported kind; otherwise the sender is told why."""
    assert message.document is not None
    if (message.document.file_size or 0) > cap:
        await message.answer(texts.VERIFY_FILE_TOO_BIG.format(mb=cap // 2**20))
        return False
    if Path(name).suffix.lower() not in supported:
        await message.answer(wrong_type)
        return False
    return True


async def _guideline(
    message: Message, bot: Bot, service: ChatService, embedder: Any, state: FSMContext
) -> None:
    document = message.document
    assert document is not None and message.from_user is not None
    name = document.file_name or "tai-lieu.txt"
    if not await _usable(
        message, name, MAX_GUIDELINE_BYTES, SUPPORTED_GUIDELINE, texts.VERIFY_GUIDELINE_TYPES
    ):
        return
    await bot.send_chat_action(message.chat.id, ChatAction.UPLOAD_DOCUMENT)
    data = await download(bot, document.file_id)
    try:
        result = await import_document(
            service.pool, embedder, data, name, imported_by=f"telegram:{message.from_user.id}"
        )
    except DocumentError as exc:
        await message.answer(html.escape(summary_vi([], [(name, str(exc))])), parse_mode="HTML")
        return
    await _stop_waiting(state)
    await message.answer(html.escape(summary_vi([result], [])), parse_mode="HTML")


@router.message(F.text, ~F.text.startswith("/"), _staff, StateFilter(*WAITING))
async def on_text(
    message: Message,
    bot: Bot,
    user: users.User,
    verify_service: VerificationService,
    state: FSMContext,
    raw_state: str | None,
) -> None:
    """The article (pasted), a reminder that guidelines come as files, or keywords for the open sentence."""
    text = message.text or ""
    if raw_state == Waiting.article.state:
        await _start(message, bot, verify_service, user, text, "", state)
        return
    if raw_state == Waiting.guideline.state:
        await message.answer(texts.VERIFY_GUIDELINE_AS_FILE)
        return
    sid = (await state.get_data()).get("session")
    session = await verify_service.session(int(sid)) if sid else None
    if session is None or session.status != repo.OPEN or session.user_id != user.id:
        await _stop_waiting(state)  # the session ended elsewhere (console, another device)
        raise SkipHandler  # the message is then an ordinary question
    await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
    await _send_item(
        message, await verify_service.research(session.id, text), verify_service, session.id, state
    )


async def _start(
    message: Message,
    bot: Bot,
    service: VerificationService,
    user: users.User,
    data: bytes | str,
    name: str,
    state: FSMContext,
) -> None:
    try:
        # .docx unzipping and sentence splitting are CPU work: off the event loop, like any blocking call.
        filename = name or (pasted_name(data) if isinstance(data, str) else "bai-viet.txt")
        article = await asyncio.to_thread(parse_article, data, filename)
    except DocumentError as exc:
        await message.answer(texts.VERIFY_UNREADABLE.format(error=html.escape(str(exc))), parse_mode="HTML")
        return
    if not article.claims:
        await message.answer(texts.VERIFY_NO_CLAIMS)
        return
    session = await service.start_session(article, user_id=user.id, article_name=name, channel=CHANNEL)
    await message.answer(
        texts.VERIFY_STARTED.format(title=html.escape(article.title), n=len(article.claims)),
        parse_mode="HTML",
    )
    await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
    await _send_item(message, await service.current(session.id), service, session.id, state)


# -- buttons ---------------------------------------------------------------------------------------------


@router.callback_query(VerifyCb.filter())
async def on_button(
    query: CallbackQuery,
    callback_data: VerifyCb,
    bot: Bot,
    user: users.User,
    verify_service: VerificationService,
    state: FSMContext,
) -> None:
    session = await verify_service.session(callback_data.sid)
    message = query.message
    if session is None or session.user_id != user.id or not isinstance(message, Message):
        await query.answer(texts.VERIFY_SESSION_INVALID, show_alert=True)
        return
    if session.status != repo.OPEN:
        await query.answer(texts.VERIFY_SESSION_ENDED)
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
        view = await verify_service.accept(sid, callback_data.idx)
    elif action == "s":
        await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
        view = await verify_service.skip(sid, callback_data.idx)
    elif action == "r":
        await bot.send_chat_action(message.chat.id, ChatAction.TYPING)
        view = await verify_service.research(sid)
    elif action == "q":
        await _stop_waiting(state)
        await _send_report(message, await verify_service.stop(sid))
        return
    else:  # "c": continue an unfinished session
        view = await verify_service.current(sid)
    await _send_item(message, view, verify_service, sid, state)
