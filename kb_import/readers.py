"""Spreadsheet readers: ``.xlsx`` (streaming) and ``.csv`` (encoding and delimiter detected).

A reader turns a file into ``RawSheet`` objects that stream ``(row_number, cells)`` pairs; it knows nothing
about KB columns (``kb_import.validate`` does). Problems that make a whole file unreadable raise
``ReadError`` with a code (``not_a_spreadsheet``, ``empty_file``, ``unreadable``, or a safety limit of
``kb_import.limits``: ``file_too_large``, ``zip_too_large``, ``zip_ratio``, ``zip_members``,
``too_many_rows``, ``too_many_columns``, ``cell_too_long``, ``too_much_text``, ``too_many_shared_strings``,
``shared_strings_too_large``, ``unsafe_file``) for the report. A stop in one row (``too_many_columns``,
``cell_too_long``) says where (sheet, row, column) and carries the row's other values as read, so that
validation, which knows the KB columns, can name the entry's code like any other problem of a data row.

Untrusted input: the file size is checked first, an .xlsx archive's declared part sizes and compression
ratios next (``engine.untrusted.check_zip``), before anything is decompressed; then every limit is enforced
while streaming, so no row, cell or string table is ever built bigger than its cap (a cell reference such as
``ZZZZZ1`` is refused, not padded with millions of empty cells). The import job runs the reader in a
memory-capped child process (``kb_import.isolated``); a ``MemoryError`` met while reading becomes the
``unsafe_file`` problem. Callers in the same process (tests, benchmarks) get the same limits.

xlsx: the sheet XML and the shared strings are streamed with the stdlib expat parser and handlers that keep
only the current row (no element tree, so memory does not grow with the number of XML elements; DTDs are
refused). Cells give the values Excel cached (like openpyxl's ``data_only=True``); a formula saved without
a cached value (files written by scripts, never opened in Excel) would silently read as empty, so its
position is recorded and validation flags it. Number formats are not applied (a date-formatted cell reads as
its serial number); KB columns are text. Workbooks the fast parser does not understand fall back to
openpyxl (read-only, ``data_only=True``, plus a formula-only second pass when the XML contains formulas),
which reads at most ``max_columns`` columns (values further right are ignored there) under the same row and
cell limits.
"""

from __future__ import annotations

import codecs
import csv
import io
import logging
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

from engine.untrusted import UnsafeFile, check_size, check_zip, vn_number
from kb_import.headers import column_letter
from kb_import.limits import DEFAULT_LIMITS, ReadLimits

log = logging.getLogger("medbot.kb_import")

XLSX_EXTENSIONS = {".xlsx", ".xlsm", ".xltx", ".xltm"}
CSV_EXTENSIONS = {".csv", ".tsv", ".txt"}
CSV_DELIMITERS = ",;\t|"
CSV_ENCODINGS = ("utf-8-sig", "cp1258", "latin-1")  # utf-8-sig also reads plain UTF-8

_FORMULA_TAG = re.compile(rb"<(?:[A-Za-z0-9_]+:)?f[\s>/]")
EXCEL_MAX_ROW = 1_048_576  # the last row number Excel allows
_SMALL_PART_BYTES = 16 * 1024 * 1024  # workbook.xml and its relationships are read whole
_CHUNK = 1 << 16
_limits = DEFAULT_LIMITS


def use_limits(limits: ReadLimits) -> None:
    """Set the limits of every later ``open_file`` without an explicit ``limits`` in this process (the
    import's child process calls this with the import's limits)."""
    global _limits
    _limits = limits


