"""Hostile uploads: peak memory and time of importing the worst files, next to a normal large sheet.

``python -m bench upload_safety`` (part of ``make bench``) or ``python -m bench.bench_upload_safety``.

Every case runs in a fresh Python process (``--case``), so each peak is its own: "parent" is the peak RSS of
the process that imports (the role of the bot, web or worker process; ``RUSAGE_SELF``), "child" the peak of
the memory-capped process that read and validated the file (``engine.sandbox``; ``RUSAGE_CHILDREN``, an upper
bound as a child's figure starts from the importing process's size when it was forked; 0 when the file was
refused before any child started).
Spreadsheets go through ``kb_import.job.run_import`` (strict, no embeddings) into a scratch database
``medbot_bench_safety`` on the configured server, emptied before each case and dropped at the end; articles
and guideline documents through ``engine.verify.article.parse_article`` / ``engine.verify.documents``.

Cases (all files generated here; generation is not measured):

* normal large sheet: the 100,000-row workbook of ``bench_import`` (19 MB) — imported;
* at the limits: ``MAX_ROWS`` rows carrying ``MAX_TEXT_CHARS`` of Vietnamese-like text — imported;
* keyword flood: 4,000-character keyword cells of 1,000 distinct short keywords each, up to the text limit
  (the most Python objects per character a valid file can make): the reading child hits its memory or its
  time cap (which comes first depends on the machine's load) and the file is refused as unsafe;
* ZZZZZ1: a 1.5 KB workbook with a value in column ZZZZZ (12 million columns to the old reader);
* zip bomb .xlsx: a sheet of 1 GB of spaces packed into 1 MB;
* shared strings: 1,000,001 entries; shared-string references adding up to 60 million characters;
* too many rows: ``MAX_ROWS`` + 1 rows (CSV); one 5 MB cell; a 21 MB file (over the size cap);
* zip bomb .docx (1 GB of spaces); a 5 MB article in one paragraph (111,000 sentences); an article of one
  4.9 MB sentence; a 2,000-paragraph .docx article — the last two accepted.

Target: peak RSS under 1 GB in both processes for every case. Writes bench/results/upload_safety.json.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import multiprocessing
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from xml.sax.saxutils import escape

from bench.bench_import import WORDS, _run_child
from engine.verify.article import MAX_ARTICLE_SENTENCES
from kb_import.limits import MAX_ROWS, MAX_TEXT_CHARS

RESULTS = Path(__file__).resolve().parent / "results" / "upload_safety.json"
DATABASE = "medbot_bench_safety"
TARGET_MB = 1024
MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
GB = 1 << 30


# --- hostile files ------------------------------------------------------------------------------------------


def _cell(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{escape(text)}</t></is></c>'


def _xlsx(path: Path, sheet_data: Iterable[str], shared: Iterable[str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/></Types>',
        )
        zf.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{PKG}"><Relationship Id="r1" Type="{REL}/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>',
        )
        zf.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{MAIN_NS}" xmlns:r="{REL}"><sheets><sheet name="patient_dental" sheetId="1" '
            'r:id="rId1"/></sheets></workbook>',
        )
        zf.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{REL}/worksheet" '
            'Target="worksheets/sheet1.xml"/></Relationships>',
        )
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            fh.write(f'<worksheet xmlns="{MAIN_NS}"><sheetData>'.encode())
            batch: list[str] = []
            size = 0
            for piece in sheet_data:
                batch.append(piece)
                size += len(piece)
                if size >= 1 << 20:
                    fh.write("".join(batch).encode())
                    batch, size = [], 0
            fh.write("".join(batch).encode() + b"</sheetData></worksheet>")
        if shared is not None:
            with zf.open("xl/sharedStrings.xml", "w", force_zip64=True) as fh:
                fh.write(f'<sst xmlns="{MAIN_NS}">'.encode())
                batch = []
                for text in shared:
                    batch.append(f"<si><t>{escape(text)}</t></si>")
                    if len(batch) >= 10_000:
                        fh.write("".join(batch).encode())
                        batch = []
                fh.write("".join(batch).encode() + b"</sst>")
    return path


def _header() -> str:
    return (
        '<row r="1">'
        + "".join(_cell(f"{c}1", t) for c, t in zip("ABC", ("MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI"), strict=True))
        + "</row>"
    )


def _spaces(total: int) -> Iterable[str]:
    chunk = " " * (1 << 20)
    for _ in range(total >> 20):
        yield chunk


def _words(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    n = 0
    while n < chars:
        word = rng.choice(WORDS)
        out.append(word)
        n += len(word) + 1
    return " ".join(out)[:chars]


def build(kind: str, workdir: Path) -> Path:
    rng = random.Random(5)
    if kind == "normal_100k":
        path = workdir / "kb_100k.xlsx"
        _run_child(str(path), 100_000)
        return path
    if kind == "at_limits":
        rows = MAX_ROWS - 1
        per_row = MAX_TEXT_CHARS * 98 // 100 // rows - 12

        def sheet() -> Iterable[str]:
            yield _header()
            for i in range(2, rows + 2):
                q, a = _words(rng, 80), _words(rng, per_row - 80)
                yield f'<row r="{i}">{_cell(f"A{i}", f"L-{i:06d}")}{_cell(f"B{i}", q)}{_cell(f"C{i}", a)}</row>'

        return _xlsx(workdir / "at_limits.xlsx", sheet())
    if kind == "keyword_flood":
        # text made of thousands of short distinct keywords per row: the most objects per character
        rows = MAX_TEXT_CHARS * 95 // 100 // 4020
        words = [a + b + c for a in "abcdefghij" for b in "klmnopqrst" for c in "uvwxyz"]

        def sheet() -> Iterable[str]:
            yield (
                '<row r="1">'
                + "".join(
                    _cell(f"{c}1", t)
                    for c, t in zip("ABCD", ("MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI", "keywords"), strict=True)
                )
                + "</row>"
            )
            for i in range(2, rows + 2):
                rng.shuffle(words)
                keywords = ";".join(words[:1000])[:4000]
                cells = _cell(f"A{i}", f"K-{i:06d}") + _cell(f"B{i}", "Hỏi?") + _cell(f"C{i}", "Đáp.")
                yield f'<row r="{i}">{cells}{_cell(f"D{i}", keywords)}</row>'

        return _xlsx(workdir / "keywords.xlsx", sheet())
    if kind == "zzzzz1":
        return _xlsx(
            workdir / "zzzzz1.xlsx",
            [_header(), f'<row r="2">{_cell("A2", "Q1")}{_cell("ZZZZZ2", "x")}</row>'],
        )
    if kind == "zip_bomb_xlsx":
        return _xlsx(workdir / "bomb.xlsx", [_header(), *_spaces(GB)])
    if kind == "shared_strings_count":
        return _xlsx(workdir / "strings.xlsx", [_header()], (f"c{i}" for i in range(1_000_001)))
    if kind == "shared_string_references":
        long_text = _words(rng, 30_000)
        rows = (
            f'<row r="{i}"><c r="A{i}" t="s"><v>0</v></c><c r="C{i}" t="s"><v>1</v></c></row>'
            for i in range(2, 2002)
        )
        return _xlsx(workdir / "refs.xlsx", [_header(), *rows], ["Q", long_text])
    if kind == "too_many_rows":
        path = workdir / "rows.csv"
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["ĐỀ MỤC", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI"])
            writer.writerows([f"Chủ đề {i}", "", "", ""] for i in range(MAX_ROWS + 1))
        return path
    if kind == "huge_cell":
        text = os.urandom(2_500_000).hex()
        return _xlsx(
            workdir / "cell.xlsx", [_header(), f'<row r="2">{_cell("A2", "Q1")}{_cell("C2", text)}</row>']
        )
    if kind == "over_size_cap":
        path = workdir / "big.csv"
        with path.open("wb") as fh:
            fh.write("MÃ SỐ,CÂU HỎI,CÂU TRẢ LỜI\n".encode())
            fh.truncate(21 * (1 << 20))
        return path
    if kind == "zip_bomb_docx":
        path = workdir / "bomb.docx"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("[Content_Types].xml", "<Types/>")
            with zf.open("word/document.xml", "w", force_zip64=True) as fh:
                for chunk in _spaces(GB):
                    fh.write(chunk.encode())
        return path
    if kind == "article_5mb_paragraph":
        path = workdir / "article.txt"
        text = ("Bệnh nhân nên uống thuốc đúng giờ. " * 200_000).encode()[: 5 * (1 << 20) - 16]
        path.write_bytes(text.decode("utf-8", "ignore").encode())
        return path
    if kind == "article_one_long_sentence":
        path = workdir / "sentence.txt"
        path.write_text(_words(rng, 3_800_000) + ".", encoding="utf-8")  # 4.9 MB in UTF-8
        return path
    if kind == "article_docx_2000":
        import docx

        path = workdir / "article.docx"
        document = docx.Document()
        for i in range(MAX_ARTICLE_SENTENCES):
            document.add_paragraph(f"Câu số {i}: " + _words(rng, 120) + ".")
        document.save(str(path))
        return path
    raise ValueError(kind)


SPREADSHEETS = (
    "normal_100k",
    "at_limits",
    "keyword_flood",
    "zzzzz1",
    "zip_bomb_xlsx",
    "shared_strings_count",
    "shared_string_references",
    "too_many_rows",
    "huge_cell",
    "over_size_cap",
)
DOCUMENTS = ("zip_bomb_docx", "article_5mb_paragraph", "article_one_long_sentence", "article_docx_2000")


# --- one case, in its own process ---------------------------------------------------------------------------


async def _import(path: Path, url: str) -> dict[str, Any]:
    from db.pool import create_pool
    from kb_import.job import ImportOptions, run_import

    pool = await create_pool(url, max_size=2)
    try:
        report = await run_import(pool, [path], ImportOptions(embed=False, role="patient_dental"))
        entries = await pool.fetchval("SELECT count(*) FROM kb_entries")
    finally:
        await pool.close()
    first = report.errors[0] if report.errors else None
    return {
        "status": report.status,
        "rows_imported": entries,
        "code": first.code if first else None,
        "message_vi": first.message_vi if first else report.message_vi,
    }


def _document(path: Path) -> dict[str, Any]:
    from engine.verify.article import parse_article
    from engine.verify.documents import DocumentError

    try:
        article = parse_article(path.read_bytes(), path.name)
    except DocumentError as exc:
        return {"status": "rejected", "message_vi": str(exc)}
    return {"status": "accepted", "sentences": len(article.claims)}


def run_case(kind: str, path: Path, url: str) -> dict[str, Any]:
    started = time.perf_counter()
    out = asyncio.run(_import(path, url)) if kind in SPREADSHEETS else _document(path)
    out["wall_s"] = round(time.perf_counter() - started, 2)
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over execve, so this process would report its parent's.
    status = Path("/proc/self/status").read_text()
    out["parent_peak_mb"] = round(int(status.split("VmHWM:")[1].split()[0]) / 1024)
    # the largest child's peak (an upper bound: a child's figure starts from this process's size at fork)
    out["child_peak_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return out


# --- the driver ---------------------------------------------------------------------------------------------


async def _database(drop: bool = False) -> str:
    import asyncpg

    from db import migrate
    from db.pool import asyncpg_dsn, database_url
    from db.settings import load_settings

    server = urlsplit(asyncpg_dsn(await database_url(load_settings())))
    admin = await asyncpg.connect(urlunsplit(server._replace(path="/postgres")))
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        if not drop:
            await admin.execute(f"CREATE DATABASE {DATABASE}")
    finally:
        await admin.close()
    url = urlunsplit(server._replace(path="/" + DATABASE))
    if not drop:
        await migrate.upgrade(url)
    return url


async def _empty(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute("TRUNCATE kb_entries, kb_versions, kb_imports CASCADE")
    finally:
        await conn.close()


def _size(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MB" if n >= 1 << 20 else f"{n / 1024:,.1f} KB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.bench_upload_safety", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case names (default: all; results are then not written)")
    parser.add_argument("--case", nargs=3, metavar=("KIND", "PATH", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        kind, path, url = args.case
        print(json.dumps(run_case(kind, Path(path), url), ensure_ascii=False))
        return 0

    from rich.console import Console
    from rich.table import Table

    cases = [c for c in (*SPREADSHEETS, *DOCUMENTS) if not args.only or c in args.only]
    url = asyncio.run(_database())
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="medbot-bench-safety-") as tmp:
            for kind in cases:
                path = build(kind, Path(tmp))
                asyncio.run(_empty(url))
                proc = subprocess.run(
                    [sys.executable, "-m", "bench.bench_upload_safety", "--case", kind, str(path), url],
                    capture_output=True,
                    text=True,
                    cwd=Path(__file__).resolve().parent.parent,
                )
                if proc.returncode:
                    results[kind] = {"status": "bench error", "stderr": proc.stderr[-2000:]}
                else:
                    results[kind] = json.loads(proc.stdout.strip().splitlines()[-1])
                results[kind]["file_bytes"] = path.stat().st_size
                if path.suffix in (".xlsx", ".docx"):
                    with zipfile.ZipFile(path) as zf:
                        results[kind]["unpacked_bytes"] = sum(i.file_size for i in zf.infolist())
                path.unlink()
                print(f"{kind}: {results[kind]}", flush=True)
    finally:
        asyncio.run(_database(drop=True))

    table = Table(title="Hostile uploads: peak RSS per case", title_justify="left")
    for col in ("case", "file", "result", "time (s)", "parent MB", "child MB"):
        table.add_column(col, justify="left" if col in ("case", "result") else "right")
    for kind, r in results.items():
        size = r["file_bytes"]
        shown = _size(size)
        if "unpacked_bytes" in r and r["unpacked_bytes"] > 4 * size:
            shown += f" ({_size(r['unpacked_bytes'])} unpacked)"
        result = r.get("code") or r["status"]
        if r.get("rows_imported"):
            result += f" ({r['rows_imported']:,} rows)"
        elif r.get("sentences"):
            result += f" ({r['sentences']:,} sentences)"
        table.add_row(kind, shown, result, str(r.get("wall_s", "")), str(r.get("parent_peak_mb", "")),
                      str(r.get("child_peak_mb", "")))  # fmt: skip
    Console(width=130).print(table)
    worst = max(max(r.get("parent_peak_mb", 0), r.get("child_peak_mb", 0)) for r in results.values())
    out = {
        "cases": results,
        "worst_peak_mb": worst,
        "target_peak_mb": TARGET_MB,
        "met": worst < TARGET_MB and all(r["status"] != "bench error" for r in results.values()),
        "machine": {"cpus": multiprocessing.cpu_count(), "python": platform.python_version()},
    }
    print(f"worst peak RSS {worst} MB (target < {TARGET_MB} MB): {'met' if out['met'] else 'NOT met'}")
    if args.only:
        print(f"--only: {RESULTS} left as it was (it holds full runs)")
        return 0 if out["met"] else 1
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results written to {RESULTS}")
    return 0 if out["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
