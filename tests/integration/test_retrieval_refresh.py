"""A running process's search index picks up an import made by another process (through the KB version)."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from db.stores import PgEmbeddingCache, PgKBStore
from engine.embedding import CachedEmbedder, E5Embedder
from engine.retrieval.search import KBSearch
from tests.medbot_cli import run_medbot

HEADER = "MÃ SỐ,ĐỀ MỤC,CÂU HỎI,CÂU TRẢ LỜI,keywords\n"


def _import(db_url: str, path: Path) -> None:
    proc = run_medbot(db_url, "import", str(path), "--role", "patient_dental")
    assert proc.returncode == 0, proc.stdout + proc.stderr


async def test_index_refreshes_after_import_in_another_process(
    db: asyncpg.Pool, db_url: str, tmp_path: Path
) -> None:
    first = tmp_path / "v1.csv"
    first.write_text(
        HEADER
        + "NK-1,Răng nhạy cảm,Răng bị ê buốt khi uống nước lạnh?,Dùng kem đánh răng cho răng nhạy cảm.,ê buốt\n",
        encoding="utf-8",
    )
    _import(db_url, first)
    search = KBSearch(
        PgKBStore(db), CachedEmbedder(E5Embedder(), PgEmbeddingCache(db)), version_check_seconds=0
    )
    before = await search.search("patient_dental", "niềng răng mất bao lâu")
    assert all(h.entry.code != "NK-2" for h in before.hits)

    second = tmp_path / "v2.csv"
    second.write_text(
        first.read_text(encoding="utf-8")
        + "NK-2,Niềng răng,Niềng răng mất bao lâu thì xong?,Thường từ 18 đến 24 tháng.,chỉnh nha\n",
        encoding="utf-8",
    )
    _import(db_url, second)  # another process: this one only sees the version move in the database
    after = await search.search("patient_dental", "niềng răng mất bao lâu")
    assert after.hits[0].entry.code == "NK-2"
