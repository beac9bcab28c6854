"""CSV files people open in a spreadsheet: every cell neutralised against formula injection.

Excel, LibreOffice and Google Sheets run a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula
(``=HYPERLINK(...)``, ``=cmd|...``), and a leading tab or carriage return can hide such a start. Text in our
exports comes from people we do not control (articles, guideline documents, patients' words), so such a cell is
written with a leading apostrophe — the spreadsheet convention for "this is text" — and reads as what was
written. Every CSV writer of the project goes through :func:`csv_text` (OWASP "CSV injection").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    """``value`` as a CSV cell that a spreadsheet shows as text, never runs as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The CSV text of ``header`` and ``rows``, every cell passed through :func:`safe_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([safe_cell(c) for c in header])
    for row in rows:
        writer.writerow([safe_cell(c) for c in row])
    return buffer.getvalue()
