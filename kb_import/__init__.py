"""Spreadsheet readers, row validation, the KB import job and its report, KB export/undo/review, guideline
import, and the KB's background jobs (``jobs``: embedding backfill, watched folder). Imports only ``engine``
and ``db``."""
