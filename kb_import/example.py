"""The template's example row (``kb_import.template``): what it says, and how validation recognises it.

The example shows a clinic how to fill a row; it must never reach the KB. Its code, ``VD-MẪU`` (“ví dụ
mẫu”), is reserved: no entry can have it, so it can never overwrite one. Validation skips a row with that
code (compared folded: ``vd-mau``, ``VD MẪU``) with a warning naming the row, and so also a row whose
question and answer are the example's word for word, which is how templates written before the reserved code
existed are recognised (their example carried the real-looking code ``NK-001``); that code is then left alone,
neither overwritten nor hidden.
"""

from __future__ import annotations

from kb_import.headers import fold_key

EXAMPLE_CODE = "VD-MẪU"
EXAMPLE = {
    "topic": "Răng nhạy cảm",
    "subtopic": "Ê buốt",
    "code": EXAMPLE_CODE,
    "question": "Răng bị ê buốt khi uống nước lạnh là bị gì?",
    "answer": (
        "Ê buốt khi uống nước lạnh thường do men răng mòn hoặc nướu tụt làm lộ ngà răng. Bạn nên chải răng "
        "bằng bàn chải lông mềm, dùng kem đánh răng dành cho răng nhạy cảm và hạn chế đồ quá chua. Nếu ê buốt "
        "kéo dài trên hai tuần, đau tự nhiên hoặc đau về đêm, hãy đến nha sĩ để được khám."
    ),
    "keywords": "ê buốt; e buot; buốt răng; nhạy cảm ngà; răng ê khi uống lạnh",
    "explanation": "",
    "urgent": "",
}
_EXAMPLE_KEY = fold_key(EXAMPLE_CODE)


def is_example_code(code: str) -> bool:
    return bool(code) and fold_key(code) == _EXAMPLE_KEY


def is_example(code: str, question: str, answer: str) -> bool:
    """Whether a row is the template's example (by its reserved code, or by its exact text)."""
    return is_example_code(code) or (question == EXAMPLE["question"] and answer == EXAMPLE["answer"])
