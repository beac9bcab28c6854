"""KB import benchmark: a generated 100,000-row workbook through read, validate, write; embedding speed.

``python -m bench.bench_import [--rows N] [--embed-sample N] [--vector-rows N]``

* The workbook (4 role sheets, Vietnamese-like text of realistic lengths) is generated in a child process
  first; generation time and memory are not counted.
* read: the xlsx reader alone; validate: validation on top of reading (validate_files minus read);
  write: the job's write phase (diff, COPY into staging, upsert, version bump, commit) on an empty KB,
  without embeddings (they are timed separately); total: the whole ``run_import`` wall time.
* re-import: the same workbook again (identical → no-op) and with 1% of the rows changed.
* write with vectors: ``--vector-rows`` rows imported with precomputed random unit vectors, to show the
  cost of maintaining the HNSW index (the real model would be the bottleneck long before).
* embedding: ``--embed-sample`` texts through the real embedder with a cold cache, then again warm; the
  100,000-row embedding time is extrapolated from the cold rate.
* peak RSS: ``resource.getrusage`` of this process (the generator ran in a child).

Runs in a scratch database ``medbot_bench`` on the configured server (dropped afterwards), never in the
application's KB. Targets: read + validate + write ≥ 5,000 rows/s, peak RSS < 1 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import platform
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "import.json"
ROLES = ("patient_dental", "patient_diabetes", "doctor_dental", "doctor_endocrine")
WORDS = (
    "răng nướu lợi sâu ê buốt đau nhức sưng viêm chảy máu khôn mọc lệch nhổ trám tủy niềng trẻ em bệnh nhân "
    "đường huyết insulin thuốc ăn uống vận động biến chứng thận mắt bàn chân hạ đường theo dõi khám định kỳ bác sĩ "
    "nên không có thể cần phải làm sao khi nào bao lâu thường xuyên nhẹ nhàng mỗi ngày hai lần kiểm tra"
).split()
TARGET_ROWS_PER_S = 5000


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize()


def generate(path: str, rows: int, seed: int = 7) -> None:
    """Write the benchmark workbook (write-only mode, streaming)."""
    from openpyxl import Workbook

    rng = random.Random(seed)
    wb = Workbook(write_only=True)
    per_role = rows // len(ROLES)
    for r, role in enumerate(ROLES):
        ws = wb.create_sheet(role)
        ws.append(["ĐỀ MỤC", "CHỦ ĐỀ CON", "MÃ SỐ", "CÂU HỎI", "CÂU TRẢ LỜI", "keywords", "GIẢI THÍCH"])
        count = per_role + (rows - per_role * len(ROLES) if r == len(ROLES) - 1 else 0)
        for i in range(1, count + 1):
            ws.append(
                [
                    f"Chủ đề {i % 40}",
                    "",
                    f"{role[:3].upper()}-{i:06d}",
                    _sentence(rng, 12) + "?",
                    ". ".join(_sentence(rng, 14) for _ in range(4)) + ".",
                    "; ".join(_sentence(rng, 2).lower() for _ in range(5)),
                    "" if i % 3 else _sentence(rng, 20) + ".",
                ]
            )
    wb.save(path)


def _modify(src: Path, dst: Path, every: int) -> None:
    """Copy the workbook with one answer in ``every`` rows changed."""
    from openpyxl import Workbook, load_workbook

    wb_in = load_workbook(src, read_only=True)
    wb_out = Workbook(write_only=True)
    for ws in wb_in.worksheets:
        out = wb_out.create_sheet(ws.title)
        for i, row in enumerate(ws.iter_rows(values_only=True)):
            row = list(row)
            if i and i % every == 0:
                row[4] = f"{row[4]} (sửa đổi)"
            out.append(row)
    wb_in.close()
    wb_out.save(dst)


class RandomVectors:
    """A stand-in embedder producing random unit vectors, to time the HNSW write path without the model."""

    name = "bench-random-384"
    dim = 384
    embedded_count = 0

    async def embed_passages(self, texts: list[str], progress: Any = None, batch: int = 256) -> np.ndarray:
        rng = np.random.default_rng(len(texts))
        v = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        self.embedded_count += len(texts)
        if progress:
            progress(len(texts))
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


async def _bench(args: argparse.Namespace, workbook: Path, modified: Path, workdir: Path) -> dict[str, Any]:
    import asyncpg

    from db import migrate
    from db.pool import asyncpg_dsn, create_pool, database_url
    from db.settings import load_settings
    from db.stores import PgEmbeddingCache
    from engine.embedding import CachedEmbedder, E5Embedder
    from kb_import.job import ImportOptions, run_import
    from kb_import.readers import open_file
    from kb_import.roles import known_roles
    from kb_import.validate import validate_files

    settings = load_settings()
    server = urlsplit(asyncpg_dsn(await database_url(settings)))

    def on(name: str) -> str:
        return urlunsplit(server._replace(path="/" + name))

    admin = await asyncpg.connect(on("postgres"))
    await admin.execute("DROP DATABASE IF EXISTS medbot_bench WITH (FORCE)")
    await admin.execute("CREATE DATABASE medbot_bench")
    url = on("medbot_bench")
    await migrate.upgrade(url)
    pool = await create_pool(url, max_size=4)
    res: dict[str, Any] = {"rows": args.rows}
    try:
        # read alone
        t = time.perf_counter()
        wb = open_file(workbook)
        n = sum(1 for sheet in wb.sheets for _ in sheet.rows)
        wb.close()
        read_s = time.perf_counter() - t
        # read + validate
        t = time.perf_counter()
        v = validate_files([(workbook, workbook.name, "")], known_roles=known_roles())
        validate_total_s = time.perf_counter() - t
        assert len(v.rows) == args.rows and not v.problems, (len(v.rows), v.problems[:3])
        del v
        # the import job, no embeddings
        t = time.perf_counter()
        report = await run_import(pool, [workbook], ImportOptions(embed=False))
        job_s = time.perf_counter() - t
        assert report.ok and report.totals.added == args.rows, report.message
        write_s = report.timings["write_s"]
        validate_s = max(validate_total_s - read_s, 1e-9)
        res.update(
            read_s=round(read_s, 2),
            validate_s=round(validate_s, 2),
            write_s=round(write_s, 2),
            job_total_s=round(job_s, 2),
            read_rows_per_s=round(n / read_s),
            validate_rows_per_s=round(args.rows / validate_s),
            write_rows_per_s=round(args.rows / write_s),
            read_validate_write_rows_per_s=round(args.rows / (read_s + validate_s + write_s)),
            job_rows_per_s=round(args.rows / job_s),
        )
        # identical re-import, then 1% changed
        t = time.perf_counter()
        again = await run_import(pool, [workbook], ImportOptions(embed=False))
        res["reimport_identical_s"] = round(time.perf_counter() - t, 2)
        assert again.status == "unchanged", again.message
        t = time.perf_counter()
        changed = await run_import(pool, [modified], ImportOptions(embed=False))
        res["reimport_1pct_changed_s"] = round(time.perf_counter() - t, 2)
        res["reimport_1pct_updated"] = changed.totals.updated

        # write with vectors (HNSW maintenance) on a smaller workbook
        if args.vector_rows:
            small = workdir / "vectors.xlsx"
            await asyncio.to_thread(_run_child, str(small), args.vector_rows, 11)
            await pool.execute("TRUNCATE kb_entries, kb_versions, kb_imports CASCADE")
            report = await run_import(pool, [small], ImportOptions(), embedder=RandomVectors())
            assert report.ok, report.message
            res["vector_rows"] = args.vector_rows
            res["write_with_vectors_rows_per_s"] = round(args.vector_rows / report.timings["write_s"])

        # embeddings: cold cache, then warm
        if args.embed_sample:
            texts = [f"{_sentence(random.Random(i), 12)}?" for i in range(args.embed_sample)]
            embedder = CachedEmbedder(E5Embedder(), PgEmbeddingCache(pool))
            await embedder.embed_passages(texts[:8])  # load the model outside the timing
            t = time.perf_counter()
            await embedder.embed_passages(texts)
            cold = time.perf_counter() - t
            t = time.perf_counter()
            await embedder.embed_passages(texts)
            warm = time.perf_counter() - t
            rate = (args.embed_sample - 8) / cold
            res.update(
                embed_sample=args.embed_sample,
                embed_model=embedder.name,
                embed_cold_s=round(cold, 2),
                embed_texts_per_s=round(rate, 1),
                embed_warm_s=round(warm, 3),
                embed_warm_texts_per_s=round(args.embed_sample / warm),
                embed_100k_estimated_min=round(100_000 / rate / 60, 1),
            )
    finally:
        await pool.close()
        if not args.keep:
            await admin.execute("DROP DATABASE IF EXISTS medbot_bench WITH (FORCE)")
        await admin.close()
    res["peak_rss_mb"] = round(_peak_rss_mb())
    return res


def _run_child(path: str, rows: int, seed: int = 7) -> None:
    proc = multiprocessing.get_context("spawn").Process(target=generate, args=(path, rows, seed))
    proc.start()
    proc.join()
    if proc.exitcode:
        raise RuntimeError(f"workbook generation failed ({proc.exitcode})")


def _modify_child(src: str, dst: str) -> None:
    proc = multiprocessing.get_context("spawn").Process(target=_modify, args=(Path(src), Path(dst), 100))
    proc.start()
    proc.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.bench_import", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--embed-sample", type=int, default=2000)
    parser.add_argument("--vector-rows", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true", help="keep the medbot_bench database")
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    with tempfile.TemporaryDirectory(prefix="medbot-bench-") as tmp:
        workdir = Path(tmp)
        workbook = workdir / "kb_100k.xlsx"
        modified = workdir / "kb_100k_changed.xlsx"
        t = time.perf_counter()
        _run_child(str(workbook), args.rows)
        _modify_child(str(workbook), str(modified))
        generation_s = time.perf_counter() - t
        file_mb = round(workbook.stat().st_size / 2**20, 1)
        res = asyncio.run(_bench(args, workbook, modified, workdir))
    res["file_mb"] = file_mb
    res["generation_s_not_counted"] = round(generation_s, 1)
    res["machine"] = {"cpus": multiprocessing.cpu_count(), "python": platform.python_version()}
    res["targets"] = {
        "read_validate_write_rows_per_s": TARGET_ROWS_PER_S,
        "peak_rss_mb": 1024,
        "met": res["read_validate_write_rows_per_s"] >= TARGET_ROWS_PER_S and res["peak_rss_mb"] < 1024,
    }

    table = Table(
        title=f"KB import benchmark ({args.rows:,} rows, {res['file_mb']} MB xlsx)", title_justify="left"
    )
    table.add_column("stage")
    table.add_column("time (s)", justify="right")
    table.add_column("rows/s", justify="right")
    table.add_row("read (xlsx)", str(res["read_s"]), f"{res['read_rows_per_s']:,}")
    table.add_row("validate", str(res["validate_s"]), f"{res['validate_rows_per_s']:,}")
    table.add_row("write (upsert, 1 transaction)", str(res["write_s"]), f"{res['write_rows_per_s']:,}")
    table.add_row(
        "read + validate + write",
        str(round(res["read_s"] + res["validate_s"] + res["write_s"], 2)),
        f"{res['read_validate_write_rows_per_s']:,}",
    )
    table.add_row("import job total (wall)", str(res["job_total_s"]), f"{res['job_rows_per_s']:,}")
    table.add_row("re-import identical (no-op)", str(res["reimport_identical_s"]), "")
    table.add_row(
        f"re-import, {res['reimport_1pct_updated']} rows changed", str(res["reimport_1pct_changed_s"]), ""
    )
    if "write_with_vectors_rows_per_s" in res:
        table.add_row(
            f"write with vectors ({res['vector_rows']:,} rows, HNSW)",
            "",
            f"{res['write_with_vectors_rows_per_s']:,}",
        )
    if "embed_texts_per_s" in res:
        table.add_row(
            f"embed {res['embed_sample']:,} texts, cold cache",
            str(res["embed_cold_s"]),
            str(res["embed_texts_per_s"]),
        )
        table.add_row(
            f"embed {res['embed_sample']:,} texts, warm cache",
            str(res["embed_warm_s"]),
            f"{res['embed_warm_texts_per_s']:,}",
        )
        table.add_row(
            "embed 100,000 texts (estimated, cold)", f"{res['embed_100k_estimated_min'] * 60:.0f}", ""
        )
    table.add_row("peak RSS", f"{res['peak_rss_mb']} MB", "")
    Console().print(table)
    met = "met" if res["targets"]["met"] else "NOT met"
    print(f"targets (>= {TARGET_ROWS_PER_S:,} rows/s read+validate+write, < 1 GB RSS): {met}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results written to {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
