"""The KB import job: validate spreadsheets, then upsert them into the KB in one transaction per import.

Used by ``medbot import`` and by the Telegram admin flow (``run_import`` with a progress callback).

1. Every file is hashed, then read and validated in a memory- and time-capped child process
   (``kb_import.isolated``, limits in ``kb_import.limits``): a file that would exhaust memory or time is
   rejected with a clear message and the process serving patients is untouched; the event loop stays free.
2. Strict by default: any fatal problem or invalid row rejects the whole import and nothing is written.
   ``skip_invalid`` imports the valid rows and lists the skipped ones; ``dry_run`` stops after computing
   what would change (added / updated / unchanged / deactivated) — the KB is untouched, but the dry run is
   recorded in ``kb_imports`` (status ``dry_run``) so the audit trail shows who tried what.
3. The roles of the import are locked (PostgreSQL advisory locks, sorted order): concurrent imports of a role
   are serialised, never interleaved.
4. An import identical to the last one applied to its roles (same files, same options) while those roles' KB
   versions have not moved since is a no-op that says so (status ``unchanged``).
5. New or changed rows are embedded BEFORE the write transaction opens, in batches, through the embedding
   cache (only text never embedded before reaches the model), with progress reported.
6. One transaction: COPY into a staging table, ``INSERT … ON CONFLICT (role, code)``, deactivation of the
   entries of each imported role that the file no longer has (unless ``keep_missing``; codes of skipped
   invalid rows and of the template's example row are kept), the ``kb_imports`` record, a snapshot of every
   entry written or hidden as it was before (``kb_import_snapshots``: ``kb_import.undo`` puts them back), and
   a KB version bump (NOTIFY ``kb_changed``) for every role that changed. Running bot processes rebuild that
   role's index.
7. After the transaction, every role the import changed gets its calibration re-estimated on its new KB
   (``kb_import.calibrate``: the answer/decline model adjusted to this KB, self-supervised); a failure there
   is logged and leaves the import applied.
8. Each written row carries its KHẨN CẤP (urgent) mark and the import's ``sample`` option: only the import of
   the shipped sample KB (``ImportOptions(sample=True)``, ``medbot setup``) marks rows as unreviewed sample
   material; any other import of a row, even with unchanged content, makes it the clinic's own (counted as
   updated).
9. The file is the whole KB of each role it holds: entries of the role whose codes it lacks are hidden
   (``keep_missing`` adds and updates only). So that an accidental partial file never empties a role, an
   import that would hide a large share of a role (``large_hide``: more than ``MASS_HIDE_MAX_ENTRIES``
   entries, or more than ``MASS_HIDE_SHARE`` of the role's active entries) is refused, nothing written,
   unless ``force`` is set (``--force``, the bot's separate confirmation button; the watched folder never
   sets it). Whatever an import hides is said in the first sentence of its message, role by role.
10. After an applied import with embeddings, every role it changed is searched for entries that may say the
    same thing (``kb_import.duplicates``: stored vectors nearly the same): listed in the report as a hint to
    review, never a problem; the search is capped in time and a failure only logs.

Progress callbacks are always invoked on the event loop's thread: ``progress(stage, done, total)`` with
stage in ``validate``, ``lock``, ``embed``, ``write``; ``total`` may be None when unknown.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from db import imports as import_log
from db import kb, kb_console_changes, kb_write
from db.kb_duplicates import NearDuplicates
from engine.embedding import EmbeddingUnavailable, model_name
from engine.untrusted import file_sha256
from kb_import.console_changes import UndoneChange, undone_changes
from kb_import.duplicates import find as find_duplicates
from kb_import.isolated import validate_isolated
from kb_import.limits import DEFAULT_LIMITS, MASS_HIDE_MAX_ENTRIES, MASS_HIDE_SHARE, ReadLimits, large_hide
from kb_import.roles import known_roles as builtin_and
from kb_import.roles import role_label
from kb_import.texts import content_hash, embedding_text, search_text
from kb_import.validate import FileInfo, Problem, Validation

log = logging.getLogger("medbot.kb_import")

Progress = Callable[[str, int, int | None], None]
HIDDEN_CODES_SHOWN = 5  # hidden codes named in a report, per role


@dataclass
class ImportOptions:
    role: str | None = None  # role of tables without a role sheet name or role column
    dry_run: bool = False
    skip_invalid: bool = False
    allow_blank_question: bool = False
    keep_missing: bool = False  # merge: do not deactivate entries missing from the file
    force: bool = False  # confirmed: the import may hide a large share of a role (``large_hide``)
    # Leave the entries the clinic console changed since their last import as they are (neither written nor
    # hidden): "Chỉ nhập các mục chưa sửa trên trang quản trị" (``kb_import.console_changes``).
    keep_console_edits: bool = False
    embed: bool = True  # False: leave embeddings NULL for the backfill job
    requested_by: str | None = None
    known_roles: Sequence[str] = ()
    limits: ReadLimits = DEFAULT_LIMITS  # safety limits on the files and on reading them
    # The shipped sample KB (``medbot setup``): the rows written are marked as sample material not yet
    # reviewed by the clinic's doctors. Any other import is the clinic's own: its rows are written unmarked.
    sample: bool = False
    # Re-estimate the calibration of every role the import changed, on its new KB (``kb_import.calibrate``).
    calibrate: bool = True


@dataclass
class RoleCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    reactivated: int = 0  # deactivated entries restored by this import
    deactivated: int = 0
    reembedded: int = 0  # unchanged content, embedding missing or from another model
    skipped: int = 0  # invalid rows left out (--skip-invalid)
    kept_edits: int = 0  # entries changed in the console, left as they are (``keep_console_edits``)
    version: int | None = None  # KB version after the import

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.reactivated + self.deactivated + self.reembedded


@dataclass
class Hide:
    """What an import hides (or would hide) of one role: entries whose codes the file lacks."""

    role: str
    hidden: int
    active: int  # active entries of the role before the import
    codes: list[str]  # the first few hidden codes, sorted
    file: str  # where the role's rows came from
    sheet: str | None = None

    @property
    def large(self) -> bool:
        return large_hide(self.hidden, self.active)

    def codes_text(self) -> str:
        more = " …" if self.hidden > len(self.codes) else ""
        return ", ".join(self.codes) + more


@dataclass
class ImportReport:
    """Everything an import did or would do; ``ok`` is True only when it did what was asked."""

    status: str  # applied | unchanged | rejected | dry_run | failed
    ok: bool
    message: str
    message_vi: str
    import_id: int | None = None
    noop_of: int | None = None  # id of the identical earlier import
    files: list[FileInfo] = field(default_factory=list)
    roles: dict[str, RoleCounts] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    rows_seen: int = 0
    rows_valid: int = 0
    rows_invalid: int = 0
    embedding_model: str | None = None
    embedded: int = 0  # texts sent to the embedding model
    embedding_cached: int = 0  # texts found in the embedding cache
    calibrations: dict[str, str] = field(default_factory=dict)  # role -> "adjusted" | "global" (re-estimated)
    timings: dict[str, float] = field(default_factory=dict)
    dry_run: bool = False
    hides: list[Hide] = field(default_factory=list)  # roles the import hides entries of (or would)
    forced: bool = False  # the import was confirmed to hide a large share (``force``)
    # The console's changes this import would undo (a dry run) or undid (an applied import): overwritten,
    # hidden, shown or hidden again; with ``keep_console_edits``, the ones it left alone.
    console_changes: list[UndoneChange] = field(default_factory=list)
    kept_console_edits: bool = False  # ``keep_console_edits``: ``console_changes`` were left as they are
    # After an applied import, per role it changed: entries that may say the same thing (a hint to review,
    # never a problem; ``kb_import.duplicates``). Roles without such pairs are absent.
    duplicates: dict[str, NearDuplicates] = field(default_factory=dict)

    def console_changes_of(self, role: str) -> list[UndoneChange]:
        return [c for c in self.console_changes if c.role == role]

    @property
    def large_hides(self) -> list[Hide]:
        return [h for h in self.hides if h.large]

    @property
    def needs_confirmation(self) -> bool:
        """The import (dry run: the import of this file) hides a large share without ``force``: refused."""
        return bool(self.large_hides) and not self.forced

    @property
    def totals(self) -> RoleCounts:
        total = RoleCounts()
        for counts in self.roles.values():
            for name in (
                "added",
                "updated",
                "unchanged",
                "reactivated",
                "deactivated",
                "reembedded",
                "skipped",
                "kept_edits",
            ):
                setattr(total, name, getattr(total, name) + getattr(counts, name))
        return total

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity != "warning"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["totals"] = asdict(self.totals)
        return data


def _counts_json(report: ImportReport, fingerprint: str) -> dict[str, Any]:
    totals = asdict(report.totals)
    totals.pop("version", None)
    return {
        **totals,
        "rows_seen": report.rows_seen,
        "rows_valid": report.rows_valid,
        "rows_invalid": report.rows_invalid,
        "embedded": report.embedded,
        "embedding_cached": report.embedding_cached,
        "embedding_model": report.embedding_model,
        "roles": {role: asdict(c) for role, c in report.roles.items()},
        "versions": {role: c.version for role, c in report.roles.items()},
        "files": [
            {"name": f.name, "sha256": f.sha256, "rows": f.rows, "sheets": f.sheets} for f in report.files
        ],
        "fingerprint": fingerprint,
        "noop_of": report.noop_of,
        "timings": report.timings,
        "problems": {"errors": len(report.errors), "warnings": len(report.warnings)},
    }


def _thread_safe(progress: Progress | None) -> Progress | None:
    """Wrap a callback so calls from a worker thread run on the event loop's thread."""
    if progress is None:
        return None
    loop = asyncio.get_running_loop()

    def call(stage: str, done: int, total: int | None) -> None:
        loop.call_soon_threadsafe(progress, stage, done, total)

    return call


