"""Verification reports: Markdown for reading, CSV for spreadsheets (one row per sentence).

CSV columns: ``sentence, section, status, confidence, evidence, decision, reasoning`` — ``status`` is the
verifier's VALID / FLAGGED / UNCLEAR (PENDING if never computed), ``decision`` the clinician's ``accepted`` /
``skipped`` (empty when the session stopped before the sentence), ``evidence`` the shown passages as
``document › heading: text [score]`` joined by `` || ``. Written UTF-8 with a BOM so Excel reads Vietnamese;
a cell starting with ``=``, ``+``, ``-``, ``@``, tab or CR gets a leading apostrophe (``engine.csv_safe``).
Headings are not rows: they are context, shown as section titles in the Markdown report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from engine.csv_safe import csv_text
from engine.verify.types import STATUS_VI, Evidence

DECISION_VI = {"accepted": "Chấp nhận", "skipped": "Bỏ qua (không phải nhận định)", None: "Chưa duyệt"}
SUMMARY_SENTENCE_CHARS = 300  # a flagged sentence in the chat summary; 10 of them stay under 4096 characters
CSV_COLUMNS = ["sentence", "section", "status", "confidence", "evidence", "decision", "reasoning"]


@dataclass(slots=True)
class ReportRow:
    idx: int
    sentence: str
    section: str
    is_heading: bool
    status: str
    confidence: float | None
    reasoning: str
    decision: str | None
    evidence: list[Evidence] = field(default_factory=list)
    source: str | None = None
    guidance: str | None = None
    searches: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    title: str
    article_name: str
    session_status: str
    rows: list[ReportRow]
    created: datetime = field(default_factory=datetime.now)

    @property
    def claims(self) -> list[ReportRow]:
        return [r for r in self.rows if not r.is_heading]

    def counts(self) -> tuple[Counter[str], Counter[str]]:
        statuses = Counter(r.status for r in self.claims if r.decision != "skipped")
        decisions = Counter(r.decision or "undecided" for r in self.claims)
        return statuses, decisions

    def summary_vi(self) -> str:
        """A short Vietnamese summary for the end-of-session message."""
        statuses, decisions = self.counts()
        state = {"done": "đã hoàn tất", "stopped": "đã dừng", "open": "đang mở"}.get(self.session_status, "")
        lines = [
            f"📋 Kiểm tra “{self.title}” {state}: {len(self.claims)} câu.",
            f"✅ Phù hợp: {statuses.get('VALID', 0)} · ⚠️ Cần xem lại: {statuses.get('FLAGGED', 0)} · "
            f"❔ Chưa đủ căn cứ: {statuses.get('UNCLEAR', 0)}",
            f"Bác sĩ đã chấp nhận {decisions.get('accepted', 0)}, bỏ qua {decisions.get('skipped', 0)}, "
            f"chưa duyệt {decisions.get('undecided', 0)}.",
        ]
        flagged = [r for r in self.claims if r.status == "FLAGGED" and r.decision != "skipped"]
        if flagged:
            lines.append("Các câu cần xem lại:")
            lines += [f"• {_shorten(r.sentence, SUMMARY_SENTENCE_CHARS)}" for r in flagged[:10]]
        return "\n".join(lines)

    def markdown(self) -> str:
        statuses, decisions = self.counts()
        out = [
            f"# Báo cáo kiểm tra bài viết: {self.title}",
            "",
            f"- Tệp: {self.article_name or '(văn bản dán vào)'}",
            f"- Thời điểm: {self.created:%Y-%m-%d %H:%M}",
            f"- Trạng thái phiên: {self.session_status}",
            f"- Số câu: {len(self.claims)}",
            "",
            "## Tóm tắt",
            "",
            "| Kết quả | Số câu |",
            "| --- | --- |",
        ]
        for status in ("VALID", "FLAGGED", "UNCLEAR", "PENDING"):
            if statuses.get(status):
                out.append(f"| {status} — {STATUS_VI[status]} | {statuses[status]} |")
        out += [
            f"| Bỏ qua (không phải nhận định) | {decisions.get('skipped', 0)} |",
            "",
            f"Bác sĩ chấp nhận: {decisions.get('accepted', 0)} · bỏ qua: {decisions.get('skipped', 0)} · "
            f"chưa duyệt: {decisions.get('undecided', 0)}",
            "",
            "## Chi tiết",
        ]
        n = 0
        for row in self.rows:
            if row.is_heading:
                out += ["", f"### {row.sentence}"]
                continue
            n += 1
            conf = f"{row.confidence:.2f}" if row.confidence is not None else "—"
            out += [
                "",
                f"**{n}. {row.sentence}**",
                "",
                f"- Mục: {row.section or '—'}",
                f"- Kết quả: **{row.status}** ({STATUS_VI.get(row.status, row.status)}), độ tin cậy {conf}"
                + (f", đánh giá bởi: {row.source}" if row.source else ""),
                f"- Quyết định của bác sĩ: {DECISION_VI.get(row.decision, row.decision)}",
            ]
            if row.reasoning:
                out.append(f"- Lý do: {row.reasoning}")
            if row.searches:
                out.append("- Tìm lại với từ khóa: " + "; ".join(row.searches))
            if row.guidance:
                out.append(f"- Ghi chú của bác sĩ: {row.guidance}")
            if row.evidence:
                out.append("- Bằng chứng:")
                for ev in row.evidence:
                    where = " › ".join(p for p in (ev.document, ev.heading) if p)
                    out.append(f"  - _{where}_ (điểm {ev.score:.2f}): {ev.text.replace(chr(10), ' ')}")
            else:
                out.append("- Bằng chứng: không tìm thấy đoạn hướng dẫn liên quan")
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        """The CSV report; cells are neutralised against spreadsheet formulas (``engine.csv_safe``)."""
        rows: list[list[str]] = []
        for row in self.claims:
            evidence = " || ".join(
                f"{' › '.join(p for p in (ev.document, ev.heading) if p)}: {ev.text.replace(chr(10), ' ')} "
                f"[{ev.score:.2f}]"
                for ev in row.evidence
            )
            rows.append(
                [
                    row.sentence,
                    row.section,
                    row.status,
                    "" if row.confidence is None else f"{row.confidence:.2f}",
                    evidence,
                    row.decision or "",
                    row.reasoning,
                ]
            )
        return csv_text(CSV_COLUMNS, rows)

    def write(self, out_dir: str | Path, article_name: str | None = None) -> tuple[Path, Path]:
        """Write ``<article>.report.md`` and ``<article>.report.csv`` into ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        stem = report_stem(article_name or self.article_name or self.title)
        md_path, csv_path = out / f"{stem}.report.md", out / f"{stem}.report.csv"
        md_path.write_text(self.markdown(), encoding="utf-8")
        csv_path.write_text(self.csv(), encoding="utf-8-sig")
        return md_path, csv_path


def report_stem(name: str) -> str:
    """ "bai-viet.docx" → "bai-viet"; path separators and odd characters are dropped."""
    stem = (
        Path(name).stem
        if Path(name).suffix.lower() in (".txt", ".md", ".docx", ".markdown")
        else Path(name).name
    )
    cleaned = "".join(c if c.isalnum() or c in "-_. " else "_" for c in stem).strip(" .")
    return cleaned or "article"


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
