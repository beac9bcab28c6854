"""Safety limits on KB spreadsheets, whoever sends them (Telegram upload, watched folder, ``medbot import``).

A file over a limit is rejected as a whole (a fatal problem naming the limit, in English and Vietnamese) and
the KB stays as it was. The limits are constants, not settings: each one protects the memory and time of
the processes that serve patients, and together they keep any import under 1 GB (measured by
``bench/bench_upload_safety.py``); raising one means re-measuring. ``ReadLimits`` carries them, so code
(and tests) can pass tighter ones.

* The file: at most ``MAX_FILE_BYTES`` (20 MB, also what a Telegram bot may download).
* The .xlsx archive, checked before anything is decompressed: parts adding up to at most
  ``MAX_UNCOMPRESSED_BYTES`` once decompressed, no part (over 1 MB) and not the whole compressed more than
  ``MAX_COMPRESSION_RATIO`` times, at most ``MAX_ZIP_MEMBERS`` parts.
* The table: at most ``MAX_ROWS`` rows holding any value (all sheets of a file together; blank rows are
  free), a value at most in column ``MAX_COLUMNS`` (empty formatted cells further right are ignored), a cell
  at most ``MAX_CELL_CHARS`` characters (Excel's own limit, so no genuine workbook breaks it), and
  ``MAX_TEXT_CHARS`` characters of text in all the cells of the file together (a shared string counts each
  time a cell uses it: that is the text the import will hold, fold and write).
* Shared strings (the text table of an .xlsx): at most ``MAX_SHARED_STRINGS`` entries and
  ``MAX_TEXT_CHARS`` characters in all.
* Hiding: an import may hide (deactivate, because the file lacks their codes) at most
  ``MASS_HIDE_MAX_ENTRIES`` entries of a role and at most ``MASS_HIDE_SHARE`` of its active entries; more
  needs an explicit confirmation (``large_hide``; ``kb_import.job``).
* Other uploads, for the channels that receive them: an article for the check (``MAX_ARTICLE_BYTES``) and a
  guideline document (``MAX_GUIDELINE_BYTES``); both are enforced where the document is read
  (``engine.verify``) and re-exported here so that every upload limit has one home.
* Reading and validating run in a child process (``engine.sandbox``) capped at ``PARSE_MEMORY_BYTES`` of
  address space and ``PARSE_TIMEOUT_S`` seconds; a child that runs out of either is reported as "could not
  be read safely".
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.untrusted import MB, ZipLimits
from engine.verify.article import MAX_ARTICLE_BYTES as MAX_ARTICLE_BYTES  # re-exported
from engine.verify.documents import MAX_DOCUMENT_BYTES

MAX_FILE_BYTES = 20 * MB
MAX_UNCOMPRESSED_BYTES = 250 * MB
MAX_COMPRESSION_RATIO = 100
MAX_ZIP_MEMBERS = 1000
MAX_ROWS = 200_000
MAX_COLUMNS = 1000
MAX_CELL_CHARS = 32_767
MAX_TEXT_CHARS = 50_000_000
MAX_SHARED_STRINGS = 1_000_000
PARSE_MEMORY_BYTES = 1024 * MB
PARSE_TIMEOUT_S = 300.0
MAX_PROBLEMS_KEPT = 1000  # problems of one import returned and stored; the rest are counted
MAX_SPREADSHEET_BYTES = MAX_FILE_BYTES  # a KB spreadsheet, whichever way it comes
MAX_GUIDELINE_BYTES = MAX_DOCUMENT_BYTES  # a guideline document (.md/.txt/.docx/.pdf)
MASS_HIDE_MAX_ENTRIES = 10
MASS_HIDE_SHARE = 0.20


def large_hide(hidden: int, active: int) -> bool:
    """Whether hiding ``hidden`` of a role's ``active`` entries needs an explicit confirmation: more than
    ``MASS_HIDE_MAX_ENTRIES`` entries, or more than ``MASS_HIDE_SHARE`` of them."""
    return hidden > MASS_HIDE_MAX_ENTRIES or hidden > MASS_HIDE_SHARE * active


@dataclass(frozen=True, slots=True)
class ReadLimits:
    max_file_bytes: int = MAX_FILE_BYTES
    max_uncompressed_bytes: int = MAX_UNCOMPRESSED_BYTES
    max_compression_ratio: float = MAX_COMPRESSION_RATIO
    max_zip_members: int = MAX_ZIP_MEMBERS
    max_rows: int = MAX_ROWS
    max_columns: int = MAX_COLUMNS
    max_cell_chars: int = MAX_CELL_CHARS
    max_text_chars: int = MAX_TEXT_CHARS
    max_shared_strings: int = MAX_SHARED_STRINGS
    memory_bytes: int = PARSE_MEMORY_BYTES
    timeout_s: float = PARSE_TIMEOUT_S

    @property
    def zip(self) -> ZipLimits:
        return ZipLimits(self.max_uncompressed_bytes, self.max_compression_ratio, self.max_zip_members)


DEFAULT_LIMITS = ReadLimits()
