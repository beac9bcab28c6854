"""Guideline import, for ``medbot guidelines import FILE...`` (``bot.verify_console``) and the staff's
``/guideline`` upload (``bot.telegram.routers.verify``).

A document (.md, .txt, .docx, .pdf) is read into blocks (``engine.verify.documents``), chunked along its
headings and paragraphs, embedded, and stored in ``guideline_chunks``:

* a chunk never crosses a heading; it keeps the full heading path ("Điều trị › Thuốc uống");
* paragraphs under one heading are packed greedily up to ``MAX_CHARS`` (1200) characters; a paragraph longer
  than that is cut between sentences; so chunks run ~500–1200 characters unless the section itself is shorter;
* the embedded text and the folded search text are "heading path: passage", so a passage is found by the
  words of its headings too;
* embeddings go through ``CachedEmbedder`` + the PostgreSQL embedding cache: re-importing an unchanged
  document embeds nothing;
* the document is identified by its file name: a re-import replaces all its chunks in one transaction.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from db import guidelines as repo
from db.guidelines import ChunkRow
from db.stores import PgEmbeddingCache, PgModelRegistry
from engine.embedding import CachedEmbedder, text_hash
from engine.text import fold_spaced
from engine.types import Embedder
from engine.untrusted import UnsafeFile, check_size
from engine.verify.article import split_sentences
from engine.verify.documents import (
    MAX_DOCUMENT_BYTES,
    SUPPORTED_GUIDELINE,
    Block,
    DocumentError,
    limit_error,
    read_blocks,
    unsupported,
)

log = logging.getLogger("medbot.guidelines")

MAX_CHARS = 1200


@dataclass(slots=True)
class Chunk:
    heading_path: list[str]
    text: str

    def embed_text(self) -> str:
        head = " › ".join(self.heading_path)
        return f"{head}: {self.text}" if head else self.text


@dataclass(slots=True)
class ImportResult:
    filename: str
    title: str
    chunks: int
    replaced: int  # chunks of the previous version removed (0 for a new document)
    embedded: int  # passages actually embedded (the rest came from the cache)
    document_id: int


def _units(block: Block) -> list[str]:
    text = ("• " + block.text) if block.kind == "bullet" else block.text
    if len(text) <= MAX_CHARS:
        return [text]
    units: list[str] = []
    current = ""
    for sentence in split_sentences(text):
        start = 0
        while len(sentence) - start > MAX_CHARS:  # one enormous "sentence": cut on a space (linear time)
            cut = sentence.rfind(" ", start, start + MAX_CHARS)
            cut = cut if cut > start else start + MAX_CHARS
            if current:
                units.append(current)
                current = ""
            units.append(sentence[start:cut].strip())
            start = cut
            while start < len(sentence) and sentence[start].isspace():
                start += 1
        sentence = sentence[start:]
        if current and len(current) + 1 + len(sentence) > MAX_CHARS:
            units.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        units.append(current)
    return units


def chunk_blocks(blocks: list[Block]) -> list[Chunk]:
    """Chunks along headings and paragraphs, each with its heading path."""
    chunks: list[Chunk] = []
    path: list[tuple[int, str]] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            chunks.append(Chunk([p[1] for p in path], "\n".join(current)))
            current.clear()

    for block in blocks:
        if block.kind == "heading":
            flush()
            path = [p for p in path if p[0] < block.level] + [(block.level, block.text)]
            continue
        for unit in _units(block):
            size = sum(len(p) + 1 for p in current)
            if current and size + len(unit) > MAX_CHARS:
                flush()
            current.append(unit)
    flush()
    return chunks


def document_title(blocks: list[Block], filename: str) -> str:
    first = next((b for b in blocks if b.kind == "heading"), None)
    if first is not None and first.level == min(b.level for b in blocks if b.kind == "heading"):
        return first.text
    return Path(filename).stem


def _read_and_chunk(data: bytes, name: str) -> tuple[list[Block], list[Chunk]]:
    blocks = read_blocks(data, name)
    return blocks, chunk_blocks(blocks)


async def import_document(
    pool: asyncpg.Pool,
    embedder: Embedder,
    data: bytes,
    filename: str,
    *,
    imported_by: str | None = None,
) -> ImportResult:
    """Read, chunk, embed and store one guideline document (replacing an earlier version of the same name)."""
    name = Path(filename).name
    if Path(name).suffix.lower() not in SUPPORTED_GUIDELINE:
        raise unsupported(Path(name).suffix.lower(), ".md, .txt, .docx hoặc .pdf")
    # Reading (.docx/.pdf unzipping and parsing) and chunking are CPU work: off the event loop.
    blocks, chunks = await asyncio.to_thread(_read_and_chunk, data, name)
    if not chunks:
        raise DocumentError("không tìm thấy chữ nào trong tài liệu (tệp trống, hoặc chỉ có hình ảnh)")
    title = document_title(blocks, name)
    cached = CachedEmbedder(embedder, PgEmbeddingCache(pool), registry=PgModelRegistry(pool))
    texts = [c.embed_text() for c in chunks]
    vectors = await cached.embed_passages(texts)
    rows = [
        ChunkRow(
            ord=i,
            heading_path=c.heading_path,
            text=c.text,
            search_text=fold_spaced(text),
            content_hash=text_hash(text),
            embedding=vectors[i],
            embedding_model=cached.name,
        )
        for i, (c, text) in enumerate(zip(chunks, texts, strict=True))
    ]
    async with pool.acquire() as conn:
        doc_id, old = await repo.replace_document(
            conn,
            title=title,
            filename=name,
            sha256=hashlib.sha256(data).hexdigest(),
            imported_by=imported_by,
            chunks=rows,
        )
    log.info(
        "guideline.imported file=%s chunks=%d replaced=%d embedded=%d",
        name,
        len(rows),
        old,
        cached.embedded_count,
    )
    return ImportResult(name, title, len(rows), old, cached.embedded_count, doc_id)


async def import_files(
    pool: asyncpg.Pool, embedder: Embedder, paths: list[Path], *, imported_by: str | None = None
) -> tuple[list[ImportResult], list[tuple[str, str]]]:
    """Import each file; returns the results and the (file, error) pairs of files that were rejected."""
    results: list[ImportResult] = []
    errors: list[tuple[str, str]] = []
    for path in paths:
        try:
            try:
                check_size(path.stat().st_size, MAX_DOCUMENT_BYTES)  # before it is read into memory
            except UnsafeFile as exc:
                raise limit_error(exc) from None
            data = await asyncio.to_thread(path.read_bytes)
            results.append(await import_document(pool, embedder, data, path.name, imported_by=imported_by))
        except (OSError, DocumentError) as exc:
            errors.append((str(path), str(exc)))
    return results, errors


def summary_vi(results: list[ImportResult], errors: list[tuple[str, str]]) -> str:
    """A Vietnamese summary for the CLI and the bot."""
    lines = []
    for r in results:
        again = f", thay {r.replaced} đoạn cũ" if r.replaced else ""
        lines.append(f"✅ {r.filename} — “{r.title}”: {r.chunks} đoạn{again}.")
    for name, err in errors:
        lines.append(f"❌ {name}: không nhập được ({err}).")
    return "\n".join(lines) or "Không có tệp nào."
