"""Two processes using the same data folder share one embedded PostgreSQL and both connect."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

SCRIPT = """
import asyncio, sys
from pathlib import Path
import asyncpg
from db.embedded import ensure_server
url = ensure_server(Path(sys.argv[1]))
async def main():
    conn = await asyncpg.connect(url)
    print(await conn.fetchval("SELECT pg_postmaster_start_time()::text"), flush=True)
    sys.stdin.readline()  # stay connected until the test lets go
    await conn.close()
asyncio.run(main())
"""


def test_two_processes_share_one_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(data_dir)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        starts = [p.stdout.readline().strip() for p in procs]  # type: ignore[union-attr]
        assert all(starts), [p.stderr.read() for p in procs if p.poll() is not None]  # type: ignore[union-attr]
        assert starts[0] == starts[1], "both processes must use the same server"
    finally:
        for p in procs:
            p.communicate("\n", timeout=60)
    assert all(p.returncode == 0 for p in procs)
    # The last process to leave stopped the server.
    assert not (data_dir / "pg" / "postmaster.pid").exists()
