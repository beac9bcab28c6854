"""Spreadsheet readers, row validation, the KB import job, guideline import and scheduled jobs."""
