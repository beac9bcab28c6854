"""Build ``sample_kb.xlsx`` from the Python data in this folder: ``python -m kb_import.sample.build_sample``.

One sheet per role (sheet name = role id), the standard headers, codes numbered per role with the role's
prefix. Keywords get their no-diacritic forms appended, since patients often type without diacritics. A data
module may list the codes of its urgent entries (answers that send the reader to urgent care) in
``URGENT_CODES``; they get an ``x`` in the KHẨN CẤP column. A listed code that no entry has stops the build.
The content is written for this project in careful, conservative Vietnamese (plain language for patients,
professional for doctors) and is not copied from any website; it is sample data for a clinic to replace.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

from engine.text import strip_diacritics
from kb_import.sample import (
    SAMPLE_PATH,
    data_doctor_dental,
    data_doctor_endocrine,
    data_patient_dental,
    data_patient_diabetes,
)

HEADERS = ["ĐỀ MỤC", "CHỦ ĐỀ CON", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI", "keywords", "KHẨN CẤP"]

ROLES: dict[str, tuple[str, ModuleType]] = {
    "patient_dental": ("NK", data_patient_dental),
    "patient_diabetes": ("TD", data_patient_diabetes),
    "doctor_dental": ("BSNK", data_doctor_dental),
    "doctor_endocrine": ("BSNT", data_doctor_endocrine),
}


def keywords_with_plain_forms(keywords: str) -> str:
    """``ê buốt; răng nhạy cảm`` → ``ê buốt; răng nhạy cảm; e buot; rang nhay cam``."""
    words = [k.strip() for k in keywords.split(";") if k.strip()]
    out: dict[str, None] = dict.fromkeys(words)
    for word in words:
        out.setdefault(strip_diacritics(word).lower(), None)
    return "; ".join(out)


def sample_rows() -> dict[str, list[list[str]]]:
    """Rows per role sheet, in the header order above."""
    sheets: dict[str, list[list[str]]] = {}
    for role, (prefix, module) in ROLES.items():
        urgent: frozenset[str] = getattr(module, "URGENT_CODES", frozenset())
        rows = []
        for i, (topic, question, answer, keywords) in enumerate(module.ENTRIES, start=1):
            code = f"{prefix}-{i:03d}"
            mark = "x" if code in urgent else ""
            rows.append([topic, "", code, question, answer, keywords_with_plain_forms(keywords), mark])
        unknown = sorted(urgent - {row[2] for row in rows})
        if unknown:
            raise ValueError(
                f"{module.__name__}: URGENT_CODES names codes no entry has: {', '.join(unknown)}"
            )
        sheets[role] = rows
    return sheets


def build(path: Path = SAMPLE_PATH) -> Path:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    wb = Workbook()
    wb.remove(wb.active)
    for role, rows in sample_rows().items():
        ws = wb.create_sheet(role)
        ws.append(HEADERS)
        for row in rows:
            ws.append(row)
        for cell in ws[1]:
            cell.font = Font(bold=True)
        for letter, width in zip("ABCDEFG", (26, 14, 11, 48, 90, 50, 11), strict=True):
            ws.column_dimensions[letter].width = width
        for row in ws.iter_rows(min_row=2):
            for cell in row:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
        ws.freeze_panes = "A2"
    wb.save(path)
    return path


def main() -> int:
    path = build(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE_PATH)
    counts = {role: len(rows) for role, rows in sample_rows().items()}
    print(f"wrote {path}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
