"""Admin features: KB import from a sent .xlsx/.csv (dry run → "Nhập"/"Huỷ" → progress → summary),
/stats (+ PNG chart), /unanswered (tap to answer → new KB entry), /kb_add, /reload, /import, /duyetkb (the
clinic's doctors reviewed a role's sample entries: ``kb_import.review``), /hoantac (undo a role's last import:
``kb_import.undo``).

A file that would hide a large share of a role (``kb_import.limits.large_hide``) is never imported by the
plain "Nhập": the dry run offers instead a separate confirmation naming how many entries it hides ("⚠️ Nhập
và ẩn N mục", the import's ``force``), "➕ Chỉ thêm và cập nhật" (``keep_missing``) and "Huỷ". The pending
action (a slot of the chat's state, ``bot.telegram.states``) records whether the confirmation was offered, so a forged "force" on an ordinary file is an ordinary
import (refused if it would hide a large share).

A file that would undo changes made in the clinic console (a doctor's edit overwritten, an entry a doctor
created or showed again hidden, …: ``kb_import.console_changes``) is listed at the end of the dry run, right
above the buttons, and the first button is "🛡 Chỉ nhập các mục chưa sửa trên trang quản trị" (the import's
``keep_console_edits``); the plain import then reads "⚠️ Nhập cả tệp (bỏ N thay đổi trên trang quản trị)".

A KB entry made from /unanswered is the admin's own writing, never the patient's message copied by the bot:
the KB's questions are offered to other patients as suggestions and sent to the LLM, and a patient's
/xoadulieu must leave nothing of their words behind. The prompt shows the patient's message as a draft to
copy and edit; the admin replies "câu hỏi | câu trả lời" (the chat state, ``Waiting.kb_answer``, remembers
which of the bot's prompts asks about which message: a reply to anything else is no answer). A reply with the answer alone stores nothing yet:
the bot shows the draft again and adds the entry only when the admin taps "Dùng câu hỏi này", confirming that
wording as theirs (the pending action, a chat state slot, holds the message id and the admin's answer, not the patient's text,
which is read again at that moment — so a question erased meanwhile is not added).

Every handler here is authorised by ``AdminMiddleware`` (inner middleware: it runs only once a handler
matched), so a non-admin sending an admin command, a document or an admin callback gets a refusal and
nothing changes — the menu is never the only guard.
"""

from __future__ import annotations

import html
import logging
import time
import uuid

from aiogram import Bot, F, Router
from aiogram.filters import Command, CommandObject, StateFilter
from aiogram.fsm.context import FSMContext
from aiogram.types import (
    BufferedInputFile,
    CallbackQuery,
    ForceReply,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
)
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot import charts, llm_selfcheck
from bot.service import ChatService
from bot.telegram import kb_adapter, texts
from bot.telegram.callbacks import ImportCb, KbDraftCb, UnansweredCb
from bot.telegram.commands import set_menus
from bot.telegram.middlewares import AdminMiddleware
from bot.telegram.render import short
from bot.telegram.roles import role_label
from bot.telegram.session import download
from bot.telegram.states import IMPORT, KB_DRAFT, Waiting, forget_prompt, put_slot, remember_prompt, take_slot
from db import kb, stats
from db.settings import Settings
from db.users import User
from engine import Embedder, KBEntry
from kb_import import decision
from kb_import.add import add_entries
from kb_import.limits import MAX_SPREADSHEET_BYTES
from kb_import.review import mark_role_reviewed
from kb_import.undo import describe, undo_last_import, undoable

log = logging.getLogger("medbot.telegram.admin")
DRAFT_CHARS = 300  # the drafted KB question: the patient's message on one line, at most this long


async def _prompt_answer(message: Message, bot: Bot, state: FSMContext) -> dict[str, int] | bool:
    """A reply to one of this bot's answer prompts (``Waiting.kb_answer``; the chat state remembers which
    prompt asks about which message): ``{"prompt_id", "message_id"}``. A reply to anything else, a typed
    "#Q123" or a quoted prompt is no answer."""
    prompt = message.reply_to_message
    if prompt is None or prompt.from_user is None or prompt.from_user.id != bot.id:
        return False
    message_id = ((await state.get_data()).get("prompts") or {}).get(str(prompt.message_id))
    return {"prompt_id": prompt.message_id, "message_id": int(message_id)} if message_id else False


