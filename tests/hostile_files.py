"""Hostile uploads for the safety tests, built byte by byte with ``zipfile`` (tiny on disk, never committed).

An .xlsx is a zip of a few XML parts; these builders write the minimum Excel needs, so each test controls
exactly what the reader meets: a cell reference far to the right, a part that decompresses a thousand
times, a shared-string table of a million entries. Also the child-process targets of the sandbox tests.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
HEADER = ("MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI")

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    f'<Relationships xmlns="{PKG_REL_NS}"><Relationship Id="rId1" '
    f'Type="{REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK_RELS = (
    f'<Relationships xmlns="{PKG_REL_NS}">'
    f'<Relationship Id="rId1" Type="{REL_NS}/worksheet" Target="worksheets/sheet1.xml"/>'
    f'<Relationship Id="rId2" Type="{REL_NS}/sharedStrings" Target="sharedStrings.xml"/>'
    "</Relationships>"
)


def _workbook(sheet: str) -> str:
    return (
        f'<workbook xmlns="{MAIN_NS}" xmlns:r="{REL_NS}"><sheets>'
        f'<sheet name="{escape(sheet)}" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )


def cell(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{escape(text)}</t></is></c>'


def row(number: int, *cells: str) -> str:
    return f'<row r="{number}">{"".join(cells)}</row>'


def header_row() -> str:
    return row(1, *(cell(f"{col}1", text) for col, text in zip("ABC", HEADER, strict=True)))


def data_row(number: int, code: str, question: str = "Hỏi?", answer: str = "Đáp.") -> str:
    return row(number, cell(f"A{number}", code), cell(f"B{number}", question), cell(f"C{number}", answer))


def write_xlsx(
    path: Path,
    sheet_data: Iterable[str],
    *,
    sheet: str = "patient_dental",
    shared_strings: Iterable[str] | None = None,
    level: int = 9,
) -> Path:
    """A workbook of one sheet whose ``<sheetData>`` is the concatenation of ``sheet_data`` (streamed into
    the archive, so a part of hundreds of megabytes costs no memory to build)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
        zf.writestr("[Content_Types].xml", _CONTENT_TYPES)
        zf.writestr("_rels/.rels", _ROOT_RELS)
        zf.writestr("xl/workbook.xml", _workbook(sheet))
        zf.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            fh.write(f'<worksheet xmlns="{MAIN_NS}"><sheetData>'.encode())
            for piece in sheet_data:
                fh.write(piece.encode())
            fh.write(b"</sheetData></worksheet>")
        if shared_strings is not None:
            with zf.open("xl/sharedStrings.xml", "w", force_zip64=True) as fh:
                fh.write(f'<sst xmlns="{MAIN_NS}">'.encode())
                batch: list[str] = []
                for text in shared_strings:
                    batch.append(f"<si><t>{escape(text)}</t></si>")
                    if len(batch) == 10_000:
                        fh.write("".join(batch).encode())
                        batch = []
                fh.write("".join(batch).encode())
                fh.write(b"</sst>")
    return path


def blank(total: int, chunk: int = 1 << 20) -> Iterable[str]:
    """``total`` characters of spaces in chunks: XML that decompresses a thousand times its packed size."""
    for start in range(0, total, chunk):
        yield " " * min(chunk, total - start)


def write_docx(path: Path, body_xml: Iterable[str]) -> Path:
    """A .docx whose ``word/document.xml`` body is ``body_xml`` (streamed)."""
    ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        zf.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{PKG_REL_NS}"><Relationship Id="rId1" '
            f'Type="{REL_NS}/officeDocument" Target="word/document.xml"/></Relationships>',
        )
        with zf.open("word/document.xml", "w", force_zip64=True) as fh:
            fh.write(f'<w:document xmlns:w="{ns}"><w:body>'.encode())
            for piece in body_xml:
                fh.write(piece.encode())
            fh.write(b"</w:body></w:document>")
    return path


def paragraph(text: str) -> str:
    return f"<w:p><w:r><w:t>{escape(text)}</w:t></w:r></w:p>"


# --- targets the sandbox tests run in a child process ------------------------------------------------------


def allocate(megabytes: int) -> int:
    """Hold ``megabytes`` of memory at once (a parser that blows up)."""
    block = bytearray(megabytes * 1024 * 1024)
    return len(block)


def spin() -> None:
    """Never return (a parser stuck in a loop)."""
    while True:
        pass


def die() -> None:
    """End the interpreter abruptly (a parser that crashes it)."""
    os.abort()


def echo(value: object, progress: object = None) -> object:
    """Return ``value``, reporting two progress steps first."""
    if callable(progress):
        progress("validate", 1, 2)
        progress("validate", 2, 2)
    return value


def refuse(text: str) -> None:
    raise ValueError(text)
