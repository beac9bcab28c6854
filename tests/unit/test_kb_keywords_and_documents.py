"""Keyword cells and unreadable documents, as a clinic sees them.

* A keywords cell is split on ``;`` (or new lines; ``,`` when there is no ``;``), trimmed, with duplicates
  dropped whatever their case (the first spelling is kept; a form without diacritics is a keyword of its
  own), in order — for a cell of thousands of keywords
  too (the check is a set lookup, not a scan of the keywords kept so far).
* Every ``DocumentError`` a clinician can meet (a damaged .docx or .pdf, a text file in another encoding, a
  format we do not read, a document without text) reads in Vietnamese, with no English inside.
"""

from __future__ import annotations

import re

import pytest

from engine.verify.article import parse_article
from engine.verify.documents import DocumentError, read_blocks
from kb_import.validate import split_keywords

ENGLISH = re.compile(
    r"\b(not|readable|file|unsupported|type|must|bytes|found|document|error)\b", re.IGNORECASE
)


def test_keywords_split_trimmed_and_deduplicated_ignoring_case() -> None:
    cell = "Ê buốt;  ê buốt ; Ê BUỐT\nrăng ê; e buot;;Răng Ê; E Buot "
    assert split_keywords(cell) == ["Ê buốt", "răng ê", "e buot"]  # no-diacritic forms are kept: "e buot"
    assert split_keywords("niềng răng, Niềng Răng, mắc cài") == ["niềng răng", "mắc cài"]
    assert split_keywords("") == [] and split_keywords(" ; ;\n") == []


def test_a_cell_of_thousands_of_keywords_keeps_each_once_in_order() -> None:
    words = [f"từ {i}" for i in range(3000)]
    cell = ";".join(words + [w.upper() for w in words[::2]] + words[::3])
    assert split_keywords(cell) == words


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (
            b"PK\x03\x04 this is not a real docx",
            "bai.docx",
            "tệp .docx bị hỏng hoặc không phải tệp Word thật",
        ),
        (
            b"%PDF-1.4 garbage without any object",
            "huong_dan.pdf",
            "tệp .pdf bị hỏng hoặc không phải tệp PDF thật",
        ),
        ("Huyết áp".encode("utf-16-le"), "bai.txt", "tệp văn bản không dùng bảng mã UTF-8"),
        (b"a,b\n1,2\n", "bang.xlsx", "định dạng “.xlsx” chưa được hỗ trợ"),
    ],
)
def test_unreadable_documents_are_explained_in_vietnamese(data: bytes, name: str, expected: str) -> None:
    with pytest.raises(DocumentError) as caught:
        read_blocks(data, name)
    message = str(caught.value)
    assert message.startswith(expected), message
    assert not ENGLISH.search(message), message


def test_a_damaged_article_reads_in_vietnamese_in_the_verify_message() -> None:
    with pytest.raises(DocumentError) as caught:
        parse_article(b"not a zip at all", "bai-viet.docx")
    # as bot/telegram/routers/verify.py shows it
    shown = f"Không đọc được bài viết: {caught.value}. Hãy gửi lại."
    assert shown == (
        "Không đọc được bài viết: tệp .docx bị hỏng hoặc không phải tệp Word thật — thử mở tệp rồi lưu lại. "
        "Hãy gửi lại."
    )