def build(settings: Settings) -> Router:
    router = Router(name="admin")
    router.message.middleware(AdminMiddleware())
    router.callback_query.middleware(AdminMiddleware())
    router.message.register(import_howto, Command("import"))
    router.message.register(document, F.document)
    router.callback_query.register(import_decision, ImportCb.filter())
    router.message.register(show_stats, Command("stats"))
    router.message.register(show_unanswered, Command("unanswered"))
    router.callback_query.register(answer_prompt, UnansweredCb.filter())
    router.message.register(
        answer_reply, StateFilter(Waiting.kb_answer), F.text, ~F.text.startswith("/"), _prompt_answer
    )
    router.callback_query.register(draft_decision, KbDraftCb.filter())
    router.message.register(kb_add, Command("kb_add"))
    router.message.register(reload, Command("reload"))
    router.message.register(kb_reviewed, Command("duyetkb"))
    router.message.register(undo_import, Command("hoantac"))
    return router


def _role_for(user: User, service: ChatService) -> str:
    return user.role or service.default_role


# ---------------------------------------------------------------- import
async def import_howto(message: Message) -> None:
    await message.answer(texts.IMPORT_HOWTO)


async def document(message: Message, bot: Bot, user: User, service: ChatService, state: FSMContext) -> None:
    doc = message.document
    assert doc is not None
    name = doc.file_name or "tep"
    if not name.lower().endswith((".xlsx", ".csv")):
        await message.answer(texts.IMPORT_BAD_TYPE)
        return
    if (doc.file_size or 0) > MAX_SPREADSHEET_BYTES:
        await message.answer(texts.IMPORT_TOO_BIG.format(mb=MAX_SPREADSHEET_BYTES // 2**20))
        return
    status = await message.answer(texts.IMPORT_CHECKING.format(name=html.escape(name)))
    data = await download(bot, doc.file_id)
    report = await kb_adapter.dry_run(service.pool, data, name, requested_by=f"telegram:{user.external_id}",
                                      default_role=_role_for(user, service), roles=service.roles)  # fmt: skip
    markup = None
    if report.ok:
        confirm = report.needs_confirmation
        token = await put_slot(state, IMPORT, file_id=doc.file_id, name=name, confirm=confirm)

        def button(text: str, action: str) -> InlineKeyboardButton:
            return InlineKeyboardButton(text=text, callback_data=ImportCb(action=action, token=token).pack())

        offered = decision.choices(
            needs_confirmation=confirm, hidden=report.hidden, console_changes=report.console_changes
        )
        if confirm:  # a large share of a role would be hidden: a separate, explicit confirmation
            labels = {
                decision.FORCE: texts.IMPORT_FORCE.format(n=report.hidden),
                decision.KEEP: texts.IMPORT_KEEP,
            }
            rows = [*([button(labels[d], d)] for d in offered), [button(texts.IMPORT_CANCEL, "no")]]
        elif decision.KEEP_EDITS in offered:  # it would undo console changes: keeping them comes first
            undoing = texts.IMPORT_CONFIRM_UNDOING.format(n=report.console_changes)
            rows = [
                [button(texts.IMPORT_KEEP_EDITS, decision.KEEP_EDITS)],
                [button(undoing, decision.IMPORT)],
            ]
            if decision.KEEP in offered:
                rows.append([button(texts.IMPORT_KEEP, decision.KEEP)])
            rows.append([button(texts.IMPORT_CANCEL, "no")])
        else:
            rows = [[button(texts.IMPORT_CONFIRM, decision.IMPORT), button(texts.IMPORT_CANCEL, "no")]]
            # a few entries would be hidden: adding and updating only is one tap away
            if decision.KEEP in offered:
                rows.insert(1, [button(texts.IMPORT_KEEP, decision.KEEP)])
        markup = InlineKeyboardMarkup(inline_keyboard=rows)
    await status.edit_text(html.escape(report.text), reply_markup=markup)


async def import_decision(
    query: CallbackQuery,
    callback_data: ImportCb,
    bot: Bot,
    user: User,
    service: ChatService,
    state: FSMContext,
    embedder: Embedder,
) -> None:
    chat_id = query.message.chat.id if query.message else query.from_user.id
    job = await take_slot(state, IMPORT, callback_data.token)
    if job is None:
        await query.answer(texts.IMPORT_EXPIRED, show_alert=True)
        return
    if isinstance(query.message, Message):
        await query.message.edit_reply_markup(reply_markup=None)  # the buttons are used up
    flags = decision.import_flags(callback_data.action, confirm_offered=bool(job.get("confirm")))
    if flags is None:
        await query.answer()
        await bot.send_message(chat_id, texts.IMPORT_CANCELLED)
        return
    force, keep_missing, keep_edits = flags  # force only when the confirmation was offered
    await query.answer(texts.IMPORT_STARTED)
    name = str(job["name"])
    progress_msg = await bot.send_message(
        chat_id, texts.IMPORT_PROGRESS.format(name=html.escape(name), done=0, total="?", pct=0)
    )
    shown = {"text": progress_msg.text or "", "at": 0.0}

    async def progress(done: int, total: int) -> None:
        text = texts.IMPORT_PROGRESS.format(
            name=html.escape(name), done=done, total=total, pct=done * 100 // max(total, 1)
        )
        now = time.monotonic()
        if text != shown["text"] and (now - shown["at"] >= 1.0 or done == total):
            shown.update(text=text, at=now)
            await progress_msg.edit_text(text)

    try:
        data = await download(bot, str(job["file_id"]))
        report = await kb_adapter.run_import(service.pool, data, name, requested_by=f"telegram:{user.external_id}",
                                             default_role=_role_for(user, service), roles=service.roles,
                                             progress=progress, embedder=embedder, force=force,
                                             keep_missing=keep_missing, keep_console_edits=keep_edits)  # fmt: skip
        summary = html.escape(report.text)
    except Exception as exc:
        log.exception("import.failed file=%s", name)
        summary = texts.IMPORT_FAILED.format(error=html.escape(str(exc)[:300]))
    if summary != shown["text"]:
        await progress_msg.edit_text(summary)


# ---------------------------------------------------------------- stats
async def show_stats(message: Message, service: ChatService, settings: Settings) -> None:
    lines = ["📊 <b>Thống kê</b>"]
    for days in (7, 30):
        w = await stats.window(service.pool, days)
        topics = ", ".join(f"{html.escape(t)} ({n})" for t, n in w.top_topics) or "—"
        lines.append(
            f"\n<b>{days} ngày qua</b>\n"
            f"• Người dùng hoạt động: {w.users} (mới: {w.new_users})\n"
            f"• Tin nhắn: {w.messages}\n"
            f"• Trả lời được: {w.answered} · Cần hỏi lại: {w.clarified}\n"
            f"• Đánh giá: 👍 {w.thumbs_up} · 👎 {w.thumbs_down}\n"
            f"• Chủ đề hàng đầu: {topics}"
        )
    llm_note = llm_selfcheck.stats_note(settings)  # LLM steps switched off by the self-check or LLM_STEPS
    if llm_note:
        lines.append("\n" + html.escape(llm_note))
    await message.answer("\n".join(lines))
    png = await charts.messages_chart(await stats.daily_messages(service.pool, 30))
    await message.answer_photo(BufferedInputFile(png, "stats.png"), caption=texts.STATS_CAPTION)


# ---------------------------------------------------------------- unanswered
async def show_unanswered(message: Message, service: ChatService, settings: Settings) -> None:
    items = await stats.unanswered(service.pool, settings.score_threshold)
    if not items:
        await message.answer(texts.UNANSWERED_NONE)
        return
    lines = [texts.UNANSWERED_HEAD]
    kb_ = InlineKeyboardBuilder()
    for n, item in enumerate(items, 1):
        why = "👎" if item.thumbs_down else f"điểm {item.score or 0:.2f}"
        lines.append(
            f"{n}. {html.escape(short(item.text, 150))} <i>({html.escape(role_label(item.role))}, {why})</i>"
        )
        kb_.button(text=f"✍️ {n}", callback_data=UnansweredCb(message_id=item.message_id).pack())
    kb_.adjust(5)
    await message.answer("\n".join(lines), reply_markup=kb_.as_markup())


def _draft(text: str) -> str:
    """The question the bot suggests for the KB entry: the patient's message on one line, shortened."""
    return short(text, DRAFT_CHARS)


async def _send_prompt(
    bot: Bot, chat_id: int, message_id: int, text: str, role: str | None, state: FSMContext
) -> None:
    prompt = texts.UNANSWERED_PROMPT.format(id=message_id, label=html.escape(role_label(role)),
                                            draft=html.escape(_draft(text)))  # fmt: skip
    sent = await bot.send_message(
        chat_id, prompt, reply_markup=ForceReply(input_field_placeholder="câu hỏi | câu trả lời")
    )
    await remember_prompt(state, sent.message_id, message_id)


async def answer_prompt(
    query: CallbackQuery, callback_data: UnansweredCb, bot: Bot, service: ChatService, state: FSMContext
) -> None:
    found = await stats.incoming_message(service.pool, callback_data.message_id)
    if found is None:
        await query.answer(texts.UNANSWERED_GONE, show_alert=True)
        return
    await query.answer()
    text, role = found
    chat_id = query.message.chat.id if query.message else query.from_user.id
    await _send_prompt(bot, chat_id, callback_data.message_id, text, role, state)


async def answer_reply(
    message: Message,
    user: User,
    service: ChatService,
    state: FSMContext,
    prompt_id: int,
    message_id: int,
    embedder: Embedder,
) -> None:
    """The admin's reply to a prompt: "câu hỏi | câu trả lời" adds the entry; an answer alone asks first
    whether the drafted question may be used as the admin's own wording."""
    found = await stats.incoming_message(service.pool, message_id)
    if found is None:
        await forget_prompt(state, prompt_id)
        await message.answer(texts.UNANSWERED_GONE)
        return
    text, role = found
    question, sep, answer = (message.text or "").partition("|")
    if sep:
        if not question.strip() or not answer.strip():
            await message.answer(texts.UNANSWERED_EMPTY)
            return
        await forget_prompt(state, prompt_id)
        await message.answer(
            await _add_answer(service, embedder, user, message_id, role, question.strip(), answer.strip())
        )
        return
    answer = question.strip()
    if not answer:
        await message.answer(texts.UNANSWERED_EMPTY)
        return
    await forget_prompt(state, prompt_id)
    token = await put_slot(state, KB_DRAFT, message_id=message_id, answer=answer)
    markup = InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text=texts.KB_DRAFT_USE, callback_data=KbDraftCb(action="ok", token=token).pack()),
                InlineKeyboardButton(text=texts.KB_DRAFT_EDIT, callback_data=KbDraftCb(action="edit", token=token).pack()),
            ]
        ]
    )  # fmt: skip
    await message.answer(texts.KB_DRAFT_CONFIRM.format(draft=html.escape(_draft(text))), reply_markup=markup)


