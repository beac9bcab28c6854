"""Compiled rule patterns kept between processes, as Python keeps bytecode in ``__pycache__``.

The rules (``emergencies.toml``) become a few hundred regular expressions, some alternations of thousands of
phrases: factoring the alternations (``alternation.factor``), parsing and compiling them takes seconds in every
process that triages (the bot, the worker, each ``medbot`` command, each process a test starts). The factored
alternations and the compiled program of every pattern are written once to ``engine/triage/__pycache__/`` and
loaded from there in a few tens of milliseconds.

CPython's ``re`` has no public way to save a compiled pattern (pickling one compiles it again), so this module
uses the same internals ``re.compile`` itself calls: ``re._parser.parse`` and ``re._compiler._code`` give the
program that ``_sre.compile`` turns into a pattern. The file is named after the interpreter and ``_sre.MAGIC`` and
its entries are keyed by the pattern's text and flags, so a pattern is only ever rebuilt from a program compiled
from the same text by the same engine; a pattern made so is equal to ``re.compile``'s (``==`` compares the text,
the flags and the program; ``tests/unit/test_triage_compiled.py`` checks it for every rule). Anything unexpected
(no file, a damaged one, an unwritable folder, another Python) only means factoring and compiling again. A
factored alternation is keyed by the phrases it was made of: ``factor`` is a pure function of them, and the hash
of the factoring code's source (``alternation.py``) is in the file's name, so a change to it starts a new file.
"""

from __future__ import annotations

import _sre
import array
import hashlib
import logging
import marshal
import os
import re
import sys
import tempfile
import threading
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from re import _compiler, _parser  # type: ignore[attr-defined]  # the steps of re.compile, see above

log = logging.getLogger(__name__)

FOLDER = Path(__file__).resolve().parent / "__pycache__"
_FORMAT = 1  # bumped when the layout of the file changes
_TAG = f"{sys.implementation.cache_tag}-sre{_sre.MAGIC}-{_sre.CODESIZE}-v{_FORMAT}"
_WORD = next(code for code in "IL" if array.array(code).itemsize == _sre.CODESIZE)  # one word of a program

# An entry: (flags as compiled, the program as 32-bit words, groups - 1, named groups, index -> name).
_Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]


class PatternStore:
    """``compile`` is ``re.compile`` and ``factored`` is ``factor`` backed by a file; ``save`` writes what was
    used since loading."""

    def __init__(self, folder: Path | None = FOLDER, *, factoring_code: Path | None = None) -> None:
        """``factoring_code``: the source file of the ``factor`` given to ``factored`` (its hash names the file)."""
        code = b"" if factoring_code is None else Path(factoring_code).read_bytes()
        version = hashlib.sha256(code).hexdigest()[:16]
        self.path = None if folder is None else Path(folder) / f"rule-patterns.{_TAG}-{version}.bin"
        self._lock = threading.Lock()
        self._known, self._known_factored = self._read()
        self._used: dict[tuple[str, int], _Entry] = {}
        self._used_factored: dict[tuple[str, ...], str] = {}
        self.compiled = 0  # patterns compiled and alternations factored here (not found in the file)

    def factored(self, phrases: Sequence[str], factor: Callable[[list[str]], str]) -> str:
        """``factor(phrases)``, from the file when these phrases were factored before."""
        key = tuple(phrases)
        with self._lock:
            found = self._known_factored.get(key)
        if found is None:
            found = factor(list(phrases))
        with self._lock:
            if key not in self._known_factored:
                self._known_factored[key] = found
                self.compiled += 1
            self._used_factored[key] = found
        return found

    def compile(self, pattern: str, flags: int = 0) -> re.Pattern[str]:
        key = (pattern, int(flags))
        with self._lock:
            entry = self._known.get(key)
        if entry is not None:
            try:
                built = _build(pattern, entry)
            except Exception as exc:  # a program this engine refuses: compile it as re does
                log.warning("triage.compiled entry unusable, compiling error=%r", exc)
            else:
                with self._lock:
                    self._used[key] = entry
                return built
        try:
            entry = _program(pattern, int(flags))
            built = _build(pattern, entry)
        except re.error:
            raise  # a wrong pattern in the rules: the same error re.compile gives
        except Exception as exc:  # internals not as this module expects (another Python): plain re.compile
            log.warning("triage.compiled internals unusable, compiling with re error=%r", exc)
            return re.compile(pattern, flags)
        with self._lock:
            self._known[key] = self._used[key] = entry
            self.compiled += 1
        return built

    def save(self) -> None:
        """Write the patterns used since loading, when any had to be compiled (atomically; never raises)."""
        with self._lock:
            if self.path is None or not self.compiled:
                return
            used = (dict(self._used), dict(self._used_factored))
            self.compiled = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            blob = zlib.compress(marshal.dumps((_TAG, used)), 6)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".rule-patterns.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                os.replace(tmp, self.path)  # a process starting meanwhile reads the old file or the new one
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except Exception as exc:  # a read-only install compiles at every start, as before
            log.info("triage.compiled patterns not saved path=%s error=%r", self.path, exc)

    def _read(self) -> tuple[dict[tuple[str, int], _Entry], dict[tuple[str, ...], str]]:
        if self.path is None or not self.path.is_file():
            return {}, {}
        try:
            tag, (programs, factored) = marshal.loads(zlib.decompress(self.path.read_bytes()))
            if tag != _TAG or not isinstance(programs, dict) or not isinstance(factored, dict):
                return {}, {}
            return programs, factored
        except Exception as exc:  # damaged or foreign: compile, and the next save replaces it
            log.warning("triage.compiled file unusable, compiling path=%s error=%r", self.path, exc)
            return {}, {}


def _program(pattern: str, flags: int) -> _Entry:
    """What ``re._compiler.compile`` computes before handing over to ``_sre.compile``."""
    tree = _parser.parse(pattern, flags)
    code = _compiler._code(tree, flags)
    names: dict[str, int] = dict(tree.state.groupdict)
    index: list[str | None] = [None] * tree.state.groups
    for name, i in names.items():
        index[i] = name
    return (
        flags | tree.state.flags,
        array.array(_WORD, code).tobytes(),
        tree.state.groups - 1,
        names,
        tuple(index),
    )


def _build(pattern: str, entry: _Entry) -> re.Pattern[str]:
    flags, program, groups, names, index = entry
    return _sre.compile(pattern, flags, array.array(_WORD, program).tolist(), groups, names, index)
