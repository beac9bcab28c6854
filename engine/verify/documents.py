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

Untrusted files: a document may be at most ``MAX_DOCUMENT_BYTES`` (callers pass a smaller cap for articles).
A .docx is a zip archive: the sizes its parts declare are checked before python-docx opens it
(``engine.untrusted.check_zip`` with ``DOCX_ZIP_LIMITS``: the sum of the decompressed parts and the
compression ratio, the mark of a "zip bomb"). .docx and .pdf files are then parsed in a child process capped
at ``PARSE_MEMORY_BYTES`` of memory and ``PARSE_TIMEOUT_S`` seconds (``engine.sandbox``), so a file that
would still blow up costs only that child. Every ``DocumentError`` carries a Vietnamese message for the
clinician (a damaged file, a format, an encoding, a limit named with its value), written to follow "Không
đọc được bài viết: …" or "không nhập được (…)"; the technical cause goes to the log.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from engine import sandbox
from engine.text import nfc_lines, squash
from engine.untrusted import MB, UnsafeFile, ZipLimits, check_size, check_zip

SUPPORTED_ARTICLE = (".txt", ".md", ".docx")
SUPPORTED_GUIDELINE = (".txt", ".md", ".docx", ".pdf")
MAX_DOCUMENT_BYTES = 20 * MB  # a guideline document (a national guideline PDF can be long)
DOCX_ZIP_LIMITS = ZipLimits(max_uncompressed_bytes=100 * MB, max_ratio=100, max_members=2000)
PARSE_MEMORY_BYTES = 1024 * MB
PARSE_TIMEOUT_S = 120.0

log = logging.getLogger("medbot.verify")


class DocumentError(ValueError):
    """The file cannot be read as a document (unsupported format, damaged file, no text, over a limit); the
    message is Vietnamese, for the clinician, starting in lower case."""


def unreadable(kind: str, exc: BaseException) -> DocumentError:
    """A damaged or mislabelled ``.docx``/``.pdf``: the cause logged, a Vietnamese message for the clinician."""
    log.info("document.unreadable kind=%s error=%s", kind, type(exc).__name__)
    what = "Word" if kind == "docx" else "PDF"
    return DocumentError(f"tệp .{kind} bị hỏng hoặc không phải tệp {what} thật — thử mở tệp rồi lưu lại")


def unsupported(suffix: str, accepted: str) -> DocumentError:
    return DocumentError(
        f"định dạng “{suffix or 'không có đuôi'}” chưa được hỗ trợ — hãy dùng tệp {accepted}"
    )


def limit_error(exc: UnsafeFile) -> DocumentError:
    """A refused file as a ``DocumentError`` whose text reads after "Không đọc được bài viết: "."""
    text = exc.message_vi.rstrip(".")
    return DocumentError(text[:1].lower() + text[1:])