async def draft_decision(
    query: CallbackQuery,
    callback_data: KbDraftCb,
    bot: Bot,
    user: User,
    service: ChatService,
    state: FSMContext,
    embedder: Embedder,
) -> None:
    chat_id = query.message.chat.id if query.message else query.from_user.id
    job = None
    if callback_data.action in ("ok", "edit"):
        job = await take_slot(state, KB_DRAFT, callback_data.token)
    if job is None:
        await query.answer(texts.KB_DRAFT_EXPIRED, show_alert=True)
        return
    await query.answer()
    if isinstance(query.message, Message):
        await query.message.edit_reply_markup(reply_markup=None)  # the buttons are used up
    message_id, answer = int(job["message_id"]), str(job["answer"])
    found = await stats.incoming_message(service.pool, message_id)
    if found is None:
        await bot.send_message(chat_id, texts.UNANSWERED_GONE)
        return
    text, role = found
    if callback_data.action == "ok":
        await bot.send_message(
            chat_id, await _add_answer(service, embedder, user, message_id, role, _draft(text), answer)
        )
        return
    await bot.send_message(
        chat_id,
        texts.KB_DRAFT_REWRITE.format(
            answer=html.escape(answer if len(answer) <= 3000 else answer[:2999] + "…")
        ),
    )
    await _send_prompt(bot, chat_id, message_id, text, role, state)


