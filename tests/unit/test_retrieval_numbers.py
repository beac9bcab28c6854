"""Numbers with units in the ranking (``engine.retrieval.numbers``): siblings that differ by an age, a week of
pregnancy, a dose or a count, with and without diacritics."""

from __future__ import annotations

from engine.retrieval.fusion import Fused
from engine.retrieval.numbers import conflicts, quantities, rerank


def test_the_same_age_in_other_units_agrees_and_another_age_conflicts():
    assert not conflicts(quantities("con 24 tháng"), quantities("Trẻ 2 tuổi biếng ăn"))
    assert conflicts(quantities("con 2 tháng"), quantities("Trẻ 2 tuổi biếng ăn"))
    assert conflicts(quantities("con 2 thang"), quantities("Tre 2 tuoi bieng an"))  # no diacritics


def test_a_bound_or_a_range_in_the_title_holds_the_messages_number():
    assert not conflicts(quantities("bé 3 tháng"), quantities("Trẻ dưới 6 tháng có nên uống nước?"))
    assert not conflicts(quantities("bé 30 tháng"), quantities("Trẻ 2-3 tuổi ngủ bao nhiêu?"))
    assert conflicts(quantities("bé 5 tuổi"), quantities("Trẻ 2-3 tuổi ngủ bao nhiêu?"))


def test_units_of_another_kind_and_texts_without_numbers_never_conflict():
    assert not conflicts(quantities("uống 5 ml"), quantities("Liều 5 mg có được không"))
    assert not conflicts(quantities("bé bị sốt"), quantities("Trẻ 2 tuổi sốt"))
    assert conflicts(quantities("bầu 12 tuần"), quantities("Mang thai 32 tuần bị phù chân"))
    assert conflicts(quantities("sốt 39 độ"), quantities("Sốt 38 độ có cần uống thuốc"))
    assert conflicts(quantities("tiêm mũi thứ hai"), quantities("Sau mũi 3 bị sốt"))


def test_a_close_runner_up_with_the_messages_age_ranks_first():
    ranked = [Fused(1, 0.90), Fused(2, 0.85), Fused(3, 0.40)]
    titles = ["Lịch tiêm phòng cho trẻ 2 tuổi", "Lịch tiêm phòng cho trẻ 2 tháng", "Tiêm phòng cúm"]
    out, moved = rerank(ranked, "con em 2 tháng cần tiêm những mũi gì", titles, window=3, margin=0.15)
    assert out[0].score - out[1].score > 0  # the new top leads the former by what the penalty left
    assert [f.entry_id for f in out] == [2, 1, 3] and moved == 1


def test_nothing_moves_without_a_conflict_or_when_the_runner_up_is_far_behind():
    ranked = [Fused(1, 0.90), Fused(2, 0.85)]
    titles = ["Lịch tiêm phòng cho trẻ 2 tuổi", "Lịch tiêm phòng cho trẻ 2 tháng"]
    assert rerank(ranked, "con 2 tuổi cần tiêm gì", titles)[1] == 0
    assert rerank(ranked, "con cần tiêm gì", titles)[1] == 0
    far = [Fused(1, 0.90), Fused(2, 0.30)]
    assert rerank(far, "con 2 tháng cần tiêm gì", titles, margin=0.15)[1] == 0


def test_half_units_and_days_written_as_hom_are_read():
    assert not conflicts(quantities("be 3 tuoi ruoi hay non"), quantities("Trẻ 3,5 tuổi bị nôn"))
    assert not conflicts(
        quantities("con 2 tháng, 3 hôm chưa ị"), quantities("Bé rặn đỏ mặt 3 ngày không đi ngoài")
    )
    assert not conflicts(quantities("con 4 tháng rưỡi bỏ bú đêm"), quantities("Bé 4 tháng tuổi bỏ bú đêm"))
    assert conflicts(quantities("be 5 thang ruoi di ngoai co mau"), quantities("Bé 3 tháng rưỡi đi ngoài"))
