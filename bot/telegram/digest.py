"""Daily digest to the admins: yesterday's numbers (clinic time zone), the unanswered / low-score and 👎
questions, and a PNG chart of questions per hour — queued in the outbox, two rows per admin (text, photo).

The text quotes patients' questions (and 👎 comments); the payload names the message behind each quote
(``quotes``, format in ``db.digest``) so that when the patient erases their data, or retention deletes the
message, the quote is replaced by ``ERASED_QUOTE`` in the queued or sent row (``db.digest.scrub_quotes``).

The chart is drawn by ``bot.charts``, written to ``$MEDBOT_DATA_DIR/digests/digest-DATE.png``,
and its bytes also travel in the payload (``data_b64``) so a sender on another machine needs no shared disk.
A scheduled run skips a day already sent (a successful ``digest`` run with the same ``date`` in its counts);
``medbot worker --once digest`` sends it again. With no admin known, nothing is queued (counted, logged).
"""

from __future__ import annotations

import asyncio
import base64
import logging
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from bot import charts
from db import jobs as jobs_db
from db import outbox, users
from db.digest import DigestNumbers, numbers
from db.job_context import Counts, JobContext, JobSkipped

log = logging.getLogger("medbot.worker.digest")
# What a digest shows instead of a quote whose message was erased by the patient or deleted by retention.
ERASED_QUOTE = "(nội dung đã được xoá)"


@dataclass
class DigestText:
    text: str
    # {"message_id", "text"}: each quote in ``text`` and the message it came from
    quotes: list[dict[str, Any]]


def clip(text: str | None, limit: int) -> str:
    """One line, at most ``limit`` characters (an ellipsis marks a cut)."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _fmt_ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} ms".replace(",", ".")


def render_text(day: date, n: DigestNumbers, threshold: float) -> DigestText:
    """The digest message (Vietnamese, plain text) and the quotes in it."""
    quotes: list[dict[str, Any]] = []

    def quote(message_id: int | None, text: str | None, limit: int) -> str:
        shown = clip(text, limit)
        if message_id is not None and shown:
            quotes.append({"message_id": message_id, "text": shown})
        return f"“{shown}”"

    answered = n.medical_questions - n.unanswered
    lines = [
        f"📊 Báo cáo ngày {day:%d/%m/%Y} — MedBot VN",
        "",
        f"• Tin nhắn của người dùng: {n.messages_in} (từ {n.active_users} người; {n.new_users} người dùng mới)",
        f"• Câu hỏi y khoa: {n.medical_questions} — trả lời từ kho kiến thức: {answered}, "
        f"chưa trả lời tốt: {n.unanswered}",
        f"• Tin nhắn có dấu hiệu cấp cứu: {n.red_flags}",
        f"• Đánh giá: 👍 {n.thumbs_up} · 👎 {n.thumbs_down}",
        f"• Thời gian trả lời: trung bình {_fmt_ms(n.latency_avg_ms)}, p95 {_fmt_ms(n.latency_p95_ms)}",
    ]
    if n.by_role:
        lines.append("• Theo vai trò: " + ", ".join(f"{role} {count}" for role, count in n.by_role.items()))
    if n.unanswered_questions:
        lines += ["", f"❓ Câu hỏi chưa trả lời tốt (điểm dưới {threshold:g} hoặc không có mã KB):"]
        for i, q in enumerate(n.unanswered_questions, 1):
            score = "—" if q["retrieval_score"] is None else f"{q['retrieval_score']:.2f}"
            lines.append(f"{i}. {quote(q['question_id'], q['question'], 160)} ({q['role']}, điểm {score})")
    if n.disliked:
        lines += ["", "👎 Câu trả lời bị đánh giá không hữu ích:"]
        for i, d in enumerate(n.disliked, 1):
            codes = ", ".join(d["citations"] or []) or "không có mã"
            extra = f" — góp ý: {quote(d['id'], d['comment'], 80)}" if d.get("comment") else ""
            lines.append(
                f"{i}. {quote(d['question_id'], d['question'], 160)} ({d['role']}, mã: {codes}){extra}"
            )
    if not n.messages_in:
        lines += ["", "Hôm qua không có tin nhắn nào."]
    else:
        lines += ["", "Dùng /unanswered để bổ sung câu trả lời vào kho kiến thức."]
    text = outbox.fit("\n".join(lines))
    return DigestText(text, [q for q in quotes if f"“{q['text']}”" in text])  # a line cut by fit() is gone


def _save(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def window(day: date, tz: object) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(0), tzinfo=tz)  # type: ignore[arg-type]
    return start, datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz)  # type: ignore[arg-type]


async def run(ctx: JobContext) -> Counts:
    tz = ctx.worker.tz
    day = ctx.extras.get("digest_date") or (datetime.now(tz).date() - timedelta(days=1))
    if not ctx.manual and await jobs_db.last_ok_with(ctx.pool, "digest", "date", day.isoformat()):
        raise JobSkipped("digest already sent", {"date": day.isoformat()})
    start, end = window(day, tz)
    threshold = ctx.settings.score_threshold
    n = await numbers(
        ctx.pool,
        start,
        end,
        threshold=threshold,
        tz=ctx.worker.worker_timezone,
        top=ctx.worker.worker_digest_top,
    )
    digest_text = render_text(day, n, threshold)
    png = await asyncio.to_thread(charts.hourly_chart, day, n.hourly_in, n.hourly_unanswered)
    folder: Path = ctx.settings.digests_dir
    path = folder / f"digest-{day.isoformat()}.png"
    await asyncio.to_thread(_save, path, png)
    payloads = [
        {
            "type": "text",
            "text": digest_text.text,
            "kind": "digest",
            "quotes": digest_text.quotes,
            "erased_quote": ERASED_QUOTE,
        },
        {
            "type": "photo",
            "path": str(path),
            "filename": path.name,
            "data_b64": base64.b64encode(png).decode("ascii"),
            "caption": f"Tin nhắn theo giờ ngày {day:%d/%m/%Y}",
            "kind": "digest",
        },
    ]
    admins = await users.admin_chat_ids(ctx.pool, ctx.settings)
    if not admins:
        log.warning("digest.no_admins date=%s (set ADMIN_IDS)", day)
    async with ctx.pool.acquire() as conn, conn.transaction():
        queued = await outbox.enqueue_to_all(conn, admins, payloads)
    return {
        "date": day.isoformat(),
        "admins": len(admins),
        "outbox_rows": queued,
        "chart": str(path),
        **n.counts(),
    }
