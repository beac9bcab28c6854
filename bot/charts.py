"""The charts as PNG bytes, drawn in one place for every channel (Telegram's /stats and digest, the console's
statistics page), with matplotlib's object API on the Agg backend: no pyplot state, so a chart may be drawn
off the event loop in any thread.

- ``messages_chart``: the /stats chart, messages per day over 30 days;
- ``hourly_chart``: the daily digest's questions per local hour, the unanswered part highlighted.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from datetime import date
from typing import Any

COLOR = "#2a9d8f"
UNANSWERED_COLOR = "#e76f51"


def _png(size: tuple[float, float], draw: Callable[[Any], None]) -> bytes:
    """A figure of ``size`` inches at 100 dpi with one axes that ``draw`` fills, as PNG bytes."""
    # matplotlib is a heavy third-party import that only chart-drawing processes need: loaded here, lazily.
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=100)
    ax = fig.subplots()
    draw(ax)
    ax.set_ylabel("Số tin nhắn")
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _daily(series: list[tuple[date, int]]) -> bytes:
    def draw(ax: Any) -> None:
        ax.bar([d.strftime("%d/%m") for d, _ in series], [n for _, n in series], color=COLOR)
        ax.set_title("Tin nhắn mỗi ngày (30 ngày)")
        ax.tick_params(axis="x", labelrotation=60, labelsize=7)

    return _png((8, 3.5), draw)


async def messages_chart(series: list[tuple[date, int]]) -> bytes:
    """Messages per day (oldest first) as a bar chart, drawn off the event loop."""
    return await asyncio.to_thread(_daily, series)


def hourly_chart(day: date, hourly_in: list[int], hourly_unanswered: list[int]) -> bytes:
    """Questions per local hour of ``day`` (24 values each), the unanswered part stacked on top."""
    answered = [max(0, a - u) for a, u in zip(hourly_in, hourly_unanswered, strict=True)]

    def draw(ax: Any) -> None:
        hours = list(range(24))
        ax.bar(hours, answered, color=COLOR, label="Tin nhắn (đã trả lời)")
        ax.bar(hours, hourly_unanswered, bottom=answered, color=UNANSWERED_COLOR, label="Chưa trả lời tốt")
        ax.set_xticks(range(0, 24, 2))
        ax.set_xlim(-0.6, 23.6)
        ax.set_xlabel("Giờ trong ngày")
        ax.set_title(f"Tin nhắn theo giờ — {day:%d/%m/%Y}")
        ax.legend(loc="upper left", fontsize=8)

    return _png((8, 3.6), draw)
