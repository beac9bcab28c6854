"""Checks on files that strangers or careless admins upload, made before any parser opens them.

* ``check_size``: the file's size in bytes against a cap.
* ``check_zip``: an Office file (.xlsx, .docx) is a zip archive; its central directory says how big every
  part is once decompressed. The sum of those sizes, the number of parts and the compression ratio (whole
  file, and each part bigger than ``RATIO_FLOOR``) are checked before a single part is decompressed. The
  declared sizes can be trusted for what we read: Python's ``zipfile`` (which openpyxl and python-docx use
  too) never returns more than a part's declared size and fails on a CRC mismatch. A ratio above a hundred
  is the mark of a "zip bomb"; real Office parts compress 3–20 times.

Every refusal raises ``UnsafeFile`` with a stable ``code``, an English ``message`` for logs and CLI reports,
and ``message_vi``, a Vietnamese sentence naming the limit, for the clinic staff who sent the file.

``file_sha256`` is the one file digest (import history, watched folder, model files).
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

MB = 1024 * 1024
RATIO_FLOOR = 1 * MB  # parts smaller than this may compress as well as they like


class UnsafeFile(ValueError):
    """The file breaks a safety limit; nothing was parsed."""

    def __init__(self, code: str, message: str, message_vi: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.message_vi = message_vi

    def __reduce__(self) -> tuple[type[UnsafeFile], tuple[str, str, str]]:
        return (type(self), (self.code, self.message, self.message_vi))


def vn_number(value: float) -> str:
    """A number the Vietnamese way: ``2000`` → ``2.000``, ``2.5`` → ``2,5``."""
    if float(value).is_integer():
        return f"{int(value):,}".replace(",", ".")
    return f"{value:,.1f}".replace(",", " ").replace(".", ",").replace(" ", ".")


def size_text(n_bytes: int) -> str:
    """``20971520`` → ``20 MB`` (binary megabytes, as file managers show them)."""
    return f"{vn_number(round(n_bytes / MB, 1))} MB"


@dataclass(frozen=True, slots=True)
class ZipLimits:
    max_uncompressed_bytes: int
    max_ratio: float = 100.0
    max_members: int = 1000


def check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise UnsafeFile(
            "file_too_large",
            f"the file is {size_text(size)}; the limit is {size_text(max_bytes)}",
            f"Tệp quá lớn: tối đa {size_text(max_bytes)} (tệp này {size_text(size)}).",
        )


def check_zip(source: Path | bytes, limits: ZipLimits) -> None:
    """Refuse an archive whose parts would decompress to too much, or too suspiciously much.

    Reads only the central directory. ``zipfile.BadZipFile`` (not a zip, or damaged) propagates for the
    caller's own "not a spreadsheet / not a document" message."""
    size = len(source) if isinstance(source, bytes) else source.stat().st_size
    opened = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source)
    with opened as zf:
        infos = zf.infolist()
    if len(infos) > limits.max_members:
        raise UnsafeFile(
            "zip_members",
            f"the archive has {len(infos)} parts; the limit is {limits.max_members}",
            f"Tệp chứa quá nhiều thành phần bên trong ({vn_number(len(infos))}): tối đa "
            f"{vn_number(limits.max_members)}.",
        )
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > RATIO_FLOOR and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise _ratio_error(info.filename, info.file_size / max(info.compress_size, 1), limits)
    if total > limits.max_uncompressed_bytes:
        raise UnsafeFile(
            "zip_too_large",
            f"the archive decompresses to {size_text(total)}; the limit is "
            f"{size_text(limits.max_uncompressed_bytes)}",
            f"Tệp quá lớn khi giải nén: tối đa {size_text(limits.max_uncompressed_bytes)} dữ liệu sau giải nén "
            f"(tệp này {size_text(total)}).",
        )
    if total > RATIO_FLOOR and total > limits.max_ratio * max(size, 1):
        raise _ratio_error("", total / max(size, 1), limits)


def _ratio_error(part: str, ratio: float, limits: ZipLimits) -> UnsafeFile:
    where = f" (part {part})" if part else ""
    return UnsafeFile(
        "zip_ratio",
        f"compression ratio {ratio:.0f}:1{where} is above the limit {limits.max_ratio:.0f}:1 (a zip bomb?)",
        f"Tệp bị nén với tỉ lệ bất thường ({vn_number(round(ratio))} lần, tối đa "
        f"{vn_number(limits.max_ratio)} lần), dấu hiệu của tệp độc hại; hệ thống không mở tệp này.",
    )


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read a megabyte at a time (an upload's identity in the import history, a model
    file's fingerprint)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
