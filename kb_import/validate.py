"""Row validation: raw spreadsheet rows → clean KB rows, and every problem with file, sheet, row and column.

Rules (each problem carries a stable ``code``, an English ``message`` and a Vietnamese ``message_vi``):

* fatal (the file or sheet cannot be imported, even with ``--skip-invalid``): ``not_a_spreadsheet``,
  ``empty_file``, ``unreadable``, ``no_header``, ``missing_column``, ``missing_role``, ``unknown_role``
  (for a whole sheet or ``--role``), ``no_rows``.
* row errors (the row is skipped with ``--skip-invalid``; strict mode rejects the file): ``missing_code``,
  ``missing_question``, ``missing_answer``, ``duplicate_code`` (within a role, across all files of the
  import), ``too_long``, ``excel_error`` (``#N/A``, ``#REF!`` …), ``formula_no_value`` (a formula saved
  without its computed value), ``control_chars``, ``unknown_role`` (a role cell naming no known role),
  ``invalid_urgent`` (a KHẨN CẤP cell that is neither blank nor a recognised yes/no).
* warnings (reported, nothing skipped): ``sheet_skipped`` (a sheet without a KB table, e.g. the template's
  notes), ``ignored_column``, ``duplicate_column``; ``example_row``: the template's example row (code
  ``VD-MẪU``, or its exact text under an older template's code) is skipped, never imported
  (``kb_import.example``).

Decisions:

* The answer is always required. The question is required too unless ``allow_blank_question`` is set: an
  entry without a question is still found by its answer, but a doctor who forgot to type it should be told.
* A blank ĐỀ MỤC inherits the topic of the row above (merged cells read as blank); a row with only a topic
  is a section heading, not an entry.
* ``keywords`` are split on ``;`` or new lines (on ``,`` when the cell has no ``;``), trimmed, de-duplicated
  ignoring case (the first spelling is kept), in linear time.
* The optional KHẨN CẤP column marks entries that send the reader to urgent care (their answers get no
  routine closing line). A blank cell is "no"; ``x``, ``có``, ``1``, ``yes``, ``true``, ``khẩn``, a check mark
  … are "yes"; ``0``, ``không``, ``no``, ``false`` are "no" (compared folded); anything else is an error, so
  a typo never silently drops the mark.
* All text is NFC-normalised; numbers read as codes lose a trailing ``.0`` (``STT`` 1.0 → ``1``).
* Every problem of a data row carries the row's KB code (``entry_code``, the MÃ SỐ cell) so staff can find
  the entry by its code as well as by its row; ``""`` when the row has no readable code (blank, or the code
  cell itself is wrong), None for problems not about one entry (file, sheet, header row). That includes the
  reader's safety stops in a data row (``too_many_columns``, ``cell_too_long``): fatal for the file, but
  located like the others, with the row's code and the column's header (``stop_problem``).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kb_import.example import is_example, is_example_code
from kb_import.headers import (
    FIELD_HEADERS,
    HEADER_SCAN_ROWS,
    HeaderMap,
    column_letter,
    fold_key,
    match_header,
)
from kb_import.readers import RawSheet, ReadError, open_file
from kb_import.roles import ROLE_ID, resolve_role

MAX_LENGTH = {
    "code": 64,
    "topic": 255,
    "subtopic": 255,
    "question": 1000,  # a patient message is at most 1000 characters too
    "answer": 8000,
    "keywords": 4000,
    "explanation": 16000,
    "urgent": 64,
    "role": 64,
}
EXCEL_ERRORS = frozenset(
    {"#N/A", "#REF!", "#VALUE!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!", "#SPILL!", "#CALC!", "#GETTING_DATA"}
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_KEYWORD_SPLIT = re.compile(r"[;\n]+")
URGENT_YES = frozenset({"x", "co", "1", "yes", "y", "true", "khan", "khancap", "urgent"})
URGENT_NO = frozenset({"0", "khong", "no", "n", "false"})
_CHECK_MARKS = frozenset("✓✔☑✅")

ProgressFn = Callable[[str, int, int | None], None]

_FIELD_VI = {
    "code": "mã số",
    "question": "câu hỏi",
    "answer": "câu trả lời",
    "topic": "đề mục",
    "subtopic": "chủ đề con",
    "keywords": "từ khóa",
    "explanation": "giải thích",
    "urgent": "khẩn cấp",
    "role": "vai trò",
}


@dataclass(slots=True)
class Problem:
    """One thing wrong (or worth knowing) about the input, located as precisely as possible."""

    code: str
    message: str
    message_vi: str
    file: str
    sheet: str | None = None
    row: int | None = None
    column: str | None = None  # spreadsheet letter, e.g. "E"
    header: str | None = None  # the column's header as written in the file
    severity: str = "error"  # "fatal" | "error" | "warning"
    value: str | None = None  # a short excerpt of the offending value
    # the row's KB code (MÃ SỐ) for a problem of a data row; "" when the row has no readable code; None when
    # the problem is not about one entry (a file, a sheet, the header row)
    entry_code: str | None = None

    def location(self) -> str:
        return self._location(f"sheet {self.sheet!r}", "row", "column", self.entry_label())

    def location_vi(self) -> str:
        return self._location(f"trang “{self.sheet}”", "dòng", "cột", self.entry_label_vi())

    def entry_label(self) -> str | None:
        """``code NK-012`` / ``no code`` for a data row's problem, None otherwise (English, for logs)."""
        if self.entry_code is None:
            return None
        return f"code {self.entry_code}" if self.entry_code else "no code"

    def entry_label_vi(self) -> str | None:
        """``mã NK-012`` / ``không có mã số`` for a data row's problem, None otherwise."""
        if self.entry_code is None:
            return None
        return f"mã {self.entry_code}" if self.entry_code else "không có mã số"

    def _location(self, sheet: str, row: str, column: str, entry: str | None) -> str:
        """File, sheet, row (with the entry's code) and column (with its header) as far as known, in the
        words given."""
        parts = [self.file]
        if self.sheet:
            parts.append(sheet)
        if self.row is not None:
            parts.append(f"{row} {self.row}" + (f" ({entry})" if entry else ""))
        if self.column:
            parts.append(f"{column} {self.column}" + (f" ({self.header})" if self.header else ""))
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.location()}: {self.message}"


