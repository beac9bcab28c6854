"""The KB export (``medbot kb export``): the active entries of one or more roles back into a workbook.

The workbook is what the import reads: one sheet per role, named by the role id, with the template's
headers (``kb_import.template.TEMPLATE_FIELDS``, KHẨN CẤP included), so a clinic can edit the export and
import it again; an export imported unchanged changes nothing but the sample mark (an import is the clinic's
own). Rows are sorted by topic then code, entries without a topic first, so that no blank topic cell
inherits the topic of the row above on import. Text cells are always written as text: an answer that starts
with ``=`` is not turned into a formula.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font

from db import kb
from db.types import Executor
from engine.types import KBEntry
from kb_import.headers import FIELD_HEADERS
from kb_import.template import TEMPLATE_FIELDS, WIDTHS

URGENT_MARK = "x"


def entry_cells(entry: KBEntry) -> list[str]:
    """One entry as the row of cells of ``TEMPLATE_FIELDS``."""
    values = {
        "topic": entry.topic,
        "subtopic": entry.subtopic,
        "code": entry.code,
        "question": entry.question,
        "answer": entry.answer,
        "keywords": "; ".join(entry.keywords),
        "explanation": entry.explanation,
        "urgent": URGENT_MARK if entry.urgent else "",
    }
    return [values[f] for f in TEMPLATE_FIELDS]


def write_workbook(path: Path, sheets: dict[str, Sequence[KBEntry]]) -> Path:
    """Write ``{role: entries}`` as one sheet per role (parent folders are created)."""
    wb = Workbook()
    wb.remove(wb.active)
    for role, entries in sheets.items():
        ws = wb.create_sheet(role)
        ws.append([FIELD_HEADERS[f] for f in TEMPLATE_FIELDS])
        for cell in ws[1]:
            cell.font = Font(bold=True)
        for entry in entries:
            ws.append(entry_cells(entry))
        wrap = Alignment(wrap_text=True, vertical="top")
        for row in ws.iter_rows(min_row=2):
            for cell in row:
                if cell.data_type == "f":  # text beginning with "=": keep it text
                    cell.data_type = "s"
                cell.alignment = wrap
        for idx, name in enumerate(TEMPLATE_FIELDS, start=1):
            ws.column_dimensions[ws.cell(row=1, column=idx).column_letter].width = WIDTHS[name]
        ws.freeze_panes = "A2"
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
    return path


async def export_kb(db: Executor, path: Path, roles: Sequence[str]) -> dict[str, int]:
    """Export the active entries of ``roles`` to ``path``; returns the number of entries per role."""
    sheets = {role: await kb.export_entries(db, role) for role in roles}
    write_workbook(path, sheets)
    return {role: len(entries) for role, entries in sheets.items()}
