"""Offline MainDecisionAgent: what kind of message is this (no LLM needed).

``classify(text)`` returns an ``Intent``: ``input_type`` in ``INPUT_TYPES``, a confidence and a short reason.
Two layers:

1. a small statistical model — TF-IDF over character n-grams (2–5, word-bounded) and word uni/bigrams of the
   *folded* text (so diacritics do not matter), then logistic regression — trained on first use from
   ``engine/data/intents_train.jsonl`` (well under a second);
2. rules on top: a message in English is ``english``; the clinic-service intents of ``engine.intents``
   (booking, asking for a person, complaint, praise, clinic information, thanks, goodbye) are recognised by
   their own rules before anything else; medical vocabulary with a question cue or a symptom is a medical
   question whatever the model says; when the model hesitates between a medical question and anything else
   and the message has medical vocabulary, retrieval wins (a needless search costs little, a missed question
   costs a patient).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from engine.intents import SERVICE_INTENTS, looks_english, service_intent
from engine.text import fold_plain
from engine.textmodel import LinearTextModel

log = logging.getLogger("medbot.classify")

INPUT_TYPES = (
    "medical_question",
    "greeting",
    "topic_suggest",
    "statement",
    "nonsense",
    *SERVICE_INTENTS,
    "english",
)
TRAIN_FILE = Path(__file__).parent / "data" / "intents_train.jsonl"

_WS = re.compile(r"\s+")


def _words(*items: str) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(items) + r")\b")


# Medical vocabulary (folded). Kept broad but without words that fold onto common non-medical ones
# ("chưa"/"chữa", "đâu"/"đau", "sau"/"sâu", "nhớ"/"nhổ"...): those appear only inside unambiguous phrases.
_PAIN = r"(dau|nhuc|nhoi|buot)\s*(rang|dau|bung|nhuc|nhoi|buot|ham|loi|nuou|hong|nguc|lung|chan|tay|khop|mat|tai|da\s*day|qua|lam|am\s*i|nhieu)"
_MEDICAL = _words(
    r"rang",
    r"loi",
    r"nuou",
    r"nha\s*chu",
    r"nha\s*khoa",
    r"tuy",
    r"cao\s*rang",
    r"nieng",
    r"mac\s*cai",
    r"implant",
    r"tram",
    r"boc\s*su",
    r"ham\s*(tren|duoi|rang|trainer)",
    r"khop\s*can",
    r"mieng",
    r"tieu\s*duong",
    r"dai\s*thao\s*duong",
    r"duong\s*(huyet|mau)",
    r"insulin",
    r"metformin",
    r"hba1c",
    r"glucose",
    r"sglt2",
    r"glp",
    r"sulfonylurea",
    r"huyet\s*ap",
    r"mo\s*mau",
    r"cholesterol",
    r"thuoc",
    r"benh",
    _PAIN,
    r"(bi|hay|con|gay|hoi)\s*(dau|nhuc|sung|te|ngua|sot|ho|met)",
    r"sung",
    r"viem",
    r"nhiem",
    r"chay\s*mau",
    r"sot",
    r"ho\s*(khan|dom|keo\s*dai|nhieu|ra)",
    r"ngua",
    r"te\s*(bi|chan|tay|ban)",
    r"met\s*(moi|la)",
    r"khat\s*nuoc",
    r"tieu\s*(nhieu|dem|chay)",
    r"loet",
    r"mun",
    r"nhiet\s*mieng",
    r"e\s*buot",
    r"e\s*rang",
    r"hoi\s*mieng",
    r"kho\s*mieng",
    r"sau\s*rang",
    r"rang\s*sau",
    r"o\s*vang",
    r"lung\s*lay",
    r"kham",
    r"xet\s*nghiem",
    r"dieu\s*tri",
    r"chua\s*(tri|khoi|benh)",
    r"bien\s*chung",
    r"kieng",
    r"tiem",
    r"lieu",
    r"mang\s*thai",
    r"vac\s*xin|vaccine|chich\s*ngua",
    r"kinh\s*nguyet",
    r"ba\s*bau",
    r"thai",
    r"sieu\s*am",
    r"(moi|so)\s*sinh",
    r"sinh\s*(mo|thuong|con)",
    r"tre\s*(em|nho|so\s*sinh)",
    r"chi\s*dinh",
    r"phac\s*do",
    r"khang\s*sinh",
    r"ap\s*xe",
    r"mat\s*mo",
    r"suy\s*than",
    r"ban\s*chan",
    r"dinh\s*duong",
    r"vitamin",
    r"trai\s*cay",
    r"an\s*gi",
    r"uong\s*gi",
    r"tay\s*trang",
    r"nho\s*rang",
    r"moc\s*(rang|lech)",
    r"mat\s*ngu",
    r"nghien",
    r"ban\s*chai",
    r"chi\s*nha\s*khoa",
    r"suc\s*mieng",
    r"composite",
    r"gay\s*te",
    r"cbct",
    r"x\s*quang",
    r"can\s*nang",
    r"giam\s*can",
    r"tiem\s*(chung|phong)",
    r"ruou(\s*bia)?",
    r"tip\s*[12]",
    r"bau",
)
# Symptoms: describing one is an implicit question ("em bị đau răng mấy hôm nay").
_SYMPTOM = _words(
    _PAIN,
    r"(bi|hay|con|gay)\s*(dau|nhuc|sung|te|ngua|sot|ho|met|chay\s*mau)",
    r"sung",
    r"viem",
    r"chay\s*mau",
    r"sot",
    r"ngua",
    r"te\s*bi",
    r"loet",
    r"e\s*buot",
    r"e\s*rang",
    r"hoi\s*mieng",
    r"kho\s*mieng",
    r"khat\s*nuoc",
    r"tieu\s*(nhieu|dem|chay)",
    r"lung\s*lay",
    r"o\s*vang",
    r"mo\s*dan",
    r"lau\s*lanh",
    r"khong\s*lanh",
    r"sut\s*can",
    r"nhiet\s*mieng",
    r"sau\s*rang",
    r"rang\s*sau",
    r"tut\s*loi",
    r"hay\s*khat",
    r"rang\s*(den|vo|me)",
    r"(len|xuong)\s*xuong\s*that\s*thuong",
)
# Getting better is news, not a symptom ("răng tôi đỡ đau rồi").
_BETTER = re.compile(r"\b(do|het|bot|khoi)\s*(dau|nhuc|sung|ngua|sot|nhieu|hon)\b|\b(do|khoi)\s*roi\b")
# Personal history without a question: "tôi bị tiểu đường 10 năm", "chồng tôi đang tiêm insulin".
_HISTORY = re.compile(
    r"^((toi|em|minh|chau)|(me|bo|ba|ong|chong|vo|con|anh|chi)\s*(toi|em|minh))\s*"
    r"((bi|mac)\s*(benh\s*)?(tieu\s*duong|dai\s*thao\s*duong|huyet\s*ap|cao\s*huyet\s*ap|mo\s*mau)[\w\s]*"
    r"|(dang|da|van)\s*(uong|tiem|dung|dieu\s*tri|nieng|boc|tram)[\w\s]*"
    r"|nam\s*nay\s*\d+\s*tuoi|\d+\s*tuoi)$"
)
_GREETING_START = re.compile(r"^(xin\s*)?(chao|hi|hello|alo|he\s*lo)\b")
# Question cues, looked for per sentence: "không"/"chưa" ask only at the end ("tôi chưa đi khám" is news).
_QUESTION = re.compile(
    r"\b(sao|gi|nao|bao\s*lau|bao\s*nhieu|the\s*nao|lam\s*sao|co\s*nen|nen\s*(lam|an|uong|dung)|duoc\s*khong|"
    r"tai\s*sao|vi\s*sao|ra\s*sao|la\s*gi|hay\s*khong|o\s*dau|khi\s*nao|bao\s*gio|"
    r"cho\s*(em|toi|minh|chau|con)?\s*hoi|hoi\s*ve|tu\s*van|giup|muon\s*(biet|hoi)|co\s*phai|phai\s*khong|"
    r"may\s*tuoi|lieu)\b|\b(khong|ko|k|chua|chang)\s*(a|ha|vay|nhi|nhe|the|ba|bac\s*si|ban|ah)?\s*$"
)
_SENTENCE = re.compile(r"[.?!;\n,:]+")


def has_question(text: str) -> bool:
    if "?" in text:
        return True
    return any(_QUESTION.search(fold_plain(part)) for part in _SENTENCE.split(text) if part.strip())


_NON_MEDICAL_NOUNS = _words(
    r"thoi\s*tiet",
    r"gia\s*vang",
    r"bitcoin",
    r"xo\s*so",
    r"bong\s*da",
    r"world\s*cup",
    r"doi\s*bong",
    r"gia\s*xang",
    r"chuyen\s*cuoi",
    r"bai\s*tho",
    r"bai\s*hat",
    r"code",
    r"python",
    r"dich\s*sang",
)
_TOPIC = _words(
    r"chu\s*de",
    r"menu",
    r"muc\s*luc",
    r"danh\s*muc",
    r"goi\s*y",
    r"cau\s*hoi\s*(thuong\s*gap|mau|pho\s*bien)",
    r"danh\s*sach\s*(cac\s*)?cau\s*hoi",
)
# A folded token that can be a Vietnamese syllable: onset, vowel nucleus, coda.
_SYLLABLE = re.compile(
    r"^(ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnpqrstvx])?(uye|uya|oai|oay|uoi|ieu|uou|yeu|oeo|"
    r"[aeiouy]{1,2})(ng|nh|ch|[cmnpt])?$"
)


_CLOSINGS = ("thanks", "goodbye")  # recognised by ``engine.intents``' rules only


@dataclass(slots=True)
class Intent:
    input_type: str
    confidence: float
    reason: str
    probabilities: dict[str, float] | None = None


class IntentClassifier:
    """TF-IDF (char + word n-grams on folded text) + logistic regression, trained from a JSONL file."""

    def __init__(self, train_file: Path = TRAIN_FILE) -> None:
        rows = [
            json.loads(line) for line in train_file.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
        texts = [fold_plain(r["text"]) for r in rows]
        self.model = LinearTextModel(texts, [r["label"] for r in rows], c=8.0, word_tokens=r"(?u)\b\w+\b")
        self.classes: list[str] = list(self.model.classes)
        self.n_train = len(rows)

    def probabilities(self, folded: str) -> dict[str, float]:
        probs = self.model.proba([folded])[0]
        return {c: float(p) for c, p in zip(self.classes, probs, strict=True)}


_model: IntentClassifier | None = None
_lock = threading.Lock()


def get_classifier() -> IntentClassifier:
    """The process-wide classifier, trained on first use (thread-safe)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                _model = IntentClassifier()
    return _model