def stop_problem(exc: ReadError, file: str, header: HeaderMap | None = None) -> Problem:
    """The fatal problem of a reader's stop, located where the reader stopped; in a data row of a KB table
    (``header`` given) it also names the entry's code (MÃ SỐ) and the column's header, as a row's other
    problems do."""
    problem = Problem(
        exc.code,
        exc.message,
        exc.message_vi,
        file,
        sheet=exc.sheet,
        row=exc.row,
        column=None if exc.column is None else column_letter(exc.column),
        severity="fatal",
    )
    if header is not None and exc.row is not None:
        if exc.column is not None and exc.column < len(header.headers):
            problem.header = header.headers[exc.column] or None
        problem.entry_code = _readable_code(exc.cells, header.columns["code"], exc.column)
    return problem


def _readable_code(cells: list[Any] | None, idx: int, bad_column: int | None) -> str | None:
    """The code in a stopped row's MÃ SỐ cell; "" when it has none that can be read (blank, wrong, or the
    cell that stopped the read); None when the row itself could not be read."""
    if cells is None:
        return None
    if idx == bad_column or idx >= len(cells):
        return ""
    code = cell_text(cells[idx])
    if code in EXCEL_ERRORS or _CONTROL.search(code) or len(code) > MAX_LENGTH["code"]:
        return ""
    return code


class _TableStop(Exception):
    """A reader's stop inside a KB table, already made into its located problem (``stop_problem``)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


@dataclass(slots=True)
class Row:
    """One valid KB row, ready to be written."""

    role: str
    code: str
    topic: str
    subtopic: str
    question: str
    answer: str
    keywords: list[str]
    explanation: str
    file: str
    sheet: str | None
    row: int
    urgent: bool = False


@dataclass
class FileInfo:
    name: str
    sha256: str
    kind: str = ""
    sheets: list[str] = field(default_factory=list)
    rows: int = 0  # data rows seen (blank rows and section headings excluded)
    encoding: str | None = None
    delimiter: str | None = None


@dataclass
class Validation:
    """Everything validation learnt: the valid rows, the problems, and per-file facts."""

    rows: list[Row] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[FileInfo] = field(default_factory=list)
    rows_seen: int = 0
    invalid_rows: int = 0
    # codes present in the file but invalid, per role: never deactivated by a --skip-invalid import
    invalid_codes: dict[str, set[str]] = field(default_factory=dict)
    # codes of skipped template example rows of older templates (e.g. NK-001), per role: never deactivated
    example_codes: dict[str, set[str]] = field(default_factory=dict)

    @property
    def fatal(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "fatal"]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def roles(self) -> list[str]:
        return sorted({r.role for r in self.rows} | set(self.invalid_codes))


def cell_text(value: Any) -> str:
    """A cell value as text: numbers without a spurious ``.0``, dates in ISO form, text NFC and trimmed."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "TRUE" if value else "FALSE"
    elif isinstance(value, float):
        text = str(int(value)) if value.is_integer() else repr(value)
    elif isinstance(value, dt.datetime | dt.date | dt.time):
        text = value.isoformat()
    else:
        text = str(value)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.strip()


def parse_urgent(text: str) -> bool | None:
    """A KHẨN CẤP cell: True / False, or None when the value means neither (an error to report)."""
    if not text:
        return False
    if text in _CHECK_MARKS:
        return True
    key = fold_key(text)
    if key in URGENT_YES:
        return True
    if key in URGENT_NO:
        return False
    return None


def split_keywords(text: str) -> list[str]:
    if not text:
        return []
    parts = _KEYWORD_SPLIT.split(text) if (";" in text or "\n" in text) else text.split(",")
    keywords: list[str] = []
    seen: set[str] = set()  # folded case of the keywords kept
    for part in parts:
        kw = " ".join(part.split())
        key = kw.lower()
        if kw and key not in seen:
            seen.add(key)
            keywords.append(kw)
    return keywords


