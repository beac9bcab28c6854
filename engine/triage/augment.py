"""Training rows with neutral surroundings: the lesson that a setting, a job or a plea carries no label.

Blind writers keep hiding signs the rules know behind their surroundings (a setting, a job, a video, who is
telling). The model learns that such sentences say nothing about the label when it sees them added, at random, to
rows of both classes alike: ``augmented`` adds, for a seeded ``AUGMENT`` share of each class's rows, a copy with one
neutral sentence before or after it (the context probe's thirteen built-in sentences and the forty of
``context_sentences.txt``, written blind), in the row's language and diacritics state. Chosen by the backtest
(docs/triage.md, "Augmenting the model with surroundings (backtest)").
"""

from __future__ import annotations

import random
from pathlib import Path

from engine.text import strip_diacritics

SENTENCES_FILE = Path(__file__).parent / "context_sentences.txt"
SEED = 17

# (name, Vietnamese sentence, English sentence, where): a sentence a writer might add to any emergency without
# changing it. "before" sentences open the message, "after" sentences close it.
CONTEXTS: list[tuple[str, str, str, str]] = [
    ("greeting", "Dạ em chào bác sĩ ạ.", "Hi doctor, sorry to bother you.", "before"),
    ("late apology", "Xin lỗi nhắn giờ này.", "Sorry for messaging so late.", "before"),
    (
        "far from hospital",
        "Nhà em ở xa bệnh viện huyện 40 cây số.",
        "We live 40 km from the hospital.",
        "before",
    ),
    (
        "death anniversary",
        "Hôm nay nhà có đám giỗ ông nội.",
        "We have a memorial for grandpa today.",
        "before",
    ),
    ("back from pagoda", "Cả nhà vừa đi chùa về.", "We just got back from the temple.", "before"),
    ("quarrel just before", "Hai vợ chồng vừa cãi nhau xong.", "We just had a fight.", "before"),
    (
        "phone in hand",
        "Em đang lướt điện thoại thì nghe tiếng la.",
        "I was on my phone when I heard a shout.",
        "before",
    ),
    ("at work", "Em làm công nhân ở khu công nghiệp.", "I work at a factory.", "before"),
    ("market morning", "Sáng nay đi chợ về.", "We just got back from the market.", "before"),
    ("what to do", "Giờ em phải làm sao?", "What should I do?", "after"),
    ("scared", "Em sợ quá, run hết tay.", "I'm so scared, my hands are shaking.", "after"),
    ("no transport", "Nhà em không có xe.", "We don't have a car.", "after"),
    ("thanks", "Cảm ơn bác sĩ.", "Thank you doctor.", "after"),
]


def english(text: str) -> bool:
    """Which language a sentence is added in: plain ASCII with a common English word. Cruder than
    ``normalize.is_english`` (which decides how triage reads a message) and kept so: the augmented model and the
    context probe's measured figures were made with it."""
    words = text.lower().split()
    return all(ord(ch) < 128 for ch in text) and any(
        w in words for w in ("the", "my", "is", "i", "he", "she", "a")
    )


def with_context(text: str, vi: str, en: str, where: str) -> str:
    """The message with the sentence added, in the message's language, without marks when the message has none."""
    if english(text):
        sentence = en
    else:
        sentence = strip_diacritics(vi) if text == strip_diacritics(text) else vi
    return f"{sentence} {text}" if where == "before" else f"{text.rstrip()} {sentence}"


def file_contexts(path: Path) -> list[tuple[str, str, str, str]]:
    """Each line of a sentence file as two contexts (before, after), in the language it is written in."""
    contexts = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        sentence = line.strip()
        if not sentence:
            continue
        language = "en" if english(sentence) else "vi"
        for where in ("before", "after"):
            contexts.append((f"{language}-{number:02d}", sentence, sentence, where))
    return contexts


def applies(text: str, vi: str, en: str) -> bool:
    """A file sentence (vi == en) is added only to messages of its own language; built-in ones to every message."""
    return vi != en or english(text) == english(vi)


def augmented(
    rows: list[dict[str, object]], fraction: float, *, seed: int = SEED, sentences: Path = SENTENCES_FILE
) -> list[dict[str, object]]:
    """``rows`` plus, for a seeded ``fraction`` of each class's rows, a copy with one neutral sentence added before
    or after (the built-in sentences and the file's, in the row's language and diacritics state): the same share of
    both classes, so a sentence carries no label, only the lesson that surroundings do not matter."""
    if not fraction:
        return list(rows)
    contexts = CONTEXTS + file_contexts(sentences)
    rng = random.Random(seed)
    extra = []
    for label in (True, False):
        same = [r for r in rows if bool(r["emergency"]) is label]
        for row in rng.sample(same, round(fraction * len(same))):
            text = str(row["text"])
            _, vi, en, where = rng.choice([c for c in contexts if applies(text, c[1], c[2])])
            extra.append({**row, "text": with_context(text, vi, en, where)})
    return list(rows) + extra
