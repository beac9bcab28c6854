"""Builders for KB spreadsheets used by the import tests (written into ``tmp_path``, never committed)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import openpyxl

HEADERS = ["ĐỀ MỤC", "CHỦ ĐỀ CON", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI", "keywords"]


def entry(
    code: str, question: str | None = None, answer: str | None = None, topic: str = "Chung"
) -> list[Any]:
    return [
        topic,
        "",
        code,
        question if question is not None else f"Câu hỏi {code}?",
        answer if answer is not None else f"Trả lời cho {code}.",
        f"từ khóa {code}; tu khoa {code}",
    ]


def rows(n: int, prefix: str = "Q", start: int = 1) -> list[list[Any]]:
    return [entry(f"{prefix}{i:03d}") for i in range(start, start + n)]


def write_xlsx(
    path: Path, sheets: dict[str, Sequence[Sequence[Any]]], headers: Sequence[str] = HEADERS
) -> Path:
    """A workbook with one sheet per item: the header row, then the given rows."""
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, data in sheets.items():
        ws = wb.create_sheet(title)
        if headers:
            ws.append(list(headers))
        for row in data:
            ws.append(list(row))
    wb.save(path)
    return path


def write_csv(
    path: Path,
    data: Sequence[Sequence[Any]],
    headers: Sequence[str] = HEADERS,
    *,
    encoding: str = "utf-8",
    delimiter: str = ",",
) -> Path:
    with path.open("w", encoding=encoding, newline="") as fh:
        writer = csv.writer(fh, delimiter=delimiter)
        writer.writerow(headers)
        writer.writerows(data)
    return path