class _Validator:
    def __init__(
        self,
        *,
        role: str | None,
        known_roles: frozenset[str],
        allow_blank_question: bool,
        progress: ProgressFn | None,
    ) -> None:
        self.default_role = role
        self.known_roles = known_roles | ({role} if role else set())
        self.allow_blank_question = allow_blank_question
        self.progress = progress
        self.out = Validation()
        self.first_seen: dict[tuple[str, str], Row] = {}

    # -- problems ------------------------------------------------------------------------------------------

    def problem(self, code: str, message: str, message_vi: str, file: str, **where: Any) -> None:
        self.out.problems.append(Problem(code, message, message_vi, file, **where))

    # -- files ---------------------------------------------------------------------------------------------

    def check_default_role(self) -> bool:
        role = self.default_role
        if role and not ROLE_ID.match(role):
            self.problem(
                "unknown_role",
                f"--role {role!r} is not a valid role id (lowercase letters, digits, _)",
                f"Vai trò “{role}” không hợp lệ (chỉ dùng chữ thường không dấu, số và dấu _).",
                "--role",
                severity="fatal",
            )
            return False
        return True

    def file(self, path: Path, name: str, sha256: str) -> None:
        info = FileInfo(name, sha256)
        self.out.files.append(info)
        try:
            wb = open_file(path, name)
        except ReadError as exc:
            self.problem(exc.code, exc.message, exc.message_vi, name, severity="fatal")
            return
        info.kind = wb.kind
        try:
            used = 0
            for sheet in wb.sheets:
                info.sheets.append(sheet.sheet or "")
                info.encoding, info.delimiter = sheet.encoding, sheet.delimiter
                used += self.sheet(sheet, info, only=len(wb.sheets) == 1)
            if used == 0 and not any(p.severity == "fatal" and p.file == name for p in self.out.problems):
                self.problem(
                    "empty_file",
                    "the file has no KB rows (no table with CÂU HỎI / CÂU TRẢ LỜI columns and data)",
                    "Tệp không có dòng dữ liệu nào (không thấy bảng có cột CÂU HỎI / CÂU TRẢ LỜI).",
                    name,
                    severity="fatal",
                )
        except _TableStop as stop:
            self.out.problems.append(stop.problem)
        except ReadError as exc:
            self.out.problems.append(stop_problem(exc, name))
        except Exception as exc:  # csv.Error, XML ParseError, zlib/zip errors in a damaged file
            self.problem(
                "unreadable",
                f"the file could not be read to the end ({type(exc).__name__}: {exc})",
                "Không đọc được hết tệp (tệp hỏng hoặc sai định dạng).",
                name,
                severity="fatal",
            )
        finally:
            wb.close()

    # -- sheets --------------------------------------------------------------------------------------------

    def sheet(self, raw: RawSheet, info: FileInfo, *, only: bool) -> int:
        """Validate one sheet; returns the number of data rows it held."""
        file, sheet = raw.file, raw.sheet
        sheet_role = resolve_role(sheet, self.known_roles) if sheet else None
        head: list[tuple[int, list[Any]]] = []
        header: HeaderMap | None = None
        for number, cells in raw.rows:
            head.append((number, cells))
            header = match_header(cells)
            if header is not None or len(head) >= HEADER_SCAN_ROWS:
                break
        if header is None:
            if not any(cell_text(c) for _, cells in head for c in cells):
                return 0  # an empty sheet
            if sheet_role or only:
                self.problem(
                    "no_header",
                    f"no header row naming the columns (CÂU HỎI, CÂU TRẢ LỜI, MÃ SỐ …) in the first "
                    f"{HEADER_SCAN_ROWS} rows",
                    f"Không tìm thấy dòng tiêu đề (CÂU HỎI, CÂU TRẢ LỜI, MÃ SỐ …) trong {HEADER_SCAN_ROWS} "
                    "dòng đầu.",
                    file,
                    sheet=sheet,
                    severity="fatal",
                )
            else:
                self.problem(
                    "sheet_skipped",
                    "sheet skipped: no KB table in it",
                    "Bỏ qua trang này: không có bảng câu hỏi – trả lời.",
                    file,
                    sheet=sheet,
                    severity="warning",
                )
            return 0
        header_row = head[-1][0]
        for text in header.ignored:
            col = column_letter(header.headers.index(text))
            self.problem(
                "ignored_column",
                f"column {text!r} is not a KB field and is ignored",
                f"Cột “{text}” không thuộc mẫu nhập liệu nên được bỏ qua.",
                file,
                sheet=sheet,
                row=header_row,
                column=col,
                header=text,
                severity="warning",
            )
        for text in header.duplicates:
            self.problem(
                "duplicate_column",
                f"column {text!r} names the same field as another column; only one of them is used",
                f"Cột “{text}” trùng ý nghĩa với một cột khác; chỉ một cột được dùng.",
                file,
                sheet=sheet,
                row=header_row,
                header=text,
                severity="warning",
            )
        required = ["code", "answer"] + ([] if self.allow_blank_question else ["question"])
        missing = [f for f in required if f not in header.columns]
        if missing:
            names = ", ".join(FIELD_HEADERS[f] for f in missing)
            self.problem(
                "missing_column",
                f"missing column(s): {names}",
                f"Thiếu cột: {names}.",
                file,
                sheet=sheet,
                row=header_row,
                severity="fatal",
            )
            return 0
        role = sheet_role or self.default_role
        return self.rows(raw, header, role, header_row, info)

    # -- rows ----------------------------------------------------------------------------------------------

    def rows(
        self, raw: RawSheet, header: HeaderMap, role: str | None, header_row: int, info: FileInfo
    ) -> int:
        file, sheet = raw.file, raw.sheet
        columns = header.columns
        fields = list(columns.items())
        formula_cells = raw.formula_cells
        code_column = column_letter(columns["code"])
        topic = ""
        count = 0
        out = self.out
        for number, cells in _table_rows(raw, header):
            width = len(cells)
            values: dict[str, str] = {}
            bad: list[Problem] = []
            for name, idx in fields:
                raw_value = cells[idx] if idx < width else None
                if raw_value is None:
                    if formula_cells and (number, idx) in formula_cells:
                        bad.append(self._cell_problem("formula_no_value", name, idx, number, raw, header))
                    values[name] = ""
                    continue
                text = cell_text(raw_value)
                values[name] = text
                if not text:
                    continue
                if text[0] == "#" and text in EXCEL_ERRORS:
                    bad.append(self._cell_problem("excel_error", name, idx, number, raw, header, text))
                elif _CONTROL.search(text):
                    bad.append(self._cell_problem("control_chars", name, idx, number, raw, header, text))
                elif len(text) > MAX_LENGTH[name]:
                    bad.append(self._cell_problem("too_long", name, idx, number, raw, header, text))
            if not bad and not any(values.values()):
                continue  # blank row
            code_readable = not any(p.column == code_column for p in bad)
            code, question, answer = (
                values.get("code", ""),
                values.get("question", ""),
                values.get("answer", ""),
            )
            if not bad and not (
                code or question or answer or values.get("keywords") or values.get("explanation")
            ):
                topic = values.get("topic", "") or topic  # a section heading row
                continue
            if is_example(code, question, answer):
                self.example_row(raw, header, number, code, role, values.get("role", ""))
                continue
            if role is None and "role" not in columns:
                self.problem(
                    "missing_role",
                    "cannot tell which role this table is for: name the sheet after the role "
                    "(e.g. patient_dental), add a VAI TRÒ column, or pass --role",
                    "Không xác định được vai trò của bảng: đặt tên trang theo vai trò (ví dụ patient_dental), "
                    "thêm cột VAI TRÒ, hoặc chọn vai trò khi nhập.",
                    file,
                    sheet=sheet,
                    severity="fatal",
                )
                return count + 1
            count += 1
            if count % 2000 == 0 and self.progress:
                self.progress("validate", out.rows_seen + count, None)
            topic = values.get("topic", "") or topic
            row_role = role
            role_text = values.get("role", "")
            if role_text:
                row_role = resolve_role(role_text, self.known_roles)
                if row_role is None:
                    bad.append(
                        self._cell_problem(
                            "unknown_role", "role", columns["role"], number, raw, header, role_text
                        )
                    )
            elif row_role is None:
                bad.append(self._cell_problem("missing_role", "role", columns["role"], number, raw, header))
            if not code:
                bad.append(self._cell_problem("missing_code", "code", columns["code"], number, raw, header))
            if not answer:
                bad.append(
                    self._cell_problem("missing_answer", "answer", columns["answer"], number, raw, header)
                )
            urgent = parse_urgent(values.get("urgent", ""))
            if urgent is None:
                bad.append(
                    self._cell_problem(
                        "invalid_urgent", "urgent", columns["urgent"], number, raw, header, values["urgent"]
                    )
                )
            if not question and not self.allow_blank_question:
                bad.append(
                    self._cell_problem(
                        "missing_question", "question", columns["question"], number, raw, header
                    )
                )
            if code and row_role:
                first = self.first_seen.get((row_role, code))
                if first is not None:
                    where = (
                        f"{first.file}"
                        + (f", sheet {first.sheet!r}" if first.sheet else "")
                        + f", row {first.row}"
                    )
                    where_vi = (
                        f"{first.file}"
                        + (f", trang “{first.sheet}”" if first.sheet else "")
                        + f", dòng {first.row}"
                    )
                    bad.append(
                        Problem(
                            "duplicate_code",
                            f"code {code!r} is used twice in role {row_role} (first at {where})",
                            f"Mã số “{code}” bị trùng trong vai trò {row_role} (đã dùng ở {where_vi}).",
                            file,
                            sheet,
                            number,
                            column_letter(columns["code"]),
                            header.header_of("code"),
                            value=code,
                        )
                    )
            if bad:
                entry_code = code if code_readable else ""
                for p in bad:
                    p.entry_code = entry_code
                out.problems.extend(bad)
                out.invalid_rows += 1
                if code and row_role:
                    out.invalid_codes.setdefault(row_role, set()).add(code)
                continue
            assert row_role is not None
            entry = Row(
                role=row_role,
                code=code,
                topic=topic,
                subtopic=values.get("subtopic", ""),
                question=question,
                answer=answer,
                keywords=split_keywords(values.get("keywords", "")),
                explanation=values.get("explanation", ""),
                file=file,
                sheet=sheet,
                row=number,
                urgent=bool(urgent),
            )
            self.first_seen[(row_role, code)] = entry
            out.rows.append(entry)
        out.rows_seen += count
        info.rows += count
        return count

    def example_row(
        self, raw: RawSheet, header: HeaderMap, number: int, code: str, role: str | None, role_text: str
    ) -> None:
        """Skip the template's example row with a warning; an older template's code is kept (not hidden)."""
        column = header.columns["code"]
        self.problem(
            "example_row",
            f"the template's example row (code {code!r}) is skipped: it only shows how to fill a row and is "
            "never imported",
            f"Bỏ qua dòng ví dụ của tệp mẫu (mã “{code}”): dòng này chỉ để minh hoạ cách điền, không bao giờ "
            "được nhập vào kho kiến thức.",
            raw.file,
            sheet=raw.sheet,
            row=number,
            column=column_letter(column),
            header=header.header_of("code"),
            severity="warning",
            value=code,
            entry_code=code,
        )
        row_role = resolve_role(role_text, self.known_roles) if role_text else role
        if row_role and code and not is_example_code(code):
            self.out.example_codes.setdefault(row_role, set()).add(code)

    @staticmethod
    def _cell_problem(
        code: str,
        name: str,
        idx: int,
        number: int,
        raw: RawSheet,
        header: HeaderMap,
        value: str | None = None,
    ) -> Problem:
        label, label_vi = FIELD_HEADERS.get(name, name), _FIELD_VI.get(name, name)
        excerpt = None if value is None else (value if len(value) <= 60 else value[:57] + "…")
        if code == "formula_no_value":
            msg = "formula without a computed value: open the file in Excel, save it, and import again"
            msg_vi = "Ô chứa công thức nhưng chưa có giá trị: mở tệp bằng Excel, lưu lại rồi nhập lại."
        elif code == "excel_error":
            msg = f"Excel error value {value} instead of {label}"
            msg_vi = f"Ô {label_vi} đang báo lỗi Excel {value}."
        elif code == "control_chars":
            msg = "invisible control characters in the cell (pasted from another program?)"
            msg_vi = "Ô chứa ký tự điều khiển ẩn (có thể do dán từ phần mềm khác); hãy gõ lại nội dung ô."
        elif code == "too_long":
            limit = MAX_LENGTH[name]
            msg = f"{label} is {len(value or '')} characters long; the limit is {limit}"
            msg_vi = f"Ô {label_vi} dài {len(value or '')} ký tự, vượt giới hạn {limit} ký tự."
        elif code == "unknown_role":
            msg = f"unknown role {value!r}"
            msg_vi = f"Vai trò “{value}” không tồn tại."
        elif code == "invalid_urgent":
            msg = (
                f"{label} must be blank (not urgent) or a yes/no mark such as x, có, 1, yes (urgent) or "
                f"không, 0, no; got {excerpt!r}"
            )
            msg_vi = (
                f"Ô {label} ghi “{excerpt}” không hợp lệ: ghi “x” (hoặc “có”) nếu mục này cần xử trí khẩn cấp, "
                "để trống nếu không."
            )
        elif code == "missing_role":
            msg = "no role: fill the VAI TRÒ cell, name the sheet after the role, or pass --role"
            msg_vi = "Thiếu vai trò: điền ô VAI TRÒ, đặt tên trang theo vai trò, hoặc chọn vai trò khi nhập."
        else:  # missing_code / missing_question / missing_answer
            msg = f"{label} is empty"
            msg_vi = f"Thiếu {label_vi}."
        return Problem(
            code,
            msg,
            msg_vi,
            raw.file,
            raw.sheet,
            number,
            column_letter(idx),
            header.header_of(name),
            value=excerpt,
        )


