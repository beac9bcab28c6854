"""Article processing: Vietnamese sentence splitting, headings as context, bullets, abbreviations, decimals."""

from __future__ import annotations

import io

import docx

from engine.text import fold
from engine.verify.article import parse_article, split_sentences
from engine.verify.offline import negated, quantities


def test_abbreviations_and_decimals_do_not_split() -> None:
    text = (
        "Theo TS. Nguyễn Văn An và ThS. BS. Lê Thị Hoa, liều 2.5 mg là đủ. Uống 7,5 ml mỗi ngày! "
        "PGS.TS. Trần B. Cường khuyên ăn ít muối, rau, v.v. để giảm huyết áp. GS. Phạm Minh nói: cần bổ "
        "sung vitamin D. Tại Tp. Hồ Chí Minh có 1.000 ca mắc mới. Ăn rau, củ, quả, v.v. Sau đó nghỉ ngơi."
    )
    assert split_sentences(text) == [
        "Theo TS. Nguyễn Văn An và ThS. BS. Lê Thị Hoa, liều 2.5 mg là đủ.",
        "Uống 7,5 ml mỗi ngày!",
        "PGS.TS. Trần B. Cường khuyên ăn ít muối, rau, v.v. để giảm huyết áp.",
        "GS. Phạm Minh nói: cần bổ sung vitamin D.",
        "Tại Tp. Hồ Chí Minh có 1.000 ca mắc mới.",
        "Ăn rau, củ, quả, v.v.",
        "Sau đó nghỉ ngơi.",
    ]


def test_question_marks_ellipsis_and_quotes() -> None:
    assert split_sentences("Có nên ăn đường không? Không… “Đường làm tăng glucose máu.” Hết") == [
        "Có nên ăn đường không?",
        "Không…",
        "“Đường làm tăng glucose máu.”",
        "Hết",
    ]


MARKDOWN = """# Sống khỏe với đái tháo đường

## Chế độ ăn

Người bệnh nên ăn nhiều rau xanh. Hạn chế đồ ngọt.

Các thực phẩm nên tránh gồm:
- Nước ngọt có ga.
- Bánh kẹo, v.v.

### Dùng thuốc

1. Metformin 500 mg mỗi ngày.
2. Theo BS. Lan, không tự ý ngừng thuốc.
a) Tái khám sau 3 tháng.

## Vận động

**Lưu ý**

Đi bộ 30 phút mỗi ngày.
"""


def test_markdown_article_headings_bullets_and_context() -> None:
    article = parse_article(MARKDOWN, "bai-viet.md")
    assert article.title == "Sống khỏe với đái tháo đường"  # the single H1 is the title, not a section
    rows = [(i.text, i.is_heading, i.is_bullet, i.section, i.subsection) for i in article.items]
    assert rows == [
        ("Chế độ ăn", True, False, "Chế độ ăn", ""),
        ("Người bệnh nên ăn nhiều rau xanh.", False, False, "Chế độ ăn", ""),
        ("Hạn chế đồ ngọt.", False, False, "Chế độ ăn", ""),
        ("Các thực phẩm nên tránh gồm:", False, False, "Chế độ ăn", ""),
        ("Nước ngọt có ga.", False, True, "Chế độ ăn", ""),
        ("Bánh kẹo, v.v.", False, True, "Chế độ ăn", ""),
        ("Dùng thuốc", True, False, "Chế độ ăn", "Dùng thuốc"),
        ("Metformin 500 mg mỗi ngày.", False, True, "Chế độ ăn", "Dùng thuốc"),
        ("Theo BS. Lan, không tự ý ngừng thuốc.", False, True, "Chế độ ăn", "Dùng thuốc"),
        ("Tái khám sau 3 tháng.", False, True, "Chế độ ăn", "Dùng thuốc"),
        ("Vận động", True, False, "Vận động", ""),
        ("Lưu ý", True, False, "Vận động", "Lưu ý"),
        ("Đi bộ 30 phút mỗi ngày.", False, False, "Vận động", "Lưu ý"),
    ]
    bullet = article.items[4]
    assert bullet.lead == "Các thực phẩm nên tránh gồm:"
    assert bullet.paragraph == 3 and article.items[2].paragraph == 1 and article.items[2].sentence == 2
    assert article.claims[0].text == "Người bệnh nên ăn nhiều rau xanh."
    assert all(not c.is_heading for c in article.claims)
    assert article.items[2].location == "Chế độ ăn"
    assert article.items[8].location == "Chế độ ăn › Dùng thuốc"


def test_plain_text_article_headings_by_layout() -> None:
    text = (
        "TĂNG HUYẾT ÁP LÀ GÌ\n\nTăng huyết áp là khi huyết áp từ 140/90 mmHg trở lên. Bệnh thường không có "
        "triệu chứng.\n\n1.1 Điều trị\n\nGiảm muối dưới 5 g mỗi ngày.\n- uống thuốc đều đặn\n- tái khám "
        "định kỳ\n"
    )
    article = parse_article(text, "tha.txt")
    rows = [(i.text, i.is_heading, i.is_bullet, i.heading_level) for i in article.items]
    assert article.title == "TĂNG HUYẾT ÁP LÀ GÌ"  # a lone top heading opening the text is the title
    assert rows == [
        ("Tăng huyết áp là khi huyết áp từ 140/90 mmHg trở lên.", False, False, 0),
        ("Bệnh thường không có triệu chứng.", False, False, 0),
        ("Điều trị", True, False, 3),
        ("Giảm muối dưới 5 g mỗi ngày.", False, False, 0),
        ("uống thuốc đều đặn", False, True, 0),
        ("tái khám định kỳ", False, True, 0),
    ]
    assert article.items[3].section == "Điều trị" and article.items[0].section == ""
    untitled = parse_article("Uống đủ nước. Ngủ đủ giấc.", "ghi-chu.txt")
    assert untitled.title == "ghi-chu" and [i.text for i in untitled.items] == [
        "Uống đủ nước.",
        "Ngủ đủ giấc.",
    ]


def test_docx_article_styles() -> None:
    document = docx.Document()
    document.add_heading("Chăm sóc răng miệng", level=1)
    document.add_heading("Đánh răng", level=2)
    document.add_paragraph("Chải răng 2 lần mỗi ngày. Dùng kem có fluor.")
    document.add_paragraph("Thay bàn chải sau 3 tháng.", style="List Bullet")
    buffer = io.BytesIO()
    document.save(buffer)
    article = parse_article(buffer.getvalue(), "rang.docx")
    assert article.title == "Chăm sóc răng miệng"
    assert [(i.text, i.is_heading, i.is_bullet) for i in article.items] == [
        ("Đánh răng", True, False),
        ("Chải răng 2 lần mỗi ngày.", False, False),
        ("Dùng kem có fluor.", False, False),
        ("Thay bàn chải sau 3 tháng.", False, True),
    ]


def test_text_helpers() -> None:
    assert fold("Răng bị ê buốt, Đau") == "rang bi e buot, dau"
    assert quantities("Liều 7,5 mg, 2.5 ml, 1.000 mg và 30 ml/phút; HbA1c 6,5%") == [
        (7.5, "mg"),
        (2.5, "ml"),
        (1000.0, "mg"),
        (30.0, "ml"),
        (6.5, "%"),
    ]
    assert negated("Chống chỉ định dùng metformin") and negated("Không nên ăn mặn")
    assert not negated("Cảm cúm nên nghỉ ngơi") and not negated("Hít thở không khí trong lành")
