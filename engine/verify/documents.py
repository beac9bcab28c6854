"""Document readers shared by guideline import and article verification: a file → a list of ``Block``.

A block is a heading (with its level), a paragraph or a bullet (list item, marker removed). Formats:

* ``.md``: ``#`` headings, ``-``/``*``/``+``/``•`` and ``1.``/``a)`` list items, blank-line paragraphs;
  a line that is entirely bold (``**Title**``) is a heading one level below the current one.
* ``.txt`` and pasted text: blank-line paragraphs; a short stand-alone line without final punctuation is a
  heading (an ALL-CAPS or Roman-numbered line is level 1, ``1.`` level 2, ``1.2`` level 3, others level 2);
  list markers as in Markdown.
* ``.docx`` (python-docx): paragraph styles ``Title``/``Heading N`` are headings, ``List …`` styles and
  typed list markers are bullets.
* ``.pdf`` (pypdf): text per page; layout line breaks are joined into paragraphs (a line ending with
  sentence punctuation closes a paragraph), short unpunctuated lines standing between paragraphs are headings.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from engine.verify._text import nfc, squash

SUPPORTED_ARTICLE = (".txt", ".md", ".docx")
SUPPORTED_GUIDELINE = (".txt", ".md", ".docx", ".pdf")


class DocumentError(ValueError):
    """The file cannot be read as a document (unsupported format, damaged file, no text)."""


@dataclass(slots=True)
class Block:
    kind: str  # "heading" | "paragraph" | "bullet"
    text: str
    level: int = 0  # heading level (1 = top); 0 for paragraphs and bullets


_BULLET = re.compile(r"^\s*(?:[-*+•◦▪–]|\d{1,2}[.)]|[a-zđ][.)])\s+(?=\S)", re.IGNORECASE)
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_BOLD_LINE = re.compile(r"^\*\*(.+?)\*\*:?\s*$")
_NUMBERED_HEADING = re.compile(r"^((?:\d{1,2}\.)*\d{1,2})\.?\s+(\S.*)$")
_ROMAN_HEADING = re.compile(r"^([IVXLC]{1,5})[.)]\s+(\S.*)$")
_END_PUNCT = (".", "!", "?", "…", ":", ";", ",", '"', "”", ")")


def _strip_md_inline(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), text)
    text = re.sub(r"(?<!\w)[*_](\S(?:.*?\S)?)[*_](?!\w)", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)


def _heading_like(line: str) -> tuple[bool, int]:
    """Whether a stand-alone plain-text line reads as a heading, and its level."""
    text = line.strip()
    if not text or len(text) > 90 or len(text.split()) > 14 or text.endswith(_END_PUNCT):
        return False, 0
    if _BULLET.match(text) and not _NUMBERED_HEADING.match(text):
        return False, 0
    numbered = _NUMBERED_HEADING.match(text)
    if numbered:
        return True, min(6, numbered.group(1).count(".") + 2)
    if _ROMAN_HEADING.match(text):
        return True, 1
    letters = [c for c in text if c.isalpha()]
    if letters and all(c.isupper() for c in letters):
        return True, 1
    return True, 2


def _text_blocks(text: str, markdown: bool) -> list[Block]:
    blocks: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            joined = squash(" ".join(para))
            if joined:
                blocks.append(Block("paragraph", joined))
            para.clear()

    lines = nfc(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for i, raw in enumerate(lines):
        line = raw.strip()
        if markdown:
            line = line.rstrip("\\").strip()
        if not line:
            flush()
            continue
        if markdown:
            heading = _MD_HEADING.match(line)
            if heading:
                flush()
                blocks.append(
                    Block("heading", squash(_strip_md_inline(heading.group(2))), len(heading.group(1)))
                )
                continue
            bold = _MD_BOLD_LINE.match(line)
            if bold and not para:
                level = next((b.level for b in reversed(blocks) if b.kind == "heading"), 1) + 1
                blocks.append(Block("heading", squash(bold.group(1)), min(level, 6)))
                continue
            if re.fullmatch(r"[-*_=]{3,}", line) or line.startswith(("|", "<!--", "![")):
                flush()
                continue
            line = _strip_md_inline(line.lstrip(">").strip())
        bullet = _BULLET.match(line)
        if bullet:
            standalone = not para and (i + 1 >= len(lines) or not lines[i + 1].strip())
            is_heading, level = _heading_like(line)
            if not markdown and standalone and is_heading and _NUMBERED_HEADING.match(line):
                flush()
                blocks.append(Block("heading", _NUMBERED_HEADING.match(line).group(2).strip(), level))  # type: ignore[union-attr]
                continue
            flush()
            blocks.append(Block("bullet", squash(line[bullet.end() :])))
            continue
        if not markdown and not para:
            standalone = i + 1 >= len(lines) or not lines[i + 1].strip()
            is_heading, level = _heading_like(line)
            if standalone and is_heading:
                numbered = _NUMBERED_HEADING.match(line) or _ROMAN_HEADING.match(line)
                blocks.append(Block("heading", numbered.group(2).strip() if numbered else line, level))
                continue
        if blocks and blocks[-1].kind == "bullet" and not para and raw.startswith((" ", "\t")):
            blocks[-1].text = squash(blocks[-1].text + " " + line)  # continuation of a list item
            continue
        para.append(line)
    flush()
    return blocks


def blocks_from_text(text: str, *, markdown: bool = False) -> list[Block]:
    """Blocks of plain text (``markdown=False``) or Markdown."""
    return _text_blocks(text, markdown)


def _docx_blocks(data: bytes) -> list[Block]:
    try:
        import docx  # python-docx

        document = docx.Document(io.BytesIO(data))
    except Exception as exc:
        raise DocumentError(f"not a readable .docx file ({exc.__class__.__name__})") from exc
    blocks: list[Block] = []
    for paragraph in document.paragraphs:
        text = squash(nfc(paragraph.text))
        if not text:
            continue
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        lowered = style.lower()
        heading = re.match(r"heading\s*(\d)", lowered)
        if lowered == "title":
            blocks.append(Block("heading", text, 1))
        elif heading:
            blocks.append(Block("heading", text, int(heading.group(1))))
        elif lowered.startswith("list") or (
            paragraph._p.pPr is not None and paragraph._p.pPr.numPr is not None
        ):
            marker = _BULLET.match(text)
            blocks.append(Block("bullet", text[marker.end() :] if marker else text))
        elif _BULLET.match(text):
            blocks.append(Block("bullet", text[_BULLET.match(text).end() :]))  # type: ignore[union-attr]
        else:
            blocks.append(Block("paragraph", text))
    return blocks


def _pdf_blocks(data: bytes) -> list[Block]:
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:
        raise DocumentError(f"not a readable .pdf file ({exc.__class__.__name__})") from exc
    blocks: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(Block("paragraph", squash(" ".join(para))))
            para.clear()

    for page in pages:
        for raw in nfc(page).split("\n"):
            line = squash(raw)
            if not line or re.fullmatch(r"\d{1,4}", line):  # blank or a page number
                continue
            is_heading, level = _heading_like(line)
            if is_heading and not para:
                blocks.append(Block("heading", _strip_number(line), level))
                continue
            bullet = _BULLET.match(line)
            if bullet:
                flush()
                blocks.append(Block("bullet", line[bullet.end() :]))
                continue
            if (
                blocks
                and blocks[-1].kind == "bullet"
                and not para
                and not blocks[-1].text.endswith(_END_PUNCT)
            ):
                blocks[-1].text += " " + line
                continue
            para.append(line)
            if line.endswith((".", "!", "?", "…", ":")):
                flush()
        flush()
    return blocks


def _strip_number(line: str) -> str:
    numbered = _NUMBERED_HEADING.match(line) or _ROMAN_HEADING.match(line)
    return numbered.group(2).strip() if numbered else line


def read_blocks(data: bytes | str, filename: str) -> list[Block]:
    """Blocks of a document given its bytes (or text) and its file name (the suffix picks the reader)."""
    suffix = Path(filename).suffix.lower()
    if suffix == ".docx":
        if isinstance(data, str):
            raise DocumentError(".docx content must be bytes")
        return _docx_blocks(data)
    if suffix == ".pdf":
        if isinstance(data, str):
            raise DocumentError(".pdf content must be bytes")
        return _pdf_blocks(data)
    if suffix in (".md", ".markdown", ".txt", ""):
        if isinstance(data, bytes):
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise DocumentError("the text file is not UTF-8") from exc
        else:
            text = data
        return blocks_from_text(text, markdown=suffix in (".md", ".markdown"))
    raise DocumentError(f"unsupported file type {suffix!r}")


def read_file(path: str | Path) -> list[Block]:
    path = Path(path)
    return read_blocks(path.read_bytes(), path.name)