def _isolated(target: str, data: bytes) -> list[Block]:
    """Parse ``data`` with ``target`` in a memory- and time-capped child process."""
    try:
        return sandbox.call(target, data, memory_bytes=PARSE_MEMORY_BYTES, timeout_s=PARSE_TIMEOUT_S)
    except sandbox.SandboxError as exc:
        log.warning("document.unsafe target=%s reason=%s %s", target, exc.reason, exc.detail)
        why = {
            "memory": f"cần hơn {PARSE_MEMORY_BYTES // MB} MB bộ nhớ",
            "timeout": f"kéo dài quá {PARSE_TIMEOUT_S:.0f} giây",
        }.get(exc.reason, "trình đọc tệp gặp sự cố")
        raise DocumentError(
            f"không thể đọc tệp một cách an toàn (việc đọc tệp {why} nên đã dừng lại)"
        ) from None


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
    more: list[str] = []  # continuation lines of the last list item, joined once (linear time)

    def close_item() -> None:
        if more:
            blocks[-1].text = squash(" ".join([blocks[-1].text, *more]))
            more.clear()

    def flush() -> None:
        close_item()
        if para:
            joined = squash(" ".join(para))
            if joined:
                blocks.append(Block("paragraph", joined))
            para.clear()

    lines = nfc_lines(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
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
                close_item()
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
                close_item()
                numbered = _NUMBERED_HEADING.match(line) or _ROMAN_HEADING.match(line)
                blocks.append(Block("heading", numbered.group(2).strip() if numbered else line, level))
                continue
        if blocks and blocks[-1].kind == "bullet" and not para and raw.startswith((" ", "\t")):
            more.append(line)  # continuation of a list item
            continue
        para.append(line)
    flush()
    return blocks


def blocks_from_text(text: str, *, markdown: bool = False) -> list[Block]:
    """Blocks of plain text (``markdown=False``) or Markdown."""
    return _text_blocks(text, markdown)


def _docx_blocks(data: bytes) -> list[Block]:
    try:
        check_zip(data, DOCX_ZIP_LIMITS)
    except UnsafeFile as exc:
        raise limit_error(exc) from None
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise unreadable("docx", exc) from exc
    return _isolated("engine.verify.documents:parse_docx", data)


def parse_docx(data: bytes) -> list[Block]:
    """Blocks of a .docx (run in the sandbox's child process by ``read_blocks``)."""
    try:
        import docx  # python-docx, loaded only in the sandbox's child process that parses the file

        document = docx.Document(io.BytesIO(data))
    except MemoryError:
        raise
    except Exception as exc:
        raise unreadable("docx", exc) from exc
    blocks: list[Block] = []
    for paragraph in document.paragraphs:
        text = squash(nfc_lines(paragraph.text))
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


def parse_pdf(data: bytes) -> list[Block]:
    """Blocks of a .pdf (run in the sandbox's child process by ``read_blocks``)."""
    try:
        from pypdf import PdfReader  # loaded only in the sandbox's child process that parses the file

        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except MemoryError:
        raise
    except Exception as exc:
        raise unreadable("pdf", exc) from exc
    blocks: list[Block] = []
    para: list[str] = []
    more: list[str] = []  # continuation lines of the last list item, joined once (linear time)

    def close_item() -> None:
        if more:
            blocks[-1].text = " ".join([blocks[-1].text, *more])
            more.clear()

    def flush() -> None:
        close_item()
        if para:
            blocks.append(Block("paragraph", squash(" ".join(para))))
            para.clear()

    for page in pages:
        for raw in nfc_lines(page).split("\n"):
            line = squash(raw)
            if not line or re.fullmatch(r"\d{1,4}", line):  # blank or a page number
                continue
            is_heading, level = _heading_like(line)
            if is_heading and not para:
                close_item()
                blocks.append(Block("heading", _strip_number(line), level))
                continue
            bullet = _BULLET.match(line)
            if bullet:
                flush()
                blocks.append(Block("bullet", line[bullet.end() :]))
                continue
            last = more[-1] if more else blocks[-1].text if blocks else ""
            if blocks and blocks[-1].kind == "bullet" and not para and not last.endswith(_END_PUNCT):
                more.append(line)
                continue
            para.append(line)
            if line.endswith((".", "!", "?", "…", ":")):
                flush()
        flush()
    return blocks


def _strip_number(line: str) -> str:
    numbered = _NUMBERED_HEADING.match(line) or _ROMAN_HEADING.match(line)
    return numbered.group(2).strip() if numbered else line


def read_blocks(data: bytes | str, filename: str, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> list[Block]:
    """Blocks of a document given its bytes (or text) and its file name (the suffix picks the reader).

    A document over ``max_bytes`` (text: its UTF-8 size) is refused before it is read."""
    suffix = Path(filename).suffix.lower()
    try:
        check_size(len(data) if isinstance(data, bytes) else len(data.encode("utf-8")), max_bytes)
    except UnsafeFile as exc:
        raise limit_error(exc) from None
    if suffix == ".docx":
        if isinstance(data, str):
            raise DocumentError("nội dung .docx phải được gửi dưới dạng tệp, không phải văn bản dán vào")
        return _docx_blocks(data)
    if suffix == ".pdf":
        if isinstance(data, str):
            raise DocumentError("nội dung .pdf phải được gửi dưới dạng tệp, không phải văn bản dán vào")
        return _isolated("engine.verify.documents:parse_pdf", data)
    if suffix in (".md", ".markdown", ".txt", ""):
        if isinstance(data, bytes):
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise DocumentError(
                    "tệp văn bản không dùng bảng mã UTF-8 — hãy lưu lại với bảng mã UTF-8"
                ) from exc
        else:
            text = data
        return blocks_from_text(text, markdown=suffix in (".md", ".markdown"))
    raise unsupported(suffix, ".txt, .md, .docx hoặc .pdf")


def read_file(path: str | Path) -> list[Block]:
    path = Path(path)
    return read_blocks(path.read_bytes(), path.name)
