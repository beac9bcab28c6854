"""Guideline import of every format into guideline_chunks, chunking, and atomic replace on re-import."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import asyncpg
import pytest

from db import guidelines
from engine.verify.documents import DocumentError, blocks_from_text
from kb_import.guidelines import MAX_CHARS, chunk_blocks, import_document
from tests.conftest import ROOT
from tests.verify_support import DATA, docx_bytes, embedder, pdf_bytes


async def _chunks(pool: asyncpg.Pool, filename: str) -> list[asyncpg.Record]:
    return await pool.fetch(
        """
        SELECT c.ord, c.heading_path, c.text, c.search_text, c.embedding IS NOT NULL AS embedded, c.embedding_model
        FROM guideline_chunks c JOIN guideline_documents d ON d.id = c.document_id
        WHERE d.filename = $1 ORDER BY c.ord
        """,
        filename,
    )


async def test_import_markdown_with_heading_paths(db: asyncpg.Pool) -> None:
    data = (DATA / "guideline_dtd.md").read_bytes()
    result = await import_document(db, embedder(), data, "guideline_dtd.md", imported_by="test")
    assert result.title == "Hướng dẫn điều trị đái tháo đường típ 2 (tóm tắt)"
    rows = await _chunks(db, "guideline_dtd.md")
    assert result.chunks == len(rows) == 3
    assert rows[1]["heading_path"] == [result.title, "2. Điều trị bằng thuốc", "Metformin"]
    assert "Chống chỉ định metformin" in rows[1]["text"]
    assert "metformin" in rows[1]["search_text"] and "chong chi dinh" in rows[1]["search_text"]
    assert all(r["embedded"] and r["embedding_model"] == embedder().name for r in rows)


async def test_import_txt_docx_pdf(db: asyncpg.Pool) -> None:
    txt = (
        "HƯỚNG DẪN CHĂM SÓC RĂNG\n\n1. Vệ sinh răng miệng\n\nChải răng hai lần mỗi ngày bằng kem có fluor.\n"
    )
    docx = docx_bytes(
        [
            ("h1", "Phác đồ tăng huyết áp"),
            ("h2", "Thay đổi lối sống"),
            ("p", "Giảm muối dưới 5 g mỗi ngày."),
            ("bullet", "Hạn chế rượu bia."),
        ]
    )
    pdf = pdf_bytes(
        [
            "1. Điều trị sốt xuất huyết",
            "Dùng paracetamol để hạ sốt, liều 10 mg/kg mỗi 6 giờ.",
            "Không dùng aspirin hoặc ibuprofen.",
        ]
    )
    for name, data in (("rang.txt", txt.encode()), ("tha.docx", docx), ("sxh.pdf", pdf)):
        await import_document(db, embedder(), data, name)
    txt_rows = await _chunks(db, "rang.txt")
    assert [(r["heading_path"], r["text"]) for r in txt_rows] == [
        (["HƯỚNG DẪN CHĂM SÓC RĂNG", "Vệ sinh răng miệng"], "Chải răng hai lần mỗi ngày bằng kem có fluor.")
    ]
    docx_rows = await _chunks(db, "tha.docx")
    assert [(r["heading_path"], r["text"]) for r in docx_rows] == [
        (["Phác đồ tăng huyết áp", "Thay đổi lối sống"], "Giảm muối dưới 5 g mỗi ngày.\n• Hạn chế rượu bia.")
    ]
    pdf_rows = await _chunks(db, "sxh.pdf")
    assert len(pdf_rows) == 1
    assert pdf_rows[0]["heading_path"] == ["Điều trị sốt xuất huyết"]
    assert "paracetamol" in pdf_rows[0]["text"] and "Không dùng aspirin" in pdf_rows[0]["text"]
    docs = await guidelines.list_documents(db)
    assert sorted(d["filename"] for d in docs) == ["rang.txt", "sxh.pdf", "tha.docx"]


async def test_reimport_replaces_chunks_atomically(db: asyncpg.Pool) -> None:
    first = "# Phác đồ\n\n## A\n\nĐoạn một về huyết áp.\n\n## B\n\nĐoạn hai về tiểu đường.\n"
    await import_document(db, embedder(), first.encode(), "phac-do.md")
    before = await db.fetchval("SELECT max(id) FROM guideline_chunks")
    second = "# Phác đồ\n\n## A\n\nĐoạn một về huyết áp.\n"
    result = await import_document(db, embedder(), second.encode(), "phac-do.md")
    assert (result.chunks, result.replaced) == (1, 2)
    assert result.embedded == 0  # unchanged passage: from the embedding cache
    rows = await _chunks(db, "phac-do.md")
    assert [r["text"] for r in rows] == ["Đoạn một về huyết áp."]
    assert await db.fetchval("SELECT count(*) FROM guideline_documents") == 1
    assert await db.fetchval("SELECT min(id) FROM guideline_chunks") > before  # all rows are new


async def test_rejected_files_change_nothing(db: asyncpg.Pool) -> None:
    await import_document(db, embedder(), b"# T\n\nMot doan.\n", "a.md")
    with pytest.raises(DocumentError):
        await import_document(db, embedder(), b"not a real docx", "a.docx")
    with pytest.raises(DocumentError):
        await import_document(db, embedder(), b"x", "bang.xlsx")
    with pytest.raises(DocumentError):
        await import_document(db, embedder(), b"\n\n", "a.md")  # empty: the old chunks stay
    assert [r["text"] for r in await _chunks(db, "a.md")] == ["Mot doan."]


def test_chunking_packs_paragraphs_and_splits_long_ones() -> None:
    sentence = "Người bệnh tăng huyết áp cần đo huyết áp tại nhà mỗi ngày và ghi lại kết quả. "
    long_paragraph = sentence * 40  # ~3200 characters
    text = "# Hướng dẫn\n\n## Theo dõi\n\n" + "\n\n".join(["Đoạn ngắn số một.", long_paragraph, "Đoạn cuối."])
    chunks = chunk_blocks(blocks_from_text(text, markdown=True))
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert all(c.heading_path == ["Hướng dẫn", "Theo dõi"] for c in chunks)
    assert sum(len(c.text) for c in chunks) >= len(long_paragraph)
    assert len(chunks) == 3 or len(chunks) == 4
    assert all(len(c.text) >= 500 for c in chunks[:-1])


async def test_cli_imports_a_guideline_file(db: asyncpg.Pool, db_url: str) -> None:
    """``medbot guidelines import FILE``: the corpus a clinician's article is checked against."""
    proc = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-m",
            "bot.cli",
            "guidelines",
            "import",
            str(DATA / "guideline_dtd.md"),
            "missing.md",
        ],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": db_url},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr  # one of the two files was rejected
    assert "✅ guideline_dtd.md" in proc.stdout and "❌ missing.md: không nhập được" in proc.stdout
    assert await db.fetchval("SELECT count(*) FROM guideline_chunks") > 0
