"""The parts that keep hostile uploads harmless, without a database: the zip checks, the memory-capped child
process, the streaming reader's limits, and the article limits and rendering of /verify."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from bot.telegram.routers.verify import render_item
from bot.verify_service import ItemView
from engine import sandbox
from engine.untrusted import UnsafeFile, ZipLimits, check_zip
from engine.verify.article import parse_article
from engine.verify.documents import DocumentError
from engine.verify.report import Report, ReportRow
from engine.verify.types import Evidence
from kb_import.limits import ReadLimits
from kb_import.readers import ReadError, open_file
from tests import hostile_files as hf

# --- zip checks -------------------------------------------------------------------------------------------


def test_zip_check_refuses_a_bomb_before_decompressing(tmp_path: Path) -> None:
    bomb = hf.write_xlsx(tmp_path / "bomb.xlsx", [hf.header_row(), *hf.blank(20 * 2**20)])
    assert bomb.stat().st_size < 40_000
    with pytest.raises(UnsafeFile) as caught:
        check_zip(bomb, ZipLimits(max_uncompressed_bytes=250 * 2**20))
    assert caught.value.code == "zip_ratio"
    assert "tỉ lệ bất thường" in caught.value.message_vi and "tối đa 100 lần" in caught.value.message_vi


def test_zip_check_names_the_size_and_part_limits(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:  # stored: ratio 1
        for i in range(3):
            zf.writestr(f"part{i}.xml", b"x" * 2_000_000)
    with pytest.raises(UnsafeFile) as caught:
        check_zip(path, ZipLimits(max_uncompressed_bytes=5 * 2**20))
    assert caught.value.code == "zip_too_large"
    assert caught.value.message_vi.startswith("Tệp quá lớn khi giải nén: tối đa 5 MB")
    with pytest.raises(UnsafeFile) as caught:
        check_zip(path.read_bytes(), ZipLimits(max_uncompressed_bytes=10 * 2**20, max_members=2))
    assert caught.value.code == "zip_members" and "tối đa 2" in caught.value.message_vi
    check_zip(path, ZipLimits(max_uncompressed_bytes=10 * 2**20))  # within every limit: no error


# --- the child process ------------------------------------------------------------------------------------


def test_sandbox_returns_results_progress_and_the_targets_own_errors() -> None:
    seen: list[tuple[str, int, int | None]] = []
    value = {"rows": [1, 2, 3], "text": "Răng"}
    assert sandbox.call("tests.hostile_files:echo", value, on_progress=lambda *a: seen.append(a)) == value
    assert seen == [("validate", 1, 2), ("validate", 2, 2)]
    with pytest.raises(ValueError, match="hỏng"):
        sandbox.call("tests.hostile_files:refuse", "tệp hỏng")


def test_sandbox_contains_memory_blow_ups_crashes_and_endless_loops() -> None:
    with pytest.raises(sandbox.SandboxError) as caught:
        sandbox.call("tests.hostile_files:allocate", 400, memory_bytes=200 * 2**20)
    assert caught.value.reason == "memory"
    assert sandbox.call("tests.hostile_files:allocate", 50, memory_bytes=200 * 2**20) == 50 * 2**20
    with pytest.raises(sandbox.SandboxError) as caught:
        sandbox.call("tests.hostile_files:die")
    assert caught.value.reason == "crashed"
    with pytest.raises(sandbox.SandboxError) as caught:
        sandbox.call("tests.hostile_files:spin", timeout_s=1)
    assert caught.value.reason == "timeout"


# --- the streaming reader -----------------------------------------------------------------------------------


def _read_all(path: Path, limits: ReadLimits | None = None) -> None:
    wb = open_file(path, limits=limits)
    try:
        for sheet in wb.sheets:
            for _ in sheet.rows:
                pass
    finally:
        wb.close()


def test_reader_limits_on_rows_text_and_shared_strings(tmp_path: Path) -> None:
    rows = [hf.header_row(), *(hf.data_row(i, f"Q{i}") for i in range(2, 12))]
    path = hf.write_xlsx(tmp_path / "rows.xlsx", rows)
    _read_all(path, ReadLimits(max_rows=11))
    with pytest.raises(ReadError) as caught:
        _read_all(path, ReadLimits(max_rows=10))
    assert caught.value.code == "too_many_rows"
    assert "tối đa 10 dòng có dữ liệu" in caught.value.message_vi

    shared = hf.write_xlsx(tmp_path / "ss.xlsx", [hf.header_row()], shared_strings=["Răng ê buốt"] * 50)
    with pytest.raises(ReadError) as caught:
        _read_all(shared, ReadLimits(max_text_chars=300))
    assert caught.value.code == "shared_strings_too_large" and "tối đa 300 ký tự" in caught.value.message_vi

    # one shared string used by many cells counts every time: that is the text the import would hold
    refs = [hf.header_row(), *(f'<row r="{i}"><c r="C{i}" t="s"><v>0</v></c></row>' for i in range(2, 40))]
    path = hf.write_xlsx(tmp_path / "refs.xlsx", refs, shared_strings=["x" * 100])
    with pytest.raises(ReadError) as caught:
        _read_all(path, ReadLimits(max_text_chars=3000))
    assert caught.value.code == "too_much_text" and "tối đa 3.000 ký tự" in caught.value.message_vi


def test_reader_keeps_values_and_ignores_empty_cells_far_right(tmp_path: Path) -> None:
    styled = '<c r="XFD2" s="1"/><c r="ZZZZZ2" t="inlineStr"><is><t></t></is></c>'
    path = hf.write_xlsx(tmp_path / "ok.xlsx", [hf.header_row(), hf.row(2, hf.cell("A2", "Q1"), styled)])
    wb = open_file(path)
    rows = list(wb.sheets[0].rows)
    wb.close()
    assert rows == [(1, ["MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI"]), (2, ["Q1"])]


# --- articles for /verify -----------------------------------------------------------------------------------


def test_article_sentence_cap_says_how_many_and_the_limit() -> None:
    at_cap = " ".join(f"Câu thứ {i} nói về răng." for i in range(2000))
    assert len(parse_article(at_cap, "a.txt").claims) == 2000
    with pytest.raises(DocumentError) as caught:
        parse_article(at_cap + " Câu thừa.", "a.txt")
    assert str(caught.value) == (
        "bài viết có 2.001 câu, vượt giới hạn 2.000 câu cho mỗi lần kiểm tra; hãy chia bài viết thành nhiều "
        "phần rồi gửi từng phần"
    )


def test_article_size_cap_and_docx_zip_bomb(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"^tệp quá lớn: tối đa 5 MB"):
        parse_article(b"x" * (5 * 2**20 + 1), "big.txt")
    bomb = hf.write_docx(tmp_path / "bom.docx", [hf.paragraph("Uống thuốc đúng giờ."), *hf.blank(30 * 2**20)])
    assert bomb.stat().st_size < 60_000
    with pytest.raises(DocumentError, match=r"^tệp bị nén với tỉ lệ bất thường \(\d"):
        parse_article(bomb.read_bytes(), "bom.docx")
    ok = hf.write_docx(tmp_path / "ok.docx", [hf.paragraph("Uống thuốc đúng giờ. Ăn ít đường.")])
    assert [s.text for s in parse_article(ok.read_bytes(), "ok.docx").claims] == [
        "Uống thuốc đúng giờ.",
        "Ăn ít đường.",
    ]


def _view(sentence: str) -> ItemView:
    evidence = [
        Evidence(i, "Hướng dẫn", "Răng", "Chải răng hai lần mỗi ngày. " * 40, 0.8, 0.9, 0.4) for i in range(3)
    ]
    return ItemView(
        1, 4, 2, 9, sentence, "Chăm sóc", "UNCLEAR", 0.3, "Chưa đủ căn cứ.", evidence, "offline", []
    )


def test_a_sentence_longer_than_a_telegram_message_is_shown_shortened() -> None:
    sentence = "Bệnh nhân cần chải răng " + "rất kỹ và " * 600 + "đều đặn."
    assert len(sentence) > 4096
    text = render_item(_view(sentence))
    assert len(text) <= 4096
    assert "<blockquote>Bệnh nhân cần chải răng rất kỹ" in text and "…" in text
    assert len(sentence) == 6032 and "(Câu dài 6.032 ký tự, đã rút gọn khi hiển thị" in text
    assert "Câu 2/9" in text and "UNCLEAR" in text and "Bằng chứng" in text
    quoted = render_item(_view("<&>" * 3000))  # escaping triples the length: still within the limit
    assert len(quoted) <= 4096 and "&lt;&amp;&gt;" in quoted
    short = render_item(_view("Chải răng hai lần mỗi ngày."))
    assert "đã rút gọn" not in short and "<blockquote>Chải răng hai lần mỗi ngày.</blockquote>" in short


def test_end_of_session_summary_fits_one_message_with_long_flagged_sentences() -> None:
    rows = [ReportRow(i, "Sai liều " * 700, "", False, "FLAGGED", 0.5, "", None) for i in range(12)]
    summary = Report(title="Bài viết", article_name="a.txt", session_status="done", rows=rows).summary_vi()
    assert len(summary) <= 4096 and summary.count("• Sai liều") == 10
