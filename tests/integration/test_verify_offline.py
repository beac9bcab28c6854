"""Offline verdicts on a small guideline + article pair, the session in PostgreSQL, resume, reports, CLI."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import asyncpg
import pytest

from bot.verify_console import run_verify
from bot.verify_service import VerificationService
from db import users
from db.guidelines import PgGuidelineStore
from engine.verify.article import parse_article
from engine.verify.offline import offline_verdict
from engine.verify.search import GuidelineSearch
from engine.verify.types import Claim, Evidence
from engine.verify.verifier import OfflineVerifier
from kb_import.guidelines import import_document
from tests.verify_support import DATA, embedder

ARTICLE = (DATA / "article_dtd.md").read_bytes()


async def _service(pool: asyncpg.Pool) -> VerificationService:
    await import_document(pool, embedder(), (DATA / "guideline_dtd.md").read_bytes(), "guideline_dtd.md")
    return VerificationService(
        pool, OfflineVerifier(GuidelineSearch(PgGuidelineStore(pool, embedder()), embedder()))
    )


async def test_offline_verdicts_supported_contradicted_unrelated(db: asyncpg.Pool) -> None:
    service = await _service(db)
    article = parse_article(ARTICLE, "article_dtd.md")
    verdicts = {c.text: await service.verifier.verify(Claim(c.text, c.location)) for c in article.claims}
    status = {text: v.status for text, v in verdicts.items()}
    assert status == {
        "Metformin là thuốc lựa chọn đầu tay cho người bệnh đái tháo đường típ 2.": "VALID",
        "Liều khởi đầu metformin là 1000 mg mỗi ngày.": "FLAGGED",  # guideline: 500 mg
        "Có thể dùng metformin khi mức lọc cầu thận dưới 30 ml/phút.": "FLAGGED",  # guideline: contraindicated
        "Người bệnh nên hoạt động thể lực ít nhất 150 phút mỗi tuần.": "VALID",
        "Uống trà xanh giúp chữa khỏi bệnh tiểu đường.": "UNCLEAR",  # not in the guideline
        "Nên đi khám răng định kỳ 6 tháng một lần.": "UNCLEAR",
    }
    for text, verdict in verdicts.items():
        assert verdict.evidence, text  # evidence is always retrieved and shown
        assert verdict.source == "offline"
        if verdict.status == "UNCLEAR":
            assert verdict.confidence <= 0.3
        else:
            assert 0.4 <= verdict.confidence <= 0.8  # never a near-certain verdict without an LLM or a human
    dose = verdicts["Liều khởi đầu metformin là 1000 mg mỗi ngày."]
    assert "1000 mg" in dose.reasoning and "500 mg" in dose.reasoning
    assert dose.evidence[0].heading == "2. Điều trị bằng thuốc › Metformin"
    assert (
        "chống chỉ định" in verdicts["Có thể dùng metformin khi mức lọc cầu thận dưới 30 ml/phút."].reasoning
    )


def _ev(text: str, dense: float | None = 0.93) -> Evidence:
    return Evidence(chunk_id=1, document="HD", heading="Metformin", text=text, score=1.0, dense=dense)


def test_offline_rule_is_conservative() -> None:
    guideline = "Liều khởi đầu metformin 500 mg mỗi ngày, uống sau ăn."
    assert offline_verdict("Liều khởi đầu metformin 500 mg mỗi ngày.", [_ev(guideline)]).status == "VALID"
    # a number that the guideline does not mention (no conflicting value of the same unit): not VALID
    assert offline_verdict(
        "Liều khởi đầu metformin 500 mg mỗi ngày trong 3 tuần.", [_ev(guideline)]
    ).status == ("UNCLEAR")
    # same words but low semantic similarity: not VALID
    assert (
        offline_verdict("Liều khởi đầu metformin 500 mg mỗi ngày.", [_ev(guideline, 0.85)]).status
        == "UNCLEAR"
    )
    # a negation the guideline does not have: FLAGGED, not VALID
    negated = offline_verdict(
        "Không nên uống metformin liều khởi đầu 500 mg mỗi ngày sau ăn.", [_ev(guideline)]
    )
    assert negated.status == "FLAGGED"
    # nothing retrieved, or a sentence without content: UNCLEAR
    assert offline_verdict("Liều khởi đầu metformin 500 mg mỗi ngày.", []).status == "UNCLEAR"
    assert offline_verdict("Vâng.", [_ev(guideline)]).status == "UNCLEAR"
    # no dense leg: VALID needs (almost) every content word
    assert (
        offline_verdict("Liều khởi đầu metformin 500 mg mỗi ngày.", [_ev(guideline, None)]).status == "VALID"
    )


async def test_session_walk_resume_and_report(db: asyncpg.Pool, tmp_path: Path) -> None:
    service = await _service(db)
    user = await users.get_or_create(db, "telegram", "42")
    article = parse_article(ARTICLE, "article_dtd.md")
    session = await service.start_session(
        article, user_id=user.id, article_name="article_dtd.md", channel="telegram"
    )
    first = await service.current(session.id)
    assert first is not None and (first.number, first.total) == (1, 6) and first.status == "VALID"
    second = await service.accept(session.id, first.idx)
    assert second is not None and second.status == "FLAGGED"
    assert await service.accept(session.id, first.idx) is not None  # a stale double tap changes nothing
    again = await service.research(session.id, "liều metformin khởi đầu")
    assert again is not None and again.idx == second.idx and again.searches == ["liều metformin khởi đầu"]
    assert again.evidence

    # "restart": a brand-new service object on the same database resumes where the clinician was
    restarted = VerificationService(db, service.verifier)
    resumed = await restarted.open_session(user.id)
    assert resumed is not None and resumed.id == session.id
    current = await restarted.current(session.id)
    assert (
        current is not None and current.idx == second.idx and current.searches == ["liều metformin khởi đầu"]
    )
    third = await restarted.skip(session.id, current.idx)
    assert third is not None and third.sentence.startswith("Có thể dùng metformin")
    report = await restarted.stop(session.id)
    assert report.session_status == "stopped"
    assert await restarted.current(session.id) is None
    assert await restarted.open_session(user.id) is None

    md_path, csv_path = report.write(tmp_path, "article_dtd.md")
    assert md_path.name == "article_dtd.report.md" and csv_path.name == "article_dtd.report.csv"
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8-sig"))))
    assert list(rows[0]) == [
        "sentence",
        "section",
        "status",
        "confidence",
        "evidence",
        "decision",
        "reasoning",
    ]
    assert len(rows) == 6  # headings are not rows
    assert [(r["status"], r["decision"]) for r in rows[:4]] == [
        ("VALID", "accepted"),
        ("FLAGGED", "skipped"),
        ("FLAGGED", ""),  # verdict computed when shown, never decided (stopped)
        ("PENDING", ""),
    ]
    assert rows[0]["section"] == "Dùng thuốc đúng cách"
    assert (
        "Hướng dẫn điều trị đái tháo đường típ 2 (tóm tắt) › 2. Điều trị bằng thuốc › Metformin"
        in rows[0]["evidence"]
    )
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown.startswith("# Báo cáo kiểm tra bài viết: Sống khỏe với bệnh tiểu đường")
    assert "### Dùng thuốc đúng cách" in markdown and "Quyết định của bác sĩ: Chấp nhận" in markdown
    assert "Tìm lại với từ khóa: liều metformin khởi đầu" in markdown
    assert "đã dừng" in report.summary_vi()


async def test_new_session_stops_the_open_one(db: asyncpg.Pool) -> None:
    service = await _service(db)
    user = await users.get_or_create(db, "telegram", "7")
    article = parse_article(ARTICLE, "a.md")
    old = await service.start_session(article, user_id=user.id)
    new = await service.start_session(article, user_id=user.id)
    assert (await service.session(old.id)).status == "stopped"  # type: ignore[union-attr]
    assert (await service.open_session(user.id)).id == new.id  # type: ignore[union-attr]


async def test_console_verify_auto_writes_reports(db: asyncpg.Pool, tmp_path: Path) -> None:
    service = await _service(db)
    out = io.StringIO()
    md_path, csv_path = await run_verify(
        service, ARTICLE, "article_dtd.md", user_id=None, auto=True, out_dir=tmp_path, out=out
    )
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8-sig"))))
    assert md_path.exists()
    assert [r["decision"] for r in rows] == ["accepted"] * 6
    assert [r["status"] for r in rows] == ["VALID", "FLAGGED", "FLAGGED", "VALID", "UNCLEAR", "UNCLEAR"]
    printed = out.getvalue()
    assert "Câu 2/6" in printed and "Báo cáo:" in printed and "đã hoàn tất" in printed


@pytest.mark.parametrize("answers", [["r", "metformin suy thận", "s", "q"]])
async def test_console_verify_interactive(
    db: asyncpg.Pool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: list[str]
) -> None:
    service = await _service(db)
    replies = iter(answers)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(replies))
    _, csv_path = await run_verify(
        service, ARTICLE, "bai.md", user_id=None, auto=False, out_dir=tmp_path, out=io.StringIO()
    )
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8-sig"))))
    assert [r["decision"] for r in rows] == ["skipped", "", "", "", "", ""]
