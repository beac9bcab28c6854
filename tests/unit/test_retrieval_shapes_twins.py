"""faq-val's same-question twins in the shapes' figures: a twin of the gold at the top counts right in the
"twins" columns only, and the twins file is read as the annotators wrote it."""

from __future__ import annotations

from pathlib import Path

from bench.retrieval_shapes import QueryOutcome, format_table, load_twin_map, right_or_twin, twin_metrics

TWINS = {"T1": {"T2", "T3"}}


def outcome(gold: str, top: str, score: float = 0.9) -> QueryOutcome:
    return QueryOutcome(query_id=gold + top, gold=gold, rank=1 if top == gold else None, score=score, top=top)


def test_the_twins_file_maps_each_gold_to_its_twins(tmp_path: Path):
    path = tmp_path / "twins.tsv"
    path.write_text("set\tremoved_code\tsame_question_codes\nFAQ\tT1\tT2 T3\nFAQ\tT4\t\n", encoding="utf-8")
    assert load_twin_map(path) == {"T1": {"T2", "T3"}}
    assert load_twin_map(tmp_path / "absent.tsv") == {}


def test_a_twin_of_the_gold_at_the_top_counts_right_only_in_the_twin_figures():
    assert right_or_twin(outcome("T1", "T1"), TWINS)
    assert right_or_twin(outcome("T1", "T2"), TWINS)
    assert not right_or_twin(outcome("T1", "T9"), TWINS)
    assert not right_or_twin(outcome("T4", "T2"), TWINS)  # T2 is T1's twin, not T4's
    assert not right_or_twin(outcome("T1", ""), TWINS)  # nothing found


def test_precision_with_twins_counts_answered_searches_only():
    outs = [outcome("T1", "T1"), outcome("T1", "T2"), outcome("T1", "T9"), outcome("T1", "T3", score=0.2)]
    m = twin_metrics(outs, TWINS, 0.5)
    assert m["p@1_twins"] == 0.75  # three of four tops are the gold or a twin
    assert m["precision_answered_twins"] == round(2 / 3, 4)  # the declined twin does not count


def test_the_twin_columns_show_beside_the_existing_ones():
    table = {"questions": {"n": 702, "p@1": 0.6, "precision_answered": 0.9, "precision_answered_twins": 0.95}}
    head, line = format_table(table).splitlines()
    assert "prec.ans" in head and "prec.twin" in head
    assert "0.950" in line
