"""The blind retrieval sets' same-question twins: the entries a reader judged to ask the same question as a removed
one are removed with it in the second "decline" run, and a set that names none is measured as before."""

from __future__ import annotations

from pathlib import Path

from bench.bench_retrieval_heldout import load_twins
from bench.retrieval_shapes import format_table


def test_the_twins_named_for_every_removed_entry_are_read(tmp_path: Path):
    (tmp_path / "same_question.tsv").write_text(
        "set\tremoved_code\tsame_question_codes\nRQ9\tT00001\tT00002 T00003\nRQ9\tT00004\t\nRQ9\tT00005\tT00006\n",
        encoding="utf-8",
    )
    assert load_twins(tmp_path) == {"T00002", "T00003", "T00006"}


def test_a_set_without_a_twins_file_has_none(tmp_path: Path):
    assert load_twins(tmp_path) == set()


def test_the_twins_column_shows_only_when_a_set_has_it():
    with_twins = {"questions": {"n": 400, "p@1": 0.6, "false_answers": 0.18, "false_answers_twins": 0.1}}
    without_twins = {"questions": {"n": 400, "p@1": 0.6, "false_answers": 0.18}}
    assert "f.ans.twin" in format_table(with_twins)
    assert "f.ans.twin" not in format_table(without_twins)
    assert "0.100" in format_table(with_twins).splitlines()[1]
