"""Header matching for KB spreadsheets, and the text folding it relies on.

Doctors' files name the same column many ways: ``CÂU  TRẢ    LỜI``, ``CAUTRALOI``, ``answer``. A header is
folded (NFC, lowercase, diacritics removed, đ→d, everything but letters and digits dropped) and looked up in
the alias table below. The header row is the first of the first ``HEADER_SCAN_ROWS`` rows that names a
question or answer column and at least one other known column, so a title line above the table is fine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.text import fold_spaced

# Canonical fields of a KB row, in template order.
FIELDS = ("topic", "subtopic", "code", "question", "answer", "keywords", "explanation", "urgent", "role")

# Display names (the Vietnamese headers of the template) for reports and the template.
FIELD_HEADERS = {
    "topic": "ĐỀ MỤC",
    "subtopic": "CHỦ ĐỀ CON",
    "code": "MÃ SỐ",
    "question": "CÂU HỎI",
    "answer": "CÂU TRẢ LỜI",
    "keywords": "keywords",
    "explanation": "GIẢI THÍCH",
    "urgent": "KHẨN CẤP",
    "role": "VAI TRÒ",
}

_ALIASES: dict[str, tuple[str, ...]] = {
    "topic": ("ĐỀ MỤC", "DEMUC", "topic", "chủ đề", "chuyên mục", "category"),
    "subtopic": ("CHỦ ĐỀ CON", "CHUDECON", "subtopic", "sub topic", "đề mục con"),
    "code": ("MÃ SỐ", "MASO", "STT", "code", "mã", "id", "số thứ tự"),
    "question": ("CÂU HỎI", "CAUHOI", "question", "hỏi"),
    "answer": ("CÂU TRẢ LỜI", "CAUTRALOI", "answer", "trả lời"),
    "keywords": ("keywords", "keyword", "TỪ KHÓA", "từ khoá", "tags"),
    "explanation": ("GIẢI THÍCH", "GIAITHICH", "explanation", "details"),
    "urgent": ("KHẨN CẤP", "KHANCAP", "khẩn", "urgent"),
    "role": ("role", "VAI TRÒ", "vaitro"),
}

HEADER_SCAN_ROWS = 10
_WEAK_CODE = {"stt", "sothutu", "id"}  # row numbers: used as the code only when no MÃ SỐ column exists

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def fold_key(text: str) -> str:
    """A header or label reduced to letters and digits: ``CHỦ  ĐỀ  CON`` → ``chudecon``."""
    return _NON_ALNUM.sub("", fold_spaced(text))


ALIAS_TO_FIELD: dict[str, str] = {fold_key(a): f for f, aliases in _ALIASES.items() for a in aliases}


@dataclass(slots=True)
class HeaderMap:
    """Where each known field sits in a sheet: 0-based column index per field, plus what was not used."""

    row_index: int  # 0-based index of the header row among the sheet's rows
    columns: dict[str, int]
    headers: list[str]  # the header cells as written, for messages
    ignored: list[str] = field(default_factory=list)  # non-empty headers that are not KB fields
    duplicates: list[str] = field(default_factory=list)  # fields named by more than one column

    def header_of(self, field_name: str) -> str:
        idx = self.columns.get(field_name)
        if idx is None or idx >= len(self.headers):
            return FIELD_HEADERS.get(field_name, field_name)
        return self.headers[idx]


def match_header(cells: list[object]) -> HeaderMap | None:
    """Interpret one row as a header row; None when it does not look like one."""
    headers = ["" if c is None else str(c).strip() for c in cells]
    columns: dict[str, int] = {}
    ignored: list[str] = []
    duplicates: list[str] = []
    for idx, text in enumerate(headers):
        if not text:
            continue
        name = ALIAS_TO_FIELD.get(fold_key(text))
        if name is None:
            ignored.append(text)
        elif name in columns:
            if name == "code" and fold_key(headers[columns["code"]]) in _WEAK_CODE:
                duplicates.append(headers[columns["code"]])  # MÃ SỐ beats a row-number column
                columns[name] = idx
            else:
                duplicates.append(text)
        else:
            columns[name] = idx
    if not ({"question", "answer"} & columns.keys()) or len(columns) < 2:
        return None
    return HeaderMap(row_index=-1, columns=columns, headers=headers, ignored=ignored, duplicates=duplicates)


def column_letter(index: int) -> str:
    """0-based column index → spreadsheet letter (0 → A, 26 → AA)."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters
