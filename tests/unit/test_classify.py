"""Offline routing on the independent labelled evaluation set."""

import json
from pathlib import Path

from engine.classify import TRAIN_FILE, IntentClassifier, classify

EVAL = Path(__file__).parents[1] / "data" / "intents_eval.jsonl"
ROWS = [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_eval_set_is_independent_and_large_enough():
    train = {
        json.loads(line)["text"].strip().lower()
        for line in TRAIN_FILE.read_text(encoding="utf-8").splitlines()
    }
    assert len(ROWS) >= 150
    assert not [r["text"] for r in ROWS if r["text"].strip().lower() in train]
    assert {r["label"] for r in ROWS} == {
        "medical_question",
        "greeting",
        "topic_suggest",
        "statement",
        "nonsense",
    }


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
    import numpy as np

    from engine.classify import fold, get_classifier

    model = get_classifier()
    assert model.model.fast  # the constructor's own check passed, so messages take the fast path
    texts = [fold(r["text"]) for r in ROWS]
    assert np.allclose(model.model.fast_proba(texts), model.model.pipeline.predict_proba(texts), rtol=0, atol=1e-9)
