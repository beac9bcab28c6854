"""A TCP relay in front of the suite's PostgreSQL, so a test can take the database away from a process.

The bot under test gets ``relay.url`` as its ``DATABASE_URL``; ``cut()`` closes every relayed connection and
refuses new ones (what a crashed or unreachable server looks like to a client), ``restore()`` lets them
through again. The server itself keeps running for the rest of the suite. Not a fake: every byte that passes
is the real server's.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

from db.pool import asyncpg_dsn


class PgRelay:
    def __init__(self, server_url: str) -> None:
        parts = urlsplit(asyncpg_dsn(server_url))
        self._parts = parts
        host = parse_qs(parts.query).get("host", [parts.hostname or "127.0.0.1"])[0]
        port = parts.port or 5432
        self._unix = str(Path(host) / f".s.PGSQL.{port}") if host.startswith("/") else None
        self._tcp = (host, port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.down = False
        self.port = 0

    @property
    def url(self) -> str:
        """The database URL of the relayed server (same database and user, TCP to the relay)."""
        user = self._parts.username or "postgres"
        return urlunsplit(("postgresql", f"{user}@127.0.0.1:{self.port}", self._parts.path, "", ""))

    async def __aenter__(self) -> PgRelay:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def cut(self) -> None:
        """The database is gone: open connections drop, new ones are closed at once."""
        self.down = True
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    def restore(self) -> None:
        self.down = False

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.close()
            return
        try:
            if self._unix:
                up_reader, up_writer = await asyncio.open_unix_connection(self._unix)
            else:
                up_reader, up_writer = await asyncio.open_connection(*self._tcp)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()
        self._writers.discard(writer)
