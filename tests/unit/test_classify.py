"""Offline routing on the independent labelled evaluation sets: ``intents_eval.jsonl`` (the routing set this
project started with; its thanks and goodbyes now have intents of their own) and ``intents_heldout.jsonl``
(319 messages written for issue 19, every intent, never trained on: ``python -m bench intents``)."""

import json
from pathlib import Path

import numpy as np
import pytest

from engine.classify import INPUT_TYPES, TRAIN_FILE, IntentClassifier, classify, get_classifier
from engine.text import fold_plain

DATA = Path(__file__).parents[1] / "data"


def rows_of(name: str) -> list[dict[str, str]]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


ROWS = rows_of("intents_eval.jsonl")
HELDOUT = rows_of("intents_heldout.jsonl")
TRAIN = {
    json.loads(line)["text"].strip().lower() for line in TRAIN_FILE.read_text(encoding="utf-8").splitlines()
}


def test_eval_set_is_independent_and_large_enough():
    assert len(ROWS) >= 150
    assert not [r["text"] for r in ROWS if r["text"].strip().lower() in TRAIN]
    assert {r["label"] for r in ROWS} == {
        "medical_question",
        "greeting",
        "topic_suggest",
        "statement",
        "nonsense",
        "thanks",
        "goodbye",
        "clinic_info",
    }


def test_heldout_set_covers_every_intent_and_is_not_trained_on():
    assert len(HELDOUT) >= 300
    assert {r["label"] for r in HELDOUT} == set(INPUT_TYPES)
    assert not [r["text"] for r in HELDOUT if r["text"].strip().lower() in TRAIN]


def test_heldout_accuracy_and_no_request_mistaken_for_something_else():
    predicted = [(r, classify(r["text"]).input_type) for r in HELDOUT]
    accuracy = sum(p == r["label"] for r, p in predicted) / len(HELDOUT)
    assert accuracy >= 0.97, [(r["text"], p) for r, p in predicted if p != r["label"]]
    requests = {"booking", "human", "complaint", "clinic_info", "english", "medical_question"}
    missed = [(r["text"], p) for r, p in predicted if r["label"] in requests and p != r["label"]]
    assert missed == []


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("cho tôi đặt lịch khám sáng thứ 7 nhé", "booking"),
        ("cho toi dat lich kham sang thu 7 nhe", "booking"),
        ("cho tôi gặp bác sĩ", "human"),
        ("tôi muốn nói chuyện với người thật, ko phải bot", "human"),
        ("toi muon noi chuyen voi nguoi that, ko phai bot", "human"),
        ("tôi chờ hai tiếng rồi mà chưa được khám", "complaint"),
        ("toi cho hai tieng roi ma chua duoc kham", "complaint"),
        ("phòng khám mở cửa mấy giờ", "clinic_info"),
        ("phong kham mo cua may gio", "clinic_info"),
        ("có nhận bảo hiểm y tế không", "clinic_info"),
        ("cảm ơn", "thanks"),
        ("tạm biệt", "goodbye"),
        ("bot tuyệt vời quá", "praise"),
        ("my tooth hurts, what should I do", "english"),
        # … and what must stay a medical question
        ("có cần gặp bác sĩ không khi răng khôn sưng", "medical_question"),
        ("Bao lâu nên đi khám răng một lần?", "medical_question"),
        ("Tiêm insulin ở đâu và tiêm thế nào cho đúng?", "medical_question"),
        ("người già nhổ răng có sao không", "medical_question"),
        ("môi rất tê sau khi nhổ răng", "medical_question"),
        ("cảm ơn bác sĩ, cho em hỏi răng khôn mọc lệch có phải nhổ không", "medical_question"),
    ],
)
def test_requests_about_the_clinic_with_and_without_diacritics(text, intent):
    assert classify(text).input_type == intent


def test_long_medical_messages_stay_medical_whatever_else_they_mention():
    text = (
        "Chào bác sĩ, tôi đã đặt lịch khám nhưng chưa đến ngày, giờ răng khôn sưng to, há miệng khó, "
        "có cần uống thuốc gì trước không ạ?"
    )
    assert classify(text).input_type == "medical_question"


def test_routing_accuracy_and_every_medical_question_to_retrieval():
    predicted = [(r, classify(r["text"])) for r in ROWS]
    accuracy = sum(p.input_type == r["label"] for r, p in predicted) / len(ROWS)
    missed = [
        r["text"] for r, p in predicted if r["label"] == "medical_question" and p.input_type != r["label"]
    ]
    assert missed == []
    assert accuracy >= 0.95, [(r["text"], p.input_type) for r, p in predicted if p.input_type != r["label"]]


def test_classifier_trains_on_the_shipped_examples():
    # Training time is a benchmark figure (bench/bench_ask.py), not a timed test.
    assert IntentClassifier().n_train >= 300


def test_confidence_and_reason():
    intent = classify("rang khon moc lech co can nho khong")
    assert intent.input_type == "medical_question" and 0 < intent.confidence <= 1 and intent.reason


def test_fast_probabilities_are_the_pipeline_probabilities():
    """The per-message path skips sklearn's validation but must give the trained pipeline's numbers, on
    messages it was not trained on (the routing evaluation set)."""
    model = get_classifier()
    assert model.model.fast  # the constructor's own check passed, so messages take the fast path
    texts = [fold_plain(r["text"]) for r in ROWS]
    assert np.allclose(
        model.model.fast_proba(texts), model.model.pipeline.predict_proba(texts), rtol=0, atol=1e-9
    )
