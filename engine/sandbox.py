"""Run a parser on an untrusted file in a child process that cannot take this one down.

``call("package.module:function", *args, memory_bytes=…, timeout_s=…)`` starts a fresh Python
(``sys.executable``), which caps its own address space (``RLIMIT_AS``) before it imports anything, imports
the function, runs it and sends back the result. The web, bot and worker processes keep serving patients
whatever the file does: a parse that needs more memory than the cap gets ``MemoryError`` in the child, one
that runs too long is killed, one that crashes the interpreter only ends the child. Each is reported as
``SandboxError`` with ``reason`` ``memory`` / ``timeout`` / ``crashed``, and the caller says in Vietnamese
that the file could not be read safely.

Why a plain subprocess rather than ``multiprocessing``: its spawn and forkserver start methods re-import the
parent's ``__main__`` in every child (the whole CLI or pytest), and a pool broken by a dead child must be
rebuilt; here the child imports only the module it needs (about 50 ms) and a kill is just a kill.

Protocol: the parent writes one pickle ``(memory_bytes, target, args, kwargs, wants_progress)`` to the
child's stdin; the child writes a stream of pickles to its stdout (the real one: the Python-level
``sys.stdout`` is pointed at stderr so that a stray ``print`` cannot corrupt the stream):
``("progress", stage, done, total)`` any number of times, then one of ``("ok", value)``,
``("raise", exception)`` (a picklable exception of the target, re-raised here as is), ``("error", type
name, text)`` or ``("memory",)``. The child's stderr is the parent's, so its warnings land in the same log.

A target that takes a ``progress`` keyword gets one when ``on_progress`` is given; its calls arrive on the
thread that called ``call`` (which blocks: from async code use ``asyncio.to_thread``).
"""

from __future__ import annotations

import importlib
import logging
import os
import pickle
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("medbot.sandbox")

GB = 1024 * 1024 * 1024
DEFAULT_MEMORY_BYTES = 1 * GB
DEFAULT_TIMEOUT_S = 300.0
_ROOT = str(Path(__file__).resolve().parent.parent)  # the project root, for the child's import path
_BOOT = "from engine.sandbox import child_main; child_main()"
# A parser needs no thread pool; OpenBLAS (numpy, which openpyxl imports) would otherwise reserve address
# space per CPU at import, and on a many-core machine that alone exceeds the memory cap.
_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

ProgressFn = Callable[[str, int, int | None], None]


class SandboxError(Exception):
    """The child did not return a result: ``reason`` is ``memory``, ``timeout`` or ``crashed``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def call(
    target: str,
    *args: Any,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    on_progress: ProgressFn | None = None,
    **kwargs: Any,
) -> Any:
    """``target(*args, **kwargs)`` in a memory-capped child process; its return value, or its exception.

    ``target`` is ``"module:function"``; arguments and result travel by pickle."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH", "")) if p)
    env.update(_ONE_THREAD)
    job = pickle.dumps((memory_bytes, target, args, kwargs, on_progress is not None))
    timed_out = threading.Event()
    with subprocess.Popen(
        [sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None

        def expire() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout_s, expire)
        timer.daemon = True
        timer.start()
        try:
            try:
                proc.stdin.write(job)
                proc.stdin.close()
            except BrokenPipeError:
                pass  # the child died at once; its exit status tells why
            message = _read_messages(proc.stdout, on_progress)
            proc.stdout.close()
            code = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
    if timed_out.is_set():
        raise SandboxError("timeout", f"{target} ran longer than {timeout_s:g} s and was stopped")
    if message is None:
        raise SandboxError("crashed", f"{target}: the child process ended with status {code}")
    kind = message[0]
    if kind == "ok":
        return message[1]
    if kind == "raise":
        raise message[1]
    if kind == "memory":
        raise SandboxError("memory", f"{target} needed more than {memory_bytes // (1024 * 1024)} MB")
    raise SandboxError("crashed", f"{target} raised {message[1]}: {message[2]}")


def _read_messages(stream: Any, on_progress: ProgressFn | None) -> tuple[Any, ...] | None:
    """Read progress messages until the final one; None if the stream ended without it."""
    while True:
        try:
            message = pickle.load(stream)
        except (EOFError, pickle.UnpicklingError, OSError, ValueError, AttributeError, ImportError):
            return None
        if not isinstance(message, tuple) or not message:
            return None
        if message[0] == "progress":
            if on_progress is not None:
                on_progress(*message[1:])
            continue
        return message


# -- the child -----------------------------------------------------------------------------------------------


def child_main() -> None:
    """Entry point of the child process (see the module docstring)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, never into the result stream
    sys.stdout = sys.stderr
    memory_bytes, target, args, kwargs, wants_progress = pickle.load(sys.stdin.buffer)
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def send(message: tuple[Any, ...]) -> None:
        pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    try:
        module, _, name = target.partition(":")
        function = getattr(importlib.import_module(module), name)
        if wants_progress:
            kwargs["progress"] = lambda stage, done, total: send(("progress", stage, done, total))
        result = function(*args, **kwargs)
    except MemoryError:
        result = None  # release what the failed work held before reporting
        send(("memory",))
        return
    except BaseException as exc:
        send(_exception_message(exc))
        return
    try:
        send(("ok", result))
    except MemoryError:
        send(("memory",))


def _exception_message(exc: BaseException) -> tuple[Any, ...]:
    try:
        data = pickle.dumps(("raise", exc), protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)  # an exception that cannot be rebuilt is sent as text
    except Exception:
        return ("error", type(exc).__name__, str(exc)[:2000])
    return ("raise", exc)