async def _add_answer(
    service: ChatService,
    embedder: Embedder,
    user: User,
    message_id: int,
    role: str | None,
    question: str,
    answer: str,
) -> str:
    """Add the admin's entry for question ``message_id``; returns the confirmation to show."""
    role = role or _role_for(user, service)
    code = f"TG{message_id}"
    await _add(service, embedder, KBEntry(id=0, role=role, code=code, question=question, answer=answer,
                                topic="Bổ sung qua Telegram"))  # fmt: skip
    return texts.KB_ADDED.format(label=html.escape(role_label(role)), code=html.escape(code))


# ---------------------------------------------------------------- kb_add / reload
async def _add(service: ChatService, embedder: Embedder, entry: KBEntry) -> None:
    """Add one entry as an import would (``kb_import.add``) and log it."""
    await add_entries(service.pool, embedder, [entry])
    log.info("kb.added role=%s code=%s", entry.role, entry.code)


async def kb_add(
    message: Message, command: CommandObject, user: User, service: ChatService, embedder: Embedder
) -> None:
    args = (command.args or "").strip()
    role = _role_for(user, service)
    first, _, rest = args.partition(" ")
    if first in service.roles:
        role, args = first, rest.strip()
    question, sep, answer = args.partition("|")
    if not sep or not question.strip() or not answer.strip():
        await message.answer(texts.KB_ADD_USAGE)
        return
    code = "TGA" + uuid.uuid4().hex[:8].upper()
    await _add(service, embedder, KBEntry(id=0, role=role, code=code, question=question.strip(), answer=answer.strip(),
                                topic="Bổ sung qua Telegram"))  # fmt: skip
    await message.answer(texts.KB_ADDED.format(label=html.escape(role_label(role)), code=code))


