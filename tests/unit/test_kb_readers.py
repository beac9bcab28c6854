"""The xlsx fast reader agrees with openpyxl (the fallback), including formulas without cached values."""

from __future__ import annotations

import datetime as dt

import openpyxl

from kb_import import readers
from kb_import.headers import fold_key, match_header
from kb_import.validate import cell_text, split_keywords


def _workbook(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "patient_dental"
    ws.append(["MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI", "n"])
    ws.append(["Q1", "Răng ê buốt?", "Dùng kem chống ê buốt.", 3])
    ws.append([])
    ws.append(["Q2", "=A2&B2", "#N/A", 2.5])
    ws["F6"] = True
    ws["B7"] = dt.date(2024, 1, 2)
    wb.create_sheet("Ghi chú").append(["ghi chú"])
    wb.save(path)
    return path


def _read(wb):
    try:
        return {s.sheet: (list(s.rows), set(s.formula_cells)) for s in wb.sheets}
    finally:
        wb.close()


def test_fast_reader_matches_openpyxl(tmp_path, monkeypatch):
    path = _workbook(tmp_path / "kb.xlsx")
    fast = _read(readers.open_file(path))
    monkeypatch.setattr(readers, "_open_xlsx_fast", lambda *a: (_ for _ in ()).throw(ValueError("off")))
    slow = _read(readers.open_file(path))
    assert list(fast) == list(slow) == ["patient_dental", "Ghi chú"]
    rows_fast, formulas_fast = fast["patient_dental"]
    rows_slow, formulas_slow = slow["patient_dental"]
    assert formulas_fast == formulas_slow == {(4, 1)}

    def norm(rows):  # trailing empty cells and date formatting differ; values do not
        out = []
        for number, cells in rows:
            cells = [c for c in cells]
            while cells and cells[-1] is None:
                cells.pop()
            if cells:
                out.append(
                    (
                        number,
                        [cell_text(c) if not isinstance(c, dt.datetime | dt.date) else "date" for c in cells],
                    )
                )
        return out

    fast_rows = [
        (n, ["date" if n == 7 and i == 1 else c for i, c in enumerate(cells)]) for n, cells in norm(rows_fast)
    ]
    assert fast_rows == norm(rows_slow)
    assert norm(rows_fast)[2] == (4, ["Q2", "", "#N/A", "2.5"])


def test_header_folding_and_keywords():
    assert fold_key("CHỦ  ĐỀ  CON") == "chudecon" == fold_key("chu de con")
    header = match_header(["STT", "MÃ SỐ", "CÂU HỎI", "CÂU  TRẢ    LỜI", "GHI CHÚ"])
    assert header is not None and header.columns["code"] == 1 and header.ignored == ["GHI CHÚ"]
    assert match_header(["Ghi chú", "CÂU HỎI"]) is None
    assert split_keywords("a; b;; A ;c\nd") == ["a", "b", "c", "d"]
    assert split_keywords("x, y") == ["x", "y"]
    assert cell_text(3.0) == "3" and cell_text("  Răng\r\n ") == "Răng"