class ReadError(Exception):
    """The file cannot be read as a spreadsheet at all.

    A stop in one row says where: ``sheet`` (None for a CSV), ``row`` (1-based), ``column`` (0-based, None
    when not known), and ``cells``, the row's values as read with the offending one left out (None), or None
    when the row could not be read. The messages do not repeat the place (the report shows it beside them).
    """

    def __init__(
        self,
        code: str,
        message: str,
        message_vi: str,
        sheet: str | None = None,
        row: int | None = None,
        column: int | None = None,
        cells: list[Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.message_vi = message_vi
        self.sheet = sheet
        self.row = row
        self.column = column
        self.cells = cells

    def __reduce__(self) -> tuple[type[ReadError], tuple[Any, ...]]:
        return (
            type(self),
            (self.code, self.message, self.message_vi, self.sheet, self.row, self.column, self.cells),
        )


def _unsafe(exc: UnsafeFile) -> ReadError:
    return ReadError(exc.code, exc.message, exc.message_vi)


def memory_error() -> ReadError:
    return ReadError(
        "unsafe_file",
        "the file could not be read safely: reading it needs more memory than an import may use",
        "Không thể đọc tệp một cách an toàn (tệp cần quá nhiều bộ nhớ để đọc); tệp không được nhập, kho kiến "
        "thức giữ nguyên.",
    )


def too_many_columns(
    limits: ReadLimits, sheet: str | None, row: int, col: int, cells: list[Any] | None
) -> ReadError:
    letter = column_letter(col)
    return ReadError(
        "too_many_columns",
        f"a value in column {letter}; at most {limits.max_columns} columns are read",
        f"Bảng tính có quá nhiều cột: tối đa {vn_number(limits.max_columns)} cột (có dữ liệu ở cột {letter}).",
        sheet,
        row,
        col,
        cells,
    )


def too_many_rows(limits: ReadLimits) -> ReadError:
    return ReadError(
        "too_many_rows",
        f"more than {limits.max_rows} rows with data; that is the limit per file",
        f"Tệp có quá nhiều dòng: tối đa {vn_number(limits.max_rows)} dòng có dữ liệu trong một tệp; hãy chia "
        "thành nhiều tệp nhỏ hơn.",
    )


def too_much_text(limits: ReadLimits) -> ReadError:
    n = limits.max_text_chars
    return ReadError(
        "too_much_text",
        f"the cells of the file hold more than {n} characters of text together; that is the limit per file",
        f"Tệp chứa quá nhiều văn bản: tối đa {vn_number(n)} ký tự trong toàn bộ các ô của một tệp; hãy chia "
        "thành nhiều tệp nhỏ hơn.",
    )


def row_beyond_excel(sheet: str | None, row: int) -> ReadError:
    return ReadError(
        "too_many_rows",
        f"row number {row} in sheet {sheet!r} is beyond Excel's last row {EXCEL_MAX_ROW}",
        f"Tệp có quá nhiều dòng: dòng số {vn_number(row)} vượt quá giới hạn {vn_number(EXCEL_MAX_ROW)} dòng "
        "của Excel.",
    )


def cell_too_long(
    limits: ReadLimits, sheet: str | None, row: int, col: int | None, cells: list[Any] | None
) -> ReadError:
    return ReadError(
        "cell_too_long",
        f"a cell longer than {limits.max_cell_chars} characters",
        f"Ô quá dài: tối đa {vn_number(limits.max_cell_chars)} ký tự một ô.",
        sheet,
        row,
        col,
        cells,
    )


def _without(cells: list[Any], col: int) -> list[Any]:
    """The row's values with the one at ``col`` left out (the error carries the rest, not the huge value)."""
    return [None if i == col else v for i, v in enumerate(cells)]


def _row_list(values: dict[int, Any]) -> list[Any]:
    cells: list[Any] = [None] * (max(values) + 1) if values else []
    for col, value in values.items():
        cells[col] = value
    return cells


@dataclass
class RawSheet:
    """One table of a file: a worksheet of a workbook, or the whole CSV (``sheet`` None)."""

    file: str
    sheet: str | None
    rows: Iterator[tuple[int, list[Any]]]  # (1-based row number, cell values)
    formula_cells: set[tuple[int, int]] = field(default_factory=set)  # (row, 0-based column)
    encoding: str | None = None
    delimiter: str | None = None


@dataclass
class Workbook:
    """An opened file; ``close()`` releases the handle openpyxl keeps in read-only mode."""

    path: Path
    kind: str  # "xlsx" | "csv"
    sheets: list[RawSheet]
    _closer: Any = None

    def close(self) -> None:
        if self._closer is not None:
            self._closer.close()
            self._closer = None


def _sniff_kind(path: Path, name: str, head: bytes) -> str:
    ext = Path(name).suffix.lower() or path.suffix.lower()
    if not head:
        raise ReadError("empty_file", "the file is empty", "Tệp rỗng, không có dữ liệu.")
    if head.startswith(b"PK\x03\x04"):
        return "xlsx"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        raise ReadError(
            "not_a_spreadsheet",
            "old .xls (or password-protected) workbook: save it as .xlsx (Excel Workbook) and import again",
            "Tệp Excel định dạng cũ (.xls) hoặc có mật khẩu: hãy lưu lại thành .xlsx rồi gửi lại.",
        )
    if ext in XLSX_EXTENSIONS or head.startswith(b"%PDF") or ext in {".xls", ".pdf", ".docx", ".doc", ".zip"}:
        raise ReadError(
            "not_a_spreadsheet",
            f"{name} is not an Excel workbook (.xlsx) or a CSV file",
            f"Tệp {name} không phải bảng tính Excel (.xlsx) hay CSV.",
        )
    return "csv"


def open_file(path: Path, name: str | None = None, limits: ReadLimits | None = None) -> Workbook:
    """Open ``path`` as a spreadsheet, detecting xlsx or csv by content first, extension second.

    ``name`` is the file name shown in messages (e.g. the original name of a file a chat user uploaded);
    ``limits`` default to this process's (``use_limits``), normally ``kb_import.limits.DEFAULT_LIMITS``."""
    name = name or path.name
    limits = limits or _limits
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise ReadError("unreadable", f"cannot read the file: {exc.strerror}", "Không đọc được tệp.") from exc
    kind = _sniff_kind(path, name, head)
    try:
        check_size(size, limits.max_file_bytes)
    except UnsafeFile as exc:
        raise _unsafe(exc) from None
    return _open_xlsx(path, name, limits) if kind == "xlsx" else _open_csv(path, name, limits)


class _RowCounter:
    """Rows holding a value and characters of text, over all sheets of one file (the limits are per file)."""

    __slots__ = ("chars", "limits", "n")

    def __init__(self, limits: ReadLimits) -> None:
        self.limits = limits
        self.n = 0
        self.chars = 0

    def add(self, chars: int) -> None:
        self.n += 1
        self.chars += chars
        if self.n > self.limits.max_rows:
            raise too_many_rows(self.limits)
        if self.chars > self.limits.max_text_chars:
            raise too_much_text(self.limits)


def _bounded(
    rows: Iterable[tuple[int, list[Any]]], sheet: str | None, limits: ReadLimits, counter: _RowCounter
) -> Iterator[tuple[int, list[Any]]]:
    """The row, cell and memory limits around a row stream that does not enforce them itself (openpyxl)."""
    try:
        for number, cells in rows:
            if number > EXCEL_MAX_ROW:
                raise row_beyond_excel(sheet, number)
            has_value = False
            chars = 0
            for col, value in enumerate(cells):
                if value is None or value == "":
                    continue
                has_value = True
                if isinstance(value, str):
                    chars += len(value)
                    if len(value) > limits.max_cell_chars:
                        raise cell_too_long(limits, sheet, number, col, _without(list(cells), col))
            if has_value:
                counter.add(chars)
            yield number, cells
    except MemoryError:
        raise memory_error() from None


# --- xlsx -------------------------------------------------------------------------------------------------


def _has_formulas(path: Path) -> bool:
    """Whether any worksheet XML contains a formula element (a fast byte scan, no XML parsing)."""
    with zipfile.ZipFile(path) as zf:
        for member in zf.namelist():
            if not (member.startswith("xl/worksheets/") and member.endswith(".xml")):
                continue
            with zf.open(member) as fh:
                tail = b""
                while chunk := fh.read(1 << 20):
                    if _FORMULA_TAG.search(tail + chunk):
                        return True
                    tail = chunk[-32:]
    return False


def _formula_positions(path: Path, limits: ReadLimits) -> dict[str, set[tuple[int, int]]]:
    """Per sheet title, the (row, column) of every formula cell (second pass, formulas as text)."""
    import openpyxl

    out: dict[str, set[tuple[int, int]]] = {}
    wb = openpyxl.load_workbook(path, read_only=True, data_only=False)
    try:
        for ws in wb.worksheets:
            ws.reset_dimensions()
            cells: set[tuple[int, int]] = set()
            for r, row in enumerate(ws.iter_rows(max_col=limits.max_columns), start=1):
                if r > EXCEL_MAX_ROW:
                    raise row_beyond_excel(ws.title, r)
                for c, cell in enumerate(row):
                    if getattr(cell, "data_type", None) == "f":
                        cells.add((r, c))
            out[ws.title] = cells
    finally:
        wb.close()
    return out


def _open_xlsx(path: Path, name: str, limits: ReadLimits) -> Workbook:
    try:
        check_zip(path, limits.zip)
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
        if "xl/workbook.xml" not in names:
            raise ReadError(
                "not_a_spreadsheet",
                f"{name} is a zip archive but not an Excel workbook (no xl/workbook.xml)",
                f"Tệp {name} không phải bảng tính Excel (.xlsx).",
            )
        try:
            return _open_xlsx_fast(path, name, limits)
        except (ReadError, MemoryError):
            raise
        except Exception as exc:  # unusual layout: let openpyxl try
            log.info("xlsx fast reader declined %s (%s: %s); using openpyxl", name, type(exc).__name__, exc)
        import openpyxl  # only for the fallback: it is slow to import (and imports numpy)

        formulas = _formula_positions(path, limits) if _has_formulas(path) else {}
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except UnsafeFile as exc:
        raise _unsafe(exc) from None
    except ReadError:
        raise
    except MemoryError:
        raise memory_error() from None
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise ReadError(
            "not_a_spreadsheet",
            f"{name} cannot be opened as an Excel workbook ({type(exc).__name__}: {exc})",
            f"Không mở được tệp {name} như bảng tính Excel (tệp hỏng hoặc sai định dạng).",
        ) from exc
    except Exception as exc:  # openpyxl raises assorted errors on damaged files
        raise ReadError(
            "not_a_spreadsheet",
            f"{name} cannot be opened as an Excel workbook ({type(exc).__name__}: {exc})",
            f"Không mở được tệp {name} như bảng tính Excel (tệp hỏng hoặc sai định dạng).",
        ) from exc
    sheets = []
    counter = _RowCounter(limits)
    for ws in wb.worksheets:
        if not hasattr(ws, "iter_rows"):  # chartsheets
            continue
        ws.reset_dimensions()  # some writers store a wrong <dimension>; read what is really there
        values = ws.iter_rows(max_col=limits.max_columns, values_only=True)
        rows = _bounded(((r, list(v)) for r, v in enumerate(values, start=1)), ws.title, limits, counter)
        sheets.append(RawSheet(name, ws.title, rows, formulas.get(ws.title, set())))
    return Workbook(path, "xlsx", sheets, wb)


# Fast path: stream the sheet XML with the stdlib (C) expat parser and handlers that keep only the current
# row. openpyxl's read-only reader spends most of its time building cell objects; this reads several times
# faster, finds formulas without a cached value in the same pass, and enforces every limit as it goes.
# openpyxl remains the fallback for workbooks this parser does not understand.

_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_STRICT_REL_NS = "{http://purl.oclc.org/ooxml/officeDocument/relationships}id"


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


_MAX_REF_LETTERS = 12


def _col_index(ref: str) -> int:
    """0-based column of a cell reference ("C7" → 2, "ZZZZZ1" → 12,356,629); a reference of more than
    ``_MAX_REF_LETTERS`` letters (however long the attribute) is reported as 26**12."""
    idx = 0
    for n, ch in enumerate(ref):
        if "A" <= ch <= "Z":
            if n == _MAX_REF_LETTERS:
                return 26**_MAX_REF_LETTERS
            idx = idx * 26 + (ord(ch) - 64)
        else:
            break
    return idx - 1


def _xml_parser() -> Any:
    """An expat parser reporting ``{uri}local``-style names as ``uri}local``, refusing DTDs."""
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.buffer_size = _CHUNK

    def refuse(*_: Any) -> None:
        raise ReadError(
            "not_a_spreadsheet",
            "the workbook XML declares a DTD (never found in Excel files)",
            "Tệp không phải bảng tính Excel hợp lệ.",
        )

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    return parser


class _SharedStrings:
    """Handlers collecting the shared-string table: the text of every ``<t>`` of an ``<si>`` except the
    phonetic runs (``<rPh>``), within the count, per-string and total-size limits."""

    def __init__(self, limits: ReadLimits) -> None:
        self.limits = limits
        self.out: list[str] = []
        self.parts: list[str] = []
        self.length = 0
        self.total = 0
        self.in_si = False
        self.capture = False
        self.rph = 0

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        local = tag.rpartition("}")[2]
        if local == "si":
            self.in_si, self.length = True, 0
            self.parts = []
        elif local == "t":
            self.capture = self.in_si and not self.rph
        elif local == "rPh":
            self.rph += 1

    def end(self, tag: str) -> None:
        local = tag.rpartition("}")[2]
        if local == "t":
            self.capture = False
        elif local == "rPh":
            self.rph -= 1
        elif local == "si":
            self.in_si = False
            self.out.append("".join(self.parts))
            self.parts = []
            if len(self.out) > self.limits.max_shared_strings:
                n = self.limits.max_shared_strings
                raise ReadError(
                    "too_many_shared_strings",
                    f"the workbook's shared-string table has more than {n} entries",
                    f"Bảng tính có quá nhiều chuỗi văn bản: tối đa {vn_number(n)} chuỗi.",
                )

    def text(self, data: str) -> None:
        if not self.capture:
            return
        self.parts.append(data)
        self.length += len(data)
        self.total += len(data)
        limits = self.limits
        if self.length > limits.max_cell_chars:
            raise ReadError(
                "cell_too_long",
                f"shared string #{len(self.out) + 1} is longer than {limits.max_cell_chars} characters",
                f"Ô quá dài: tối đa {vn_number(limits.max_cell_chars)} ký tự một ô (chuỗi văn bản thứ "
                f"{vn_number(len(self.out) + 1)} của bảng tính).",
            )
        if self.total > limits.max_text_chars:
            raise ReadError(
                "shared_strings_too_large",
                f"the shared-string table holds more than {limits.max_text_chars} characters",
                f"Tệp chứa quá nhiều văn bản: tối đa {vn_number(limits.max_text_chars)} ký tự trong bảng chuỗi "
                "văn bản của tệp; hãy chia thành nhiều tệp nhỏ hơn.",
            )


def _parse_member(zf: zipfile.ZipFile, member: str, handlers: Any) -> Iterator[None]:
    """Feed ``member`` to an expat parser wired to ``handlers``; yields after every chunk."""
    parser = _xml_parser()
    parser.StartElementHandler = handlers.start
    parser.EndElementHandler = handlers.end
    parser.CharacterDataHandler = handlers.text
    with zf.open(member) as fh:
        while True:
            chunk = fh.read(_CHUNK)
            parser.Parse(chunk, not chunk)
            yield
            if not chunk or getattr(handlers, "done", False):
                return


def _shared_strings(zf: zipfile.ZipFile, limits: ReadLimits) -> list[str]:
    if "xl/sharedStrings.xml" not in set(zf.namelist()):
        return []
    table = _SharedStrings(limits)
    for _ in _parse_member(zf, "xl/sharedStrings.xml", table):
        pass
    return table.out


def _read_small(zf: zipfile.ZipFile, member: str) -> bytes:
    if zf.getinfo(member).file_size > _SMALL_PART_BYTES:
        raise ValueError(f"{member} is implausibly large")
    return zf.read(member)


def _sheet_members(zf: zipfile.ZipFile) -> list[tuple[str, str]]:
    """(sheet title, zip member) of every worksheet, in workbook order."""
    from xml.etree.ElementTree import fromstring

    wb = fromstring(_read_small(zf, "xl/workbook.xml"))
    rels = fromstring(_read_small(zf, "xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target", "") for r in rels if _local(r.tag) == "Relationship"}
    out = []
    for el in wb.iter():
        if _local(el.tag) != "sheet":
            continue
        target = targets.get(el.get(_REL_NS) or el.get(_STRICT_REL_NS) or "", "")
        if "worksheets/" not in target:
            continue  # chartsheets, dialog sheets
        member = target.lstrip("/") if target.startswith("/") else "xl/" + target
        out.append((el.get("name", ""), member))
    return out


def _number(text: str) -> Any:
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


class _SheetRows:
    """Handlers turning a worksheet's XML into ``(row number, cells)`` pairs, one row held at a time.

    A cell over ``max_cell_chars`` stops the read at the end of its row, not at once: its text is dropped as
    soon as it passes the limit, and the rest of the row is read so that the error carries the row's other
    values (its KB code may sit to the right of the long cell)."""

    def __init__(
        self,
        strings: list[str],
        formulas: set[tuple[int, int]],
        limits: ReadLimits,
        counter: _RowCounter,
        sheet: str,
    ) -> None:
        self.strings = strings
        self.formulas = formulas
        self.limits = limits
        self.counter = counter
        self.sheet = sheet
        self.ready: list[tuple[int, list[Any]]] = []
        self.values: dict[int, Any] = {}
        self.current = 0
        self.next_col = 0
        self.done = False
        self.too_long: int | None = None  # the first column of the current row whose cell is over the limit
        # the cell being read
        self.col = 0
        self.kind = "n"
        self.v: str | None = None
        self.inline: str | None = None
        self.formula = False
        self.buf: list[str] = []
        self.length = 0
        self.overflow = False  # the cell's text passed max_cell_chars (and was dropped)
        self.capture = False
        self.in_is = False
        self.rph = 0

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        local = tag.rpartition("}")[2]
        if local == "c":
            ref = attrs.get("r")
            self.col = _col_index(ref) if ref else self.next_col
            self.next_col = self.col + 1
            self.kind = attrs.get("t", "n")
            self.v = self.inline = None
            self.formula = False
            self.buf = []
            self.length = 0
            self.overflow = False
        elif local == "v":
            self.capture = True
        elif local == "t":
            self.capture = self.in_is and not self.rph
        elif local == "is":
            self.in_is = True
        elif local == "f":
            self.formula = True
        elif local == "rPh":
            self.rph += 1
        elif local == "row":
            ref = attrs.get("r")
            self.current = int(ref) if ref else self.current + 1
            if self.current > EXCEL_MAX_ROW:
                raise row_beyond_excel(self.sheet, self.current)
            self.next_col = 0
            self.values = {}
            self.too_long = None

    def end(self, tag: str) -> None:
        local = tag.rpartition("}")[2]
        if local == "c":
            self.cell()
        elif local == "v":
            self.v = "".join(self.buf) or None  # <v></v> is no value, as in openpyxl
            self.buf = []
            self.capture = False
        elif local == "t":
            self.capture = False
        elif local == "is":
            self.inline = "".join(self.buf)
            self.buf = []
            self.in_is = False
        elif local == "rPh":
            self.rph -= 1
        elif local == "row":
            self.row()
        elif local == "sheetData":
            self.done = True

    def text(self, data: str) -> None:
        if self.capture:
            self.length += len(data)
            if self.length > self.limits.max_cell_chars:
                self.overflow = True
                self.buf = []  # never held: the row ends in cell_too_long
            else:
                self.buf.append(data)

    def cell(self) -> None:
        kind, v, col = self.kind, self.v, self.col
        if self.overflow:
            if self.too_long is None:
                self.too_long = col
            return
        value: Any
        if kind == "inlineStr":
            value = self.inline
        elif v is None:
            value = None
        elif kind == "s":
            value = self.strings[int(v)]
        elif kind in ("str", "e"):
            value = v
        elif kind == "b":
            value = v == "1"
        else:
            value = _number(v)
        if value is None and not (self.formula and v is None):
            return
        if col >= self.limits.max_columns:
            if value is None or value != "":
                raise too_many_columns(self.limits, self.sheet, self.current, col, _row_list(self.values))
            return
        if value is None:
            self.formulas.add((self.current, col))  # a formula without a cached value
        else:
            self.values[col] = value

    def row(self) -> None:
        values = self.values
        cells = _row_list(values)
        if self.too_long is not None:
            raise cell_too_long(self.limits, self.sheet, self.current, self.too_long, cells)
        has_value = False
        chars = 0
        for value in values.values():
            if value != "":
                has_value = True
                if isinstance(value, str):
                    chars += len(value)  # a shared string counts every time a cell uses it
        if has_value:
            self.counter.add(chars)
        self.ready.append((self.current, cells))
        self.values = {}


def _iter_sheet(
    zf: zipfile.ZipFile,
    member: str,
    strings: list[str],
    formulas: set[tuple[int, int]],
    limits: ReadLimits,
    counter: _RowCounter,
    sheet: str,
) -> Iterator[tuple[int, list[Any]]]:
    rows = _SheetRows(strings, formulas, limits, counter, sheet)
    try:
        for _ in _parse_member(zf, member, rows):
            if rows.ready:
                ready, rows.ready = rows.ready, []
                yield from ready
    except MemoryError:
        raise memory_error() from None
    except ReadError:
        # A stop met while parsing a chunk comes after the rows the chunk completed before it: those go
        # first, so the reader of the rows (validation) knows the table the stop is in (its header row).
        ready, rows.ready = rows.ready, []
        yield from ready
        raise


def _open_xlsx_fast(path: Path, name: str, limits: ReadLimits = DEFAULT_LIMITS) -> Workbook:
    zf = zipfile.ZipFile(path)
    try:
        strings = _shared_strings(zf, limits)
        members = _sheet_members(zf)
    except BaseException:
        zf.close()
        raise
    sheets = []
    counter = _RowCounter(limits)
    for title, member in members:
        formulas: set[tuple[int, int]] = set()
        rows = _iter_sheet(zf, member, strings, formulas, limits, counter, title)
        sheets.append(RawSheet(name, title, rows, formulas))
    return Workbook(path, "xlsx", sheets, zf)


# --- csv --------------------------------------------------------------------------------------------------


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode CSV bytes: UTF-16 by BOM, else UTF-8 (with or without BOM), else cp1258, else latin-1."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16"), "utf-16"
    for enc in CSV_ENCODINGS:
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        return text, ("utf-8" if enc == "utf-8-sig" and not data.startswith(codecs.BOM_UTF8) else enc)
    raise AssertionError("latin-1 decodes any bytes")


def sniff_delimiter(text: str) -> str:
    """The delimiter of the first lines: csv.Sniffer, else the candidate most frequent in the first line."""
    sample = text[: 64 * 1024]
    try:
        return csv.Sniffer().sniff(sample, delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        pass
    first = next((line for line in sample.splitlines() if line.strip()), "")
    counts = {d: first.count(d) for d in CSV_DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def _csv_rows(
    reader: Iterator[list[str]], limits: ReadLimits, counter: _RowCounter
) -> Iterator[tuple[int, list[Any]]]:
    number = 0
    try:
        for number, values in enumerate(reader, start=1):
            if len(values) > limits.max_columns:
                beyond = next((i for i, v in enumerate(values) if i >= limits.max_columns and v), None)
                if beyond is not None:
                    raise too_many_columns(limits, None, number, beyond, values[: limits.max_columns])
                del values[limits.max_columns :]  # trailing delimiters only
            if values and max(map(len, values)) > limits.max_cell_chars:
                col = next(i for i, v in enumerate(values) if len(v) > limits.max_cell_chars)
                raise cell_too_long(limits, None, number, col, _without(values, col))
            if any(values):
                counter.add(sum(map(len, values)))
            yield number, values
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise cell_too_long(limits, None, number + 1, None, None) from None  # the row is lost
        raise
    except MemoryError:
        raise memory_error() from None


def _open_csv(path: Path, name: str, limits: ReadLimits) -> Workbook:
    try:
        data = path.read_bytes()
    except MemoryError:
        raise memory_error() from None
    if b"\x00" in data[:4096] and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ReadError(
            "not_a_spreadsheet",
            f"{name} is binary data, not a CSV text file",
            f"Tệp {name} không phải bảng tính (CSV hoặc .xlsx).",
        )
    text, encoding = decode_bytes(data)
    del data
    if not text.strip():
        raise ReadError("empty_file", "the file is empty", "Tệp rỗng, không có dữ liệu.")
    delimiter = sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows = _csv_rows(reader, limits, _RowCounter(limits))
    return Workbook(path, "csv", [RawSheet(name, None, rows, encoding=encoding, delimiter=delimiter)])