def _syllable_share(folded: str) -> float:
    tokens = re.findall(r"[a-z]+", folded)
    if not tokens:
        return 0.0
    return sum(1 for t in tokens if _SYLLABLE.match(t)) / len(tokens)


def looks_medical(text: str) -> bool:
    """Medical vocabulary present (folded match)."""
    return bool(_MEDICAL.search(fold_plain(text)))


def classify(text: str) -> Intent:
    """Classify one user message offline."""
    folded = fold_plain(text)
    if not re.search(r"[a-z]", folded):
        return Intent("nonsense", 0.99, "không có chữ cái nào")
    if looks_english(text) and _syllable_share(folded) < 0.7:
        return Intent("english", 0.95, "tin nhắn bằng tiếng Anh")
    probs = get_classifier().probabilities(folded)
    # Thanks and goodbye are closed sets of words that the rules below know (every training example of them is
    # one): the model's guess of either alone comes from look-alike letters ("tầm soát ai", who should be
    # screened?, folds near "tạm biệt") and would end the conversation. Its best other class is taken instead.
    best = max((c for c in probs if c not in _CLOSINGS), key=probs.__getitem__)
    conf = probs[best]
    medical = bool(_MEDICAL.search(folded))
    question = has_question(text)
    symptom = bool(_SYMPTOM.search(folded)) and not _BETTER.search(folded)
    n_words = len(folded.split())
    # A long message with a medical question is a patient describing a problem, whatever else it mentions.
    long_medical = n_words > 25 or (n_words > 12 and medical and question)
    service = None if long_medical else service_intent(folded, question=question, symptom=symptom)
    if service is not None:
        return Intent(service[0], max(conf, 0.9), service[1], probs)

    if not question and not symptom and _HISTORY.match(folded):
        return Intent("statement", max(conf, 0.8), "thông tin bệnh sử, không phải câu hỏi", probs)
    if not medical and n_words <= 12 and _NON_MEDICAL_NOUNS.search(folded):
        return Intent("nonsense", max(conf, 0.8), "ngoài phạm vi y khoa", probs)
    if _TOPIC.search(folded) and not symptom and n_words <= 12:
        return Intent("topic_suggest", max(conf, 0.8), "yêu cầu xem chủ đề / gợi ý", probs)
    if not medical and best != "greeting" and _GREETING_START.match(folded) and n_words <= 8:
        return Intent("greeting", max(conf, 0.7), "lời chào / cảm ơn", probs)
    if best != "medical_question" and n_words >= 15 and (question or medical):
        # Long chatty messages are patients describing a problem, even without a medical word we know.
        return Intent(
            "medical_question", max(0.7, probs["medical_question"]), "tin nhắn dài, có câu hỏi", probs
        )
    if medical and best != "medical_question":
        if question or symptom:
            why = "từ vựng y khoa + câu hỏi" if question else "mô tả triệu chứng"
            return Intent("medical_question", max(0.8, probs["medical_question"]), why, probs)
        if conf < 0.75:  # in doubt: retrieval costs little, a missed question costs a patient
            return Intent(
                "medical_question", probs["medical_question"], "có từ vựng y khoa, ưu tiên tra cứu", probs
            )
    if best == "medical_question" and not medical and _syllable_share(folded) < 0.5:
        return Intent("nonsense", 0.7, "không giống tiếng Việt", probs)
    reasons = {
        "medical_question": "câu hỏi y khoa",
        "greeting": "lời chào / cảm ơn",
        "topic_suggest": "yêu cầu xem chủ đề",
        "statement": "thông tin cá nhân, không phải câu hỏi",
        "nonsense": "không rõ nghĩa hoặc ngoài phạm vi",
        "booking": "muốn đặt lịch khám",
        "human": "muốn nói chuyện với người của phòng khám",
        "complaint": "phàn nàn",
        "praise": "lời khen",
        "clinic_info": "hỏi thông tin phòng khám",
        "thanks": "lời cảm ơn",
        "goodbye": "lời chào tạm biệt",
    }
    return Intent(best, conf, reasons[best] + " (mô hình thống kê)", probs)