async def run_import(
    pool: asyncpg.Pool,
    files: Sequence[Path | str | tuple[Path | str, str]],
    options: ImportOptions | None = None,
    *,
    embedder: Any = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import ``files`` (paths, or ``(path, display name)`` pairs) as one import. Never raises for bad input.

    ``embedder`` is a ``engine.embedding.CachedEmbedder`` (or any object with ``name`` and
    ``embed_passages(texts, progress=…)``); None leaves embeddings NULL (as ``embed=False``).
    """
    options = options or ImportOptions()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    entries: list[tuple[Path, str, str]] = []
    missing: list[Problem] = []
    for item in files:
        path, name = (Path(item[0]), item[1]) if isinstance(item, tuple) else (Path(item), Path(item).name)
        try:
            entries.append((path, name, file_sha256(path)))
        except OSError as exc:
            missing.append(
                Problem(
                    "unreadable",
                    f"cannot read the file: {exc.strerror}",
                    "Không đọc được tệp.",
                    name,
                    severity="fatal",
                )
            )
    known = builtin_and([*await kb_write.existing_roles(pool), *options.known_roles])
    validation: Validation = await asyncio.to_thread(
        validate_isolated,
        entries,
        role=options.role,
        known_roles=known,
        allow_blank_question=options.allow_blank_question,
        progress=_thread_safe(progress),
        limits=options.limits,
    )
    validation.problems[:0] = missing
    timings["validate_s"] = round(time.perf_counter() - started, 3)
    filename = ", ".join(name for _, name, _ in entries) or ", ".join(p.file for p in missing)
    sha = (
        entries[0][2]
        if len(entries) == 1
        else hashlib.sha256("\n".join(s for *_, s in entries).encode()).hexdigest()
    )
    use_embedder = embedder if (options.embed and embedder is not None) else None
    if use_embedder is not None:
        try:
            await model_name(use_embedder)  # a server's model is known after its probe
        except EmbeddingUnavailable as exc:
            log.warning(
                "import.no_embeddings error=%s: rows are stored without vectors for the backfill job", exc
            )
            use_embedder = None
    fingerprint = hashlib.sha256(
        json.dumps(
            {
                "files": [s for *_, s in entries],
                "role": options.role,
                "skip_invalid": options.skip_invalid,
                "allow_blank_question": options.allow_blank_question,
                "keep_missing": options.keep_missing,
                "embedder": getattr(use_embedder, "name", None),
                # only when set, so fingerprints recorded before the option existed still match
                **({"sample": True} if options.sample else {}),
                **({"keep_console_edits": True} if options.keep_console_edits else {}),
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()

    report = ImportReport(
        status="rejected",
        ok=False,
        message="",
        message_vi="",
        files=validation.files,
        problems=validation.problems,
        rows_seen=validation.rows_seen,
        rows_valid=len(validation.rows),
        rows_invalid=validation.invalid_rows,
        embedding_model=getattr(use_embedder, "name", None),
        timings=timings,
        dry_run=options.dry_run,
    )
    for row in validation.rows:
        report.roles.setdefault(row.role, RoleCounts())
    for role, codes in validation.invalid_codes.items():
        report.roles.setdefault(role, RoleCounts()).skipped += len(codes)

    async def record(status: str, counts_source: ImportReport, db: Any = pool) -> int:
        return await import_log.record(
            db,
            filename=filename,
            sha256=sha,
            roles=sorted(report.roles),
            requested_by=options.requested_by,
            status=status,
            dry_run=options.dry_run,
            counts=_counts_json(counts_source, fingerprint),
            errors=[p.to_dict() for p in report.problems],
        )

    # --- rejection ------------------------------------------------------------------------------------------
    fatal = [p for p in validation.problems if p.severity == "fatal"]
    if fatal or (validation.errors and not options.skip_invalid) or not validation.rows:
        n_err = len(fatal) + len(validation.errors)
        if n_err:
            report.message = f"rejected: {n_err} problem(s) found; nothing was imported"
            report.message_vi = f"Tệp bị từ chối: có {n_err} lỗi; chưa nhập dòng nào."
        else:
            report.message = "rejected: no valid rows to import"
            report.message_vi = "Tệp bị từ chối: không có dòng hợp lệ nào để nhập."
        report.status = "dry_run" if options.dry_run else "rejected"
        report.import_id = await record(report.status, report)
        log.info("kb_import.%s id=%s %s", report.status, report.import_id, report.message)
        return report

    rows = validation.rows
    hashes = [content_hash(r) for r in rows]
    roles = sorted(report.roles)

    file_hashes = {(r.role, r.code): h for r, h in zip(rows, hashes, strict=True)}
    left_alone = {
        role: validation.invalid_codes.get(role, set()) | validation.example_codes.get(role, set())
        for role in roles
    }

    def undone(console: list[kb_console_changes.ChangedEntry]) -> list[UndoneChange]:
        return undone_changes(console, file_hashes, left_alone, keep_missing=options.keep_missing)

    def diff(
        existing: dict[tuple[str, str], kb_write.ExistingEntry],
        console: list[kb_console_changes.ChangedEntry],
    ) -> tuple[list[int], dict[str, list[str]]]:
        """Fill the per-role counts and the console changes the import undoes (or, ``keep_console_edits``,
        leaves alone); return the indexes of rows to write and the codes to keep per role."""
        report.console_changes = undone(console)
        report.kept_console_edits = options.keep_console_edits and bool(report.console_changes)
        protected = (
            {(c.role, c.code) for c in report.console_changes} if options.keep_console_edits else set()
        )
        staged: list[int] = []
        model = getattr(use_embedder, "name", None)
        for i, (row, h) in enumerate(zip(rows, hashes, strict=True)):
            counts = report.roles[row.role]
            old = existing.get((row.role, row.code))
            if (row.role, row.code) in protected:
                continue
            if old is None:
                counts.added += 1
            elif not old.active:
                counts.reactivated += 1
            elif old.content_hash != h or old.sample != options.sample:
                counts.updated += 1  # a clinic import of sample rows makes them the clinic's own
            elif model is not None and old.embedded_with != model:
                counts.reembedded += 1
            else:
                counts.unchanged += 1
                continue
            staged.append(i)
        keep: dict[str, list[str]] = {}
        report.hides = []
        if not options.keep_missing:
            for role in roles:
                codes = (
                    {r.code for r in rows if r.role == role}
                    | left_alone[role]
                    | {code for r, code in protected if r == role}
                )
                keep[role] = sorted(codes)
                active = [code for (r, code), e in existing.items() if r == role and e.active]
                gone = sorted(code for code in active if code not in codes)
                report.roles[role].deactivated = len(gone)
                if gone:
                    first = next((r for r in rows if r.role == role), None)
                    report.hides.append(
                        Hide(
                            role,
                            len(gone),
                            len(active),
                            gone[:HIDDEN_CODES_SHOWN],
                            first.file if first else filename,
                            first.sheet if first else None,
                        )
                    )
        for role, _ in protected:
            report.roles[role].kept_edits += 1
        report.forced = options.force
        refused = report.needs_confirmation and not options.dry_run
        for hide in report.large_hides:
            done = options.force and not options.dry_run
            report.problems.append(_hide_problem(hide, done=done, refused=refused))
        return staged, keep

    # --- dry run --------------------------------------------------------------------------------------------
    if options.dry_run:
        async with pool.acquire() as conn:
            diff(
                await kb_write.existing_entries(conn, roles),
                await kb_console_changes.changed_since_import(conn, roles),
            )
            for role in roles:
                report.roles[role].version = await kb.version(conn, role)
        report.status, report.ok = "dry_run", True
        t = report.totals
        hidden, hidden_vi = _hidden_clause(report, done=False)
        report.message = (
            f"dry run: {hidden}would add {t.added}, update {t.updated}, restore {t.reactivated}, "
            f"deactivate {t.deactivated}; {t.unchanged} unchanged, {t.skipped} invalid row(s) skipped"
        )
        report.message_vi = (
            f"Kiểm tra thử: {hidden_vi}sẽ thêm {t.added}, cập nhật {t.updated}, khôi phục {t.reactivated}, "
            f"ẩn {t.deactivated} mục; {t.unchanged} mục không đổi; bỏ qua {t.skipped} dòng lỗi."
        )
        console_en, console_vi = _console_clause(report, done=False)
        report.message += console_en
        report.message_vi += console_vi
        report.import_id = await record("dry_run", report)
        log.info("kb_import.dry_run id=%s roles=%s %s", report.import_id, roles, report.message)
        return report

    # --- apply ----------------------------------------------------------------------------------------------
    if progress:
        progress("lock", 0, len(roles))
    t_lock = time.perf_counter()
    try:
        async with kb_write.role_locks(pool, roles) as conn:
            timings["lock_wait_s"] = round(time.perf_counter() - t_lock, 3)
            if progress:
                progress("lock", len(roles), len(roles))
            last = await import_log.last_applied(conn, roles)
            if (
                last is not None
                and last["counts"].get("fingerprint") == fingerprint
                and sorted(last["roles"]) == roles
            ):
                versions = last["counts"].get("versions", {})
                current = {role: await kb.version(conn, role) for role in roles}
                if all(versions.get(role) == current[role] for role in roles):
                    for role in roles:
                        c = report.roles[role]
                        c.unchanged, c.version = sum(1 for r in rows if r.role == role), versions.get(role)
                    report.status, report.ok, report.noop_of = "unchanged", True, int(last["id"])
                    report.message = (
                        f"nothing to do: identical to import #{last['id']} and the KB has not changed since"
                    )
                    report.message_vi = f"Không có gì thay đổi: tệp giống hệt lần nhập #{last['id']} và kho kiến thức chưa đổi từ đó."
                    report.import_id = await record("unchanged", report, conn)
                    return report

            t0 = time.perf_counter()
            staged, keep = diff(
                await kb_write.existing_entries(conn, roles),
                await kb_console_changes.changed_since_import(conn, roles),
            )
            if report.needs_confirmation:  # a large share of a role would be hidden: nothing is written
                report.status = "rejected"
                report.message, report.message_vi = _refusal(report)
                report.import_id = await record("rejected", report, conn)
                log.info("kb_import.rejected roles=%s %s", roles, report.message)
                return report
            vectors: list[Any] = [None] * len(staged)
            if use_embedder is not None and staged:
                texts = [embedding_text(rows[i].question, rows[i].answer) for i in staged]
                done = 0

                def on_embed(n: int) -> None:
                    nonlocal done
                    done += n
                    if progress:
                        progress("embed", done, len(texts))

                before = getattr(use_embedder, "embedded_count", 0)
                matrix = await use_embedder.embed_passages(texts, progress=on_embed)
                report.embedded = getattr(use_embedder, "embedded_count", 0) - before
                report.embedding_cached = len(texts) - report.embedded
                vectors = list(matrix)
            timings["embed_s"] = round(time.perf_counter() - t0, 3)

            t1 = time.perf_counter()
            model = getattr(use_embedder, "name", None)
            records = [
                (
                    rows[i].role,
                    rows[i].code,
                    rows[i].topic,
                    rows[i].subtopic,
                    rows[i].question,
                    rows[i].answer,
                    rows[i].explanation,
                    rows[i].keywords,
                    search_text(rows[i]),
                    hashes[i],
                    vec,
                    model if vec is not None else None,
                    rows[i].urgent,
                    options.sample,
                )
                for i, vec in zip(staged, vectors, strict=True)
            ]
            if progress:
                progress("write", 0, len(records))
            changed = any(c.changed for c in report.roles.values())
            status = "applied" if changed else "unchanged"
            async with conn.transaction():
                if options.keep_console_edits:
                    await _check_console_unchanged(conn, report, undone, [rows[i] for i in staged], keep)
                import_id = await record(status, report, conn)
                deactivated = await kb_write.write_entries(
                    conn, import_id=import_id, records=records, keep_codes=keep
                )
                for role in roles:
                    counts = report.roles[role]
                    counts.deactivated = deactivated.get(role, 0)
                    if counts.changed:
                        counts.version = await kb.bump_version(conn, role)
                    else:
                        counts.version = await kb.version(conn, role)
                timings["write_s"] = round(time.perf_counter() - t1, 3)
                timings["total_s"] = round(time.perf_counter() - started, 3)
                await import_log.update_counts(conn, import_id, _counts_json(report, fingerprint))
            if progress:
                progress("write", len(records), len(records))
    except ConsoleChangedMeanwhile:
        report.status, report.ok = "rejected", False
        report.message = (
            "refused: entries were changed in the console while this import ran; nothing was changed. Check "
            "the file again"
        )
        report.message_vi = (
            "Chưa nhập: trong lúc nhập, trang quản trị vừa có thay đổi ở các mục của tệp này; kho kiến thức "
            "chưa thay đổi. Hãy kiểm tra lại tệp rồi nhập lại."
        )
        report.problems.append(
            Problem("console_changed", report.message, report.message_vi, filename, severity="fatal")
        )
        report.import_id = await record("rejected", report)
        return report
    except (asyncpg.PostgresError, OSError) as exc:
        log.exception("kb_import.failed files=%s", filename)
        report.status, report.ok = "failed", False
        report.message = f"failed: {type(exc).__name__}: {exc}; the KB was left unchanged"
        report.message_vi = "Nhập thất bại do lỗi hệ thống; kho kiến thức giữ nguyên như trước."
        report.problems.append(
            Problem("failed", report.message, report.message_vi, filename, severity="fatal")
        )
        report.import_id = await record("failed", report)
        return report

    report.import_id, report.status, report.ok = import_id, status, True
    changed_roles = [role for role in roles if report.roles[role].changed]
    if status == "applied" and options.calibrate:
        # A dry run, a refused file or `medbot import --template` starts without the search and scikit-learn.
        from kb_import.calibrate import calibrate_roles  # lazy: ~1.5 s of imports, applied imports only

        # Seconds for a clinic KB (a few hundred searches of its own entries); a failure only logs.
        t_cal = time.perf_counter()
        done = await calibrate_roles(pool, changed_roles, use_embedder)
        report.calibrations = {role: cal.status for role, cal in done.items()}
        timings["calibrate_s"] = round(time.perf_counter() - t_cal, 3)
    if status == "applied" and use_embedder is not None:
        # A hint for the clinic's doctors, capped in time; it never fails the import (``kb_import.duplicates``).
        t_dup = time.perf_counter()
        report.duplicates = await find_duplicates(pool, changed_roles, use_embedder.name)
        timings["duplicates_s"] = round(time.perf_counter() - t_dup, 3)
    t = report.totals
    if status == "unchanged":
        report.message = f"no changes: all {t.unchanged} entries are already up to date"
        report.message_vi = f"Không có thay đổi: {t.unchanged} mục đã được cập nhật từ trước."
    else:
        hidden, hidden_vi = _hidden_clause(report, done=True)
        report.message = (
            f"{hidden}imported: {t.added} added, {t.updated} updated, {t.reactivated} restored, {t.deactivated} "
            f"deactivated, {t.unchanged} unchanged"
            + (f", {t.skipped} invalid row(s) skipped" if t.skipped else "")
        )
        report.message_vi = (
            f"{hidden_vi}Đã nhập: thêm {t.added}, cập nhật {t.updated}, khôi phục {t.reactivated}, "
            f"ẩn {t.deactivated}, {t.unchanged} mục không đổi"
            + (f"; bỏ qua {t.skipped} dòng lỗi" if t.skipped else "")
            + "."
        )
        console_en, console_vi = _console_clause(report, done=True)
        report.message += console_en
        report.message_vi += console_vi
    log.info("kb_import.%s id=%s roles=%s %s", status, import_id, roles, report.message)
    return report


# --- what an import hides, in words ------------------------------------------------------------------------


def _hidden_clause(report: ImportReport, *, done: bool) -> tuple[str, str]:
    """The opening clause naming what the import hid (``done``) or would hide, role by role ("" if nothing)."""
    if not report.hides:
        return "", ""
    if done:
        en = ", ".join(f"{h.hidden} entries of {h.role}" for h in report.hides)
        vi = ", ".join(f"{h.hidden} mục của vai trò {role_label(h.role)}" for h in report.hides)
        return (
            f"HID {en} (their codes are not in the file); ",
            f"Đã ẩn {vi} vì mã của chúng không có trong tệp. ",
        )
    en = ", ".join(f"{h.hidden} of the {h.active} active entries of {h.role}" for h in report.hides)
    vi = ", ".join(
        f"{h.hidden}/{h.active} mục đang dùng của vai trò {role_label(h.role)}" for h in report.hides
    )
    confirm = " — this needs --force" if report.needs_confirmation else ""
    confirm_vi = " — cần xác nhận riêng mới được nhập" if report.needs_confirmation else ""
    return (
        f"would HIDE {en} (their codes are not in the file){confirm}; ",
        f"sẽ ẩn {vi} vì mã của chúng không có trong tệp{confirm_vi}; ",
    )


class ConsoleChangedMeanwhile(Exception):
    """A console change of an entry the import writes or hides was saved after the import read the KB."""


async def _check_console_unchanged(
    conn: asyncpg.Connection,
    report: ImportReport,
    undone: Callable[[list[kb_console_changes.ChangedEntry]], list[UndoneChange]],
    written: Sequence[Any],
    keep: dict[str, list[str]],
) -> None:
    """``keep_console_edits``, in the write transaction: lock the entries the import writes or hides, then
    read the console's changes again; one that the import would now undo and that it did not leave alone
    (saved while the vectors were computed) raises :class:`ConsoleChangedMeanwhile`: nothing is written."""
    for role in sorted(report.roles):
        codes = [r.code for r in written if r.role == role]
        await kb_console_changes.lock_written(conn, role, codes, keep.get(role))
    left = {(c.role, c.code) for c in report.console_changes}
    fresh = undone(await kb_console_changes.changed_since_import(conn, sorted(report.roles)))
    if any((c.role, c.code) not in left for c in fresh):
        raise ConsoleChangedMeanwhile


def _console_clause(report: ImportReport, *, done: bool) -> tuple[str, str]:
    """The closing sentence about the console's changes the import undoes, undid or left alone ("" if none)."""
    n = len(report.console_changes)
    if not n:
        return "", ""
    if report.kept_console_edits:
        verb, verb_vi = ("left", "đã giữ nguyên") if done else ("would leave", "sẽ giữ nguyên")
        return (
            f"; {verb} {n} entries changed in the console as they are",
            f" {verb_vi.capitalize()} {n} mục đã thay đổi trên trang quản trị (không ghi đè, không ẩn).",
        )
    if done:
        return (
            f"; UNDID {n} console change(s) (overwritten or hidden: see each entry's history)",
            f" Lần nhập này đã ghi đè hoặc ẩn {n} mục đã thay đổi trên trang quản trị.",
        )
    return (
        f"; WARNING: would undo {n} change(s) made in the console (overwrite or hide them)",
        f" ⚠️ Cảnh báo: tệp này sẽ làm mất {n} thay đổi đã làm trên trang quản trị (ghi đè hoặc ẩn mục).",
    )


def _refusal(report: ImportReport) -> tuple[str, str]:
    large = report.large_hides
    en = ", ".join(f"{h.hidden} of the {h.active} active entries of {h.role}" for h in large)
    vi = ", ".join(f"{h.hidden}/{h.active} mục đang dùng của vai trò {role_label(h.role)}" for h in large)
    return (
        f"refused: this import would hide {en} (their codes are not in the file); nothing was changed. "
        f"An import may hide at most {MASS_HIDE_MAX_ENTRIES} entries and at most {MASS_HIDE_SHARE:.0%} of a "
        "role's active entries without an explicit confirmation",
        f"Chưa nhập: lần nhập này sẽ ẩn {vi} vì mã của chúng không có trong tệp; kho kiến thức chưa thay đổi. "
        f"Muốn ẩn nhiều hơn {MASS_HIDE_MAX_ENTRIES} mục hoặc hơn {MASS_HIDE_SHARE:.0%} số mục đang dùng của một "
        "vai trò thì phải xác nhận riêng.",
    )


def _hide_problem(hide: Hide, *, done: bool, refused: bool) -> Problem:
    """The ``mass_deactivation`` problem of a role: fatal when the import is refused for it, else a warning
    (a dry run: what the import would need; a confirmed import: what it hides)."""
    en_verb, vi_verb = ("hides", "Ẩn") if done else ("would hide", "Sẽ ẩn")
    return Problem(
        "mass_deactivation",
        f"{en_verb} {hide.hidden} of the {hide.active} active entries of role {hide.role}: their codes "
        f"({hide.codes_text()}) are not in the file" + (" (confirmed with --force)" if done else ""),
        f"{vi_verb} {hide.hidden}/{hide.active} mục đang dùng của vai trò {role_label(hide.role)} vì mã của "
        f"chúng không có trong tệp (ví dụ {hide.codes_text()})" + (" (đã xác nhận)." if done else "."),
        hide.file,
        sheet=hide.sheet,
        severity="fatal" if refused else "warning",
    )
