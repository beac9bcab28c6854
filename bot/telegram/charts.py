"""The /stats chart: messages per day over 30 days as a PNG (matplotlib, Agg backend, off the event loop)."""

from __future__ import annotations

import asyncio
import io
from datetime import date


def _draw(series: list[tuple[date, int]]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.5), dpi=100)
    try:
        ax.bar([d.strftime("%d/%m") for d, _ in series], [n for _, n in series], color="#2a9d8f")
        ax.set_title("Tin nhắn mỗi ngày (30 ngày)")
        ax.set_ylabel("Số tin nhắn")
        ax.tick_params(axis="x", labelrotation=60, labelsize=7)
        ax.yaxis.get_major_locator().set_params(integer=True)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)


async def messages_chart(series: list[tuple[date, int]]) -> bytes:
    return await asyncio.to_thread(_draw, series)
