"""The one safe entry point for reading and validating KB spreadsheets: ``validate_isolated``.

Every import — a file an admin sends the bot, one dropped in the watched folder, ``medbot import`` — goes
through ``kb_import.job.run_import``, which calls this instead of ``validate_files``. The spreadsheet is read
and validated in a child process (``engine.sandbox``) with its address space capped (``RLIMIT_AS``,
``PARSE_MEMORY_BYTES``) and a time limit (``PARSE_TIMEOUT_S``), with the reader's limits
(``kb_import.limits``) in force inside it. A child that runs out of memory or time, or dies, becomes one
fatal ``unsafe_file`` problem with a Vietnamese message; the import is then rejected like any other, so the
KB is unchanged, and the bot, web and worker processes go on serving patients.

The result travels back by pickle; at most ``MAX_PROBLEMS_KEPT`` problems come with it (every fatal problem,
then the first others; a final warning counts the rest), so a file of a million bad rows cannot bloat the
report, the chat message or the ``kb_imports`` record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from engine import sandbox
from engine.untrusted import vn_number
from kb_import import readers
from kb_import.limits import DEFAULT_LIMITS, MAX_PROBLEMS_KEPT, ReadLimits
from kb_import.validate import FileInfo, Problem, Validation, validate_files

log = logging.getLogger("medbot.kb_import")

ProgressFn = Callable[[str, int, int | None], None]
_TARGET = f"{__name__}:validate_in_child"


def validate_isolated(
    files: list[tuple[Path, str, str]],
    *,
    role: str | None = None,
    known_roles: frozenset[str] = frozenset(),
    allow_blank_question: bool = False,
    progress: ProgressFn | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> Validation:
    """``validate_files`` in a memory- and time-capped child process. Never raises for bad input.

    Blocks while the child works; ``progress`` is called on the calling thread."""
    try:
        return sandbox.call(
            _TARGET,
            files,
            role,
            known_roles,
            allow_blank_question,
            limits,
            memory_bytes=limits.memory_bytes,
            timeout_s=limits.timeout_s,
            on_progress=progress,
        )
    except sandbox.SandboxError as exc:
        names = ", ".join(name for _, name, _ in files)
        log.warning("kb_import.unsafe_file files=%s reason=%s %s", names, exc.reason, exc.detail)
        return Validation(
            problems=[unsafe_problem(exc.reason, names, limits)],
            files=[FileInfo(name, sha) for _, name, sha in files],
        )


def validate_in_child(
    files: list[tuple[Path, str, str]],
    role: str | None,
    known_roles: frozenset[str],
    allow_blank_question: bool,
    limits: ReadLimits,
    progress: ProgressFn | None = None,
) -> Validation:
    """What the child process runs (public so the sandbox can import it)."""
    readers.use_limits(limits)
    validation = validate_files(
        files,
        role=role,
        known_roles=known_roles,
        allow_blank_question=allow_blank_question,
        progress=progress,
    )
    cap_problems(validation, MAX_PROBLEMS_KEPT)
    return validation


def cap_problems(validation: Validation, keep: int) -> None:
    """Keep every fatal problem and the first ``keep`` others; a warning counts the ones left out."""
    problems = validation.problems
    if len(problems) <= keep:
        return
    fatal = [p for p in problems if p.severity == "fatal"]
    others = [p for p in problems if p.severity != "fatal"]
    dropped = len(others) - keep
    if dropped <= 0:
        return
    validation.problems = fatal + others[:keep]
    validation.problems.append(
        Problem(
            "problems_truncated",
            f"{dropped} more problems are not listed",
            f"… và {vn_number(dropped)} lỗi khác không được liệt kê; hãy sửa các lỗi trên rồi kiểm tra lại.",
            others[keep].file,
            severity="warning",
        )
    )


def unsafe_problem(reason: str, file: str, limits: ReadLimits = DEFAULT_LIMITS) -> Problem:
    """The fatal problem of a file whose reading was stopped: ``reason`` memory / timeout / crashed."""
    if reason == "memory":
        why = f"reading it needed more than {limits.memory_bytes // (1024 * 1024)} MB of memory"
        why_vi = f"việc đọc tệp cần hơn {vn_number(limits.memory_bytes // (1024 * 1024))} MB bộ nhớ"
    elif reason == "timeout":
        why = f"reading it took longer than {limits.timeout_s:g} s"
        why_vi = f"việc đọc tệp kéo dài quá {vn_number(round(limits.timeout_s))} giây"
    else:
        why = "the reader process stopped unexpectedly"
        why_vi = "trình đọc tệp gặp sự cố"
    return Problem(
        "unsafe_file",
        f"the file could not be read safely ({why}); nothing was imported",
        f"Không thể đọc tệp một cách an toàn ({why_vi}) nên đã dừng lại; tệp không được nhập, kho kiến thức "
        "giữ nguyên.",
        file,
        severity="fatal",
    )