def _table_rows(raw: RawSheet, header: HeaderMap) -> Iterator[tuple[int, list[Any]]]:
    """The rows of a KB table below its header; a reader's stop in one of them becomes its located problem."""
    try:
        yield from raw.rows
    except ReadError as exc:
        raise _TableStop(stop_problem(exc, raw.file, header)) from exc


def validate_files(
    files: list[tuple[Path, str, str]],
    *,
    role: str | None = None,
    known_roles: frozenset[str] = frozenset(),
    allow_blank_question: bool = False,
    progress: ProgressFn | None = None,
) -> Validation:
    """Read and validate ``(path, display name, sha256)`` triples into one ``Validation`` (codes are unique across files)."""
    validator = _Validator(
        role=role, known_roles=known_roles, allow_blank_question=allow_blank_question, progress=progress
    )
    if validator.check_default_role():
        for path, name, sha in files:
            validator.file(path, name, sha)
    if progress:
        progress("validate", validator.out.rows_seen, validator.out.rows_seen)
    return validator.out


# Fields of an entry typed in the clinic console's form, in the columns of the one-row table it is checked as.
FORM_FIELDS = ("code", "topic", "subtopic", "question", "answer", "keywords", "explanation", "urgent")


def validate_entry(values: dict[str, str], role: str) -> tuple[Row | None, dict[str, str]]:
    """One entry typed in a form (the console's edit and new-entry pages), checked by exactly the rules and
    limits of a spreadsheet row: it is validated as the only row of a one-row table. ``values`` holds the
    text of :data:`FORM_FIELDS` (``urgent``: ``"x"`` or ``""``; ``keywords``: ``;``-separated).

    Returns the clean row, or None and the Vietnamese message of each field that is wrong (by field name)."""
    columns = list(FORM_FIELDS)
    table = [(1, [FIELD_HEADERS[name] for name in columns]), (2, [values.get(name, "") for name in columns])]
    validator = _Validator(
        role=role, known_roles=frozenset({role}), allow_blank_question=False, progress=None
    )
    validator.sheet(RawSheet(file="", sheet=None, rows=iter(table)), FileInfo(name="", sha256=""), only=True)
    out = validator.out
    by_letter = {column_letter(i): name for i, name in enumerate(columns)}
    errors: dict[str, str] = {}
    for problem in out.problems:
        name = by_letter.get(problem.column or "", "answer")
        message = problem.message_vi
        if problem.code == "example_row":
            name, message = (
                "code",
                f"Mã “{problem.value}” là mã của dòng ví dụ trong tệp mẫu; hãy dùng mã khác.",
            )
        errors.setdefault(name, message)
    if out.rows and not out.errors and not out.fatal:
        return out.rows[0], {}
    if not errors:  # nothing but a topic: a spreadsheet would read it as a section heading
        for name in ("code", "question", "answer"):
            if not values.get(name, "").strip():
                errors[name] = f"Thiếu {_FIELD_VI[name]}."
    return None, errors
