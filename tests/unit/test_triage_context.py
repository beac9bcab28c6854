"""Emergency triage: a neutral sentence added to an emergency the product catches must not hide it.

A fixed seeded sample of the dev sets' emergencies, each with the context probe's neutral sentences
(``bench/research/triage_context_probe.py``: a greeting, an apology for the hour, the distance to a hospital, an
occasion or a place, the writer's job, "giờ em phải làm sao?", "Nhà em không có xe.", "Cảm ơn bác sĩ.") added
before or after it, as the product runs (rules + model), all thirteen of them (round 30 fixed the quarrel just before,
"Hai vợ chồng vừa cãi nhau xong.", that once hid 56 of 1,500: docs/triage.md, "Round 30", "Neutral context"). The
sample is drawn from the dev sets up to dev78, so a set added later does not move it.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.triage import _triage, default_model, default_rules
from engine.triage.augment import CONTEXTS, applies, file_contexts, with_context
from engine.triage.evaluation import load_labelled
from engine.triage.model import DATA_DIR

SAMPLE, SEED = 200, 7
LAST_SET = 78  # the sample's sets: dev.jsonl, dev2.jsonl ... dev78.jsonl


def _set_number(path) -> int:
    digits = path.stem.removeprefix("dev")
    return int(digits) if digits else 1


@pytest.fixture(scope="module")
def caught() -> list[str]:
    """The sampled emergencies the product catches as written."""
    rules, model = default_rules(), default_model()
    model.warm_up(wait=True)
    emergencies = sorted(
        {
            row["text"]
            for path in sorted(DATA_DIR.glob("dev*.jsonl"))
            if _set_number(path) <= LAST_SET
            for row in load_labelled(path)
            if row["emergency"]
        }
    )
    sample = random.Random(SEED).sample(emergencies, SAMPLE)
    return [t for t in sample if _triage(t, rules, model).is_emergency]


def test_a_neutral_sentence_hides_no_emergency(caught):
    rules, model = default_rules(), default_model()
    assert len(caught) >= 0.97 * SAMPLE
    lost = [
        (name, with_context(text, vi, en, where))
        for name, vi, en, where in CONTEXTS
        for text in caught
        if not _triage(with_context(text, vi, en, where), rules, model).is_emergency
    ]
    assert not lost, lost


# Eighty sentences a patient adds (a job, a place, what the writer was doing, money, a plea), written blind by someone
# who never saw the rules and split in two (docs/triage.md, "Neutral context, second round"): each is added before and
# after a small fixed sample of the emergencies above, as the context probe's --sentences does. The first forty were
# worked on: at main before that round 728 of 33,680 placements lost the emergency on the probe's 500, and the gate is
# the exact count this sample reached after it, 3 (an exclude phrase the added sentence shares with the sign's clause
# when typed without a full stop: "… chảy máu ko cầm Nhà em không có bảo hiểm y tế.", "… theo nhịp tim Mong bác sĩ
# trả lời…", where "trả lời" folds to "lợi", the gums; "Bến Tre" read as "trẻ", a child). The other forty were read by
# nobody working on the rules and measured once after that round: 154 of 23,390 lost before it, 66 of 23,400 after;
# this sample loses 1 ("em ko co bao hiem j ca nhổ răng chảy máu ko cầm"), the gate.
ROOT = Path(__file__).resolve().parents[2]
BLIND_SAMPLE = 40


@pytest.mark.parametrize(
    ("name", "lost_at_most"),
    [("engine/triage/context_sentences.txt", 3), ("bench/data/triage_context_heldout.txt", 1)],
)
def test_sentences_written_blind_hide_no_emergency(caught, name, lost_at_most):
    rules, model = default_rules(), default_model()
    added = [
        with_context(text, vi, en, where)
        for _, vi, en, where in file_contexts(ROOT / name)
        for text in caught[:BLIND_SAMPLE]
        if applies(text, vi, en)
    ]
    lost = [text for text in added if not _triage(text, rules, model).is_emergency]
    assert len(lost) <= lost_at_most, lost