async def reload(message: Message, bot: Bot, service: ChatService, settings: Settings) -> None:
    roles = sorted(set(await kb.roles(service.pool)) | set(service.roles))
    async with service.pool.acquire() as conn, conn.transaction():
        for role in roles:
            await kb.bump_version(conn, role)
    await set_menus(bot, service.pool, settings)
    await message.answer(texts.RELOADED.format(n=len(roles)))


# ---------------------------------------------------------------- duyetkb
def _pending_text(pending: dict[str, int]) -> str:
    if not pending:
        return texts.KB_REVIEWED_NO_PENDING
    items = "\n".join(
        texts.KB_REVIEWED_PENDING_ITEM.format(
            label=html.escape(role_label(role)), role=html.escape(role), n=n
        )
        for role, n in pending.items()
    )
    return texts.KB_REVIEWED_PENDING.format(items=items)


async def kb_reviewed(message: Message, command: CommandObject, user: User, service: ChatService) -> None:
    name = (command.args or "").strip()
    if not name:
        pending = await kb.sample_counts(service.pool)
        await message.answer(texts.KB_REVIEWED_USAGE + "\n\n" + _pending_text(pending))
        return
    result = await mark_role_reviewed(
        service.pool, name, requested_by=f"telegram:{user.external_id}", extra_roles=service.roles
    )
    if result.role is None:
        reply = texts.KB_REVIEWED_UNKNOWN.format(name=html.escape(name))
        await message.answer(reply + "\n\n" + _pending_text(result.pending))
    elif result.marked == 0:
        await message.answer(texts.KB_REVIEWED_NONE.format(label=html.escape(role_label(result.role))))
    else:
        label = html.escape(role_label(result.role))
        await message.answer(texts.KB_REVIEWED.format(n=result.marked, label=label))


# ---------------------------------------------------------------- hoantac
async def undo_import(message: Message, command: CommandObject, user: User, service: ChatService) -> None:
    """``/hoantac ROLE``: undo the role's last import; without a role, what can be undone."""
    name = (command.args or "").strip()
    if not name:
        items = "\n".join(
            texts.UNDO_CHOICE_ITEM.format(
                role=html.escape(u.role), what=html.escape(describe(u)[1]), n=u.changed
            )
            for u in await undoable(service.pool)
        )
        await message.answer(texts.UNDO_USAGE + "\n\n" + (texts.UNDO_CHOICES.format(items=items) if items
                                                            else texts.UNDO_NOTHING))  # fmt: skip
        return
    result = await undo_last_import(
        service.pool, name, requested_by=f"telegram:{user.external_id}", extra_roles=service.roles
    )
    reply = html.escape(result.message_vi)
    await message.answer(reply + ("\n" + texts.UNDO_REDO if result.ok else ""))
