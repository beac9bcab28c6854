"""The one seam between the Telegram admin flow and the KB import job (``kb_import.job``).

The admin router only calls :func:`dry_run` and :func:`run_import`; wiring the real job is a matter of
replacing the bodies below. Until ``kb_import.job`` is merged an INTERIM importer is used: a small
CSV/XLSX reader (columns code, question, answer, topic, subtopic, keywords, role — English or the
Vietnamese headers) writing through ``db.kb.add_entry``. It is clearly not the product importer: no
embeddings, no per-row report file, no import history. The lead replaces it at merge.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from db import kb
from engine.types import KBEntry

Progress = Callable[[int, int], Awaitable[None]]


@dataclass(slots=True)
class ImportReport:
    """What the admin is shown: ``ok`` says whether "Nhập" may be offered; ``text`` is plain Vietnamese."""

    ok: bool
    text: str
    counts: dict[str, int] = field(default_factory=dict)


async def dry_run(pool: asyncpg.Pool, data: bytes, filename: str, *, requested_by: str, default_role: str,
                  roles: list[str]) -> ImportReport:  # fmt: skip
    """Validate the file and report what an import would do; changes nothing."""
    rows, errors = _interim_read(data, filename, default_role, roles)
    return _report(rows, errors, filename, dry=True)


async def run_import(pool: asyncpg.Pool, data: bytes, filename: str, *, requested_by: str, default_role: str,
                     roles: list[str], progress: Progress) -> ImportReport:  # fmt: skip
    """Import the file (all or nothing), calling ``progress(done, total)`` along the way."""
    rows, errors = _interim_read(data, filename, default_role, roles)
    if errors or not rows:
        return _report(rows, errors, filename, dry=False)
    total = len(rows)
    touched: set[str] = set()
    async with pool.acquire() as conn, conn.transaction():
        for i, entry in enumerate(rows, 1):
            await kb.add_entry(conn, entry, search_text=f"{entry.question} {entry.answer}")
            touched.add(entry.role)
            if i % 25 == 0 or i == total:
                await progress(i, total)
        for role in sorted(touched):
            await kb.bump_version(conn, role)
    return _report(rows, [], filename, dry=False)


# ---------------------------------------------------------------- INTERIM reader (replaced at merge)
_HEADERS = {
    "code": {"code", "ma", "ma cau hoi", "id"},
    "question": {"question", "cau hoi"},
    "answer": {"answer", "cau tra loi", "tra loi"},
    "topic": {"topic", "chu de"},
    "subtopic": {"subtopic", "chu de phu"},
    "keywords": {"keywords", "tu khoa"},
    "role": {"role", "vai tro", "chuyen khoa"},
}


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFD", str(text or "").replace("đ", "d").replace("Đ", "D"))
    return "".join(c for c in text if unicodedata.category(c) != "Mn").lower().strip()


def _table(data: bytes, filename: str) -> list[list[Any]]:
    if filename.lower().endswith(".csv"):
        return [row for row in csv.reader(io.StringIO(data.decode("utf-8-sig")))]
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    return [list(r) for r in wb.worksheets[0].iter_rows(values_only=True)]


def _interim_read(
    data: bytes, filename: str, default_role: str, roles: list[str]
) -> tuple[list[KBEntry], list[str]]:
    try:
        table = _table(data, filename)
    except Exception as exc:  # unreadable file: reported, never raised to the chat
        return [], [f"Không đọc được tệp: {exc}"]
    if not table:
        return [], ["Tệp trống."]
    header = [_fold(h) for h in table[0]]
    cols = {
        key: next((i for i, h in enumerate(header) if h in names), None) for key, names in _HEADERS.items()
    }
    if cols["code"] is None or cols["answer"] is None:
        return [], ["Thiếu cột bắt buộc: code (mã) và answer (câu trả lời)."]
    rows: list[KBEntry] = []
    errors: list[str] = []
    seen: set[tuple[str, str]] = set()

    def cell(row: list[Any], key: str) -> str:
        i = cols[key]
        return str(row[i]).strip() if i is not None and i < len(row) and row[i] is not None else ""

    for n, row in enumerate(table[1:], start=2):
        if not any(str(c or "").strip() for c in row):
            continue
        code, answer, role = cell(row, "code"), cell(row, "answer"), cell(row, "role") or default_role
        if not code:
            errors.append(f"Dòng {n}: thiếu mã.")
        elif not answer:
            errors.append(f"Dòng {n}: thiếu câu trả lời.")
        elif role not in roles:
            errors.append(f"Dòng {n}: chuyên khoa không hợp lệ «{role}».")
        elif (role, code) in seen:
            errors.append(f"Dòng {n}: mã {code} bị trùng.")
        else:
            seen.add((role, code))
            keywords = [k.strip() for k in cell(row, "keywords").split(";") if k.strip()]
            rows.append(KBEntry(id=0, role=role, code=code, question=cell(row, "question"), answer=answer,
                                topic=cell(row, "topic"), subtopic=cell(row, "subtopic"), keywords=keywords))  # fmt: skip
    return rows, errors


def _report(rows: list[KBEntry], errors: list[str], filename: str, *, dry: bool) -> ImportReport:
    by_role: dict[str, int] = {}
    for r in rows:
        by_role[r.role] = by_role.get(r.role, 0) + 1
    lines = [f"{'Kiểm tra' if dry else 'Kết quả nhập'} tệp {filename}:"]
    lines += [f"• {role}: {n} dòng hợp lệ" for role, n in sorted(by_role.items())]
    if errors:
        lines.append(f"• {len(errors)} lỗi:")
        lines += [f"  – {e}" for e in errors[:15]]
        if len(errors) > 15:
            lines.append(f"  … và {len(errors) - 15} lỗi khác.")
        lines.append("Hãy sửa tệp rồi gửi lại; KB chưa thay đổi.")
    elif not rows:
        lines.append("Không có dòng nào để nhập.")
    elif not dry:
        lines.append(f"✅ Đã nhập {len(rows)} mục.")
    return ImportReport(ok=not errors and bool(rows), text="\n".join(lines),
                        counts={"valid": len(rows), "errors": len(errors)})  # fmt: skip
