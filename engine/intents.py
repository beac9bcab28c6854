"""Messages about the clinic rather than about health, recognised offline on the folded text (so with or
without diacritics): booking, asking for a person, complaint, praise, clinic information, thanks, goodbye —
and a message written in English.

``service_intent(folded, question=…, symptom=…)`` returns ``(intent, reason)`` or None. The rules are the
first layer of ``engine.classify`` and win over the statistical model: an appointment request must never be
read as a statement ("đã ghi nhận") nor a request for a person as a greeting. A message that describes a
symptom is left to the medical path (a complaint about pain after an extraction needs the medical answer),
except a booking request, which says what it wants whatever else it mentions.

``clinic_topic(folded)`` says which fact a clinic-information message asks for. ``looks_english(text)`` is
true for a sentence of common English words (and no Vietnamese diacritics).

Each intent is its own route in the medical flow (``engine.flows``): a later staff handoff re-points
``human`` and ``complaint`` at its own node without touching the classifier.
"""

from __future__ import annotations

import re

SERVICE_INTENTS = ("booking", "human", "complaint", "praise", "clinic_info", "thanks", "goodbye")


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")


_ME = r"(?:toi|em|minh|tui|to|chau|con|anh|chi|co|chu|bac|me|bo|ba|vo|chong)"
_BOOKING = _rx(
    r"dat\s*(?:lich|hen|cho|kham|truoc|slot)",
    r"(?:hen|xep|lay|giu|sap)\s*(?:lich|gio|so|cho|ngay)(?:\s*kham)?",
    r"(?<!lich )hen\s*(?:kham|tai\s*kham)",
    r"lich\s*(?:hen|kham\s*(?:trong|con|cua|ngay|tuan|sang|chieu|toi|thu))",
    r"dang\s*ky\s*(?:kham|lich|nieng|nho|lay|tay|tram|cay|lam)",
    r"book(?:ing)?",
    r"(?:doi|huy|chuyen|lui|doi\s*lai)\s*lich",
    r"con\s*(?:lich|slot|suat)",
    r"con\s*cho\s*trong",
    r"(?:muon|xin)\s*(?:den|toi|qua|ghe|di)\s*kham(?:\s*(?:vao|luc|sang|chieu|toi|thu|chu\s*nhat|mai|ngay))",
)
_HUMAN = _rx(
    r"nguoi\s*that",
    r"(?:khong|ko|k|chang)\s*phai\s*(?:la\s*)?(?:bot|may|robot|ai)",
    r"(?:noi\s*chuyen|nc|chat|trao\s*doi|tro\s*chuyen|ket\s*noi|lien\s*lac|gap)\s*(?:truc\s*tiep\s*)?"
    r"(?:voi|cho)?\s*(?:bac\s*si|bs|nha\s*si|nhan\s*vien|nv|le\s*tan|tu\s*van\s*vien|admin|quan\s*ly|nguoi)"
    r"(?!\s*(?:co|nao|thi|ve|lieu)\b)",
    r"(?:chuyen|noi|ket\s*noi)\s*(?:may|giup)?\s*(?:" + _ME + r"\s*)?(?:cho|sang|qua|voi)\s*"
    r"(?:bac\s*si|nhan\s*vien|nguoi|tu\s*van\s*vien)",
    r"(?:nguoi|nhan\s*vien|bac\s*si|ai)\s*(?:nao\s*)?(?:dang\s*)?truc\s*(?:khong|ko|k|a|$)",
    r"(?:goi|call)\s*(?:lai\s*)?(?:cho|giup)\s*" + _ME,
    r"(?:co\s*)?ai\s*(?:o\s*)?(?:do|day)\s*(?:khong|ko|k)",
    r"tu\s*van\s*vien",
)
# A request verb in front of "gặp bác sĩ" ("cho tôi gặp bác sĩ"), unlike a question about whether to see one
# ("có cần gặp bác sĩ không" is medical).
_HUMAN_REQUEST = re.compile(
    r"^(?:cho|cho\s*" + _ME + r"|" + _ME + r"\s*(?:muon|can|xin)|xin|lam\s*on|muon|can|alo)\b"
    r"|\b(?:duoc\s*khong|dc\s*khong|di|nhe|nha|voi|duoc\s*ko|ngay|lien)\s*$"
)
_WHETHER = re.compile(r"\b(?:co\s*can|co\s*nen|khi\s*nao|luc\s*nao|bao\s*gio|lieu)\b")
_COMPLAINT = _rx(
    r"cho\s*(?:doi\s*)?(?:lau|qua\s*lau|mai|ca\s*tieng|\d+\s*(?:tieng|gio|phut)|hai\s*tieng|ba\s*tieng|nua\s*ngay)",
    r"khieu\s*nai",
    r"phan\s*(?:anh|nan)",
    r"buc\s*(?:minh|xuc|boi)",
    r"that\s*vong",
    r"(?:dich\s*vu|phong\s*kham|pk|bot|tra\s*loi|phuc\s*vu|cach\s*lam\s*viec)\s*(?:qua\s*|rat\s*|that\s*)?te\b",
    r"te\s*(?:hai|that\s*su)",
    r"thai\s*do\s*(?:cua\s*)?(?:nhan\s*vien|le\s*tan|bac\s*si|bs|nv)?\s*(?:qua\s*|rat\s*|hoi\s*)?"
    r"(?:te|kem|khong\s*tot|lon\s*xon|coc|hach\s*dich|kho\s*chiu)",
    r"(?:nhan\s*vien|le\s*tan|bac\s*si|bs|nv)\s*(?:qua\s*|rat\s*)?(?:coc\s*can|hach\s*dich|thieu\s*ton\s*trong|cau\s*tha|vo\s*le)",
    r"(?:khong|ko|k|chang)\s*(?:hai\s*long|chuyen\s*nghiep|ai\s*(?:tra\s*loi|nghe\s*may))",
    r"(?:lam\s*an|lua\s*dao|chat\s*chem|gian\s*doi|an\s*cuop)",
    r"(?:bot|ban|may)\s*(?:ngu|vo\s*dung|do\s*hoi|kem|toi\s*te)",
    r"tra\s*loi\s*(?:sai|linh\s*tinh|vo\s*van|khong\s*dung|nhu\s*khong|lung\s*tung)",
    r"(?:tinh|lay|thu)\s*(?:tien\s*)?(?:sai|qua\s*dat|dat\s*qua|chat)",
    r"goi\s*(?:mai|hoai|nhieu\s*lan)\s*(?:khong|ko|k|chang)\s*(?:ai\s*)?(?:nghe|bat\s*may)",
    r"(?:hen|lich)\s*(?:roi\s*)?ma\s*(?:van\s*)?(?:phai\s*)?cho",
    r"phuc\s*vu\s*(?:qua\s*|rat\s*)?(?:te|kem|cham|lau)",
)
_PRAISE = _rx(
    r"tuyet\s*(?:voi|qua|lam|that)",
    r"(?:gioi|hay|tot|xin|dinh|ok)\s*(?:qua|lam|that|ghe)",
    r"(?:rat|qua|that|cuc\s*ky|sieu)\s*(?:huu\s*ich|tot|tan\s*tinh|chu\s*dao|nhiet\s*tinh|de\s*hieu|chuyen\s*nghiep|hai\s*long)",
    r"huu\s*ich\s*(?:qua|lam|that)",
    r"(?:hai\s*long|an\s*tam)\s*(?:lam|qua|voi|ve)",
    r"(?:tan\s*tinh|chu\s*dao|nhiet\s*tinh|chuyen\s*nghiep|de\s*thuong|de\s*hieu)\s*(?:qua|lam|that)?",
    r"10\s*diem|5\s*sao|khen",
    r"(?:bot|ban|tro\s*ly|phong\s*kham|bac\s*si|bs)\s*(?:rat\s*|qua\s*|that\s*)?(?:gioi|tot|tuyet)",
)
_THANKS = re.compile(
    r"^(?:(?:vang|da|ok|oke|okay|uh|u|a|thoi|roi|duoc\s*roi|hieu\s*roi|ro\s*roi)\s*)*"
    r"(?:cam\s*on|cmon|camon|thank(?:s|\s*you|\s*u)?|tks|thx|ty|cam\s*ta|biet\s*on)\b"
)
_THANKS_ANY = _rx(r"cam\s*on", r"thank(?:s|\s*you|\s*u)?", r"tks", r"thx", r"biet\s*on")
_GOODBYE = _rx(
    r"tam\s*biet",
    r"bye(?:\s*bye)?",
    r"goodbye",
    r"hen\s*gap\s*lai",
    r"(?:thoi|the\s*thoi)\s*(?:nhe|nha|chao|minh\s*di|em\s*di|toi\s*di)",
    r"(?:em|minh|toi)\s*(?:xin\s*phep\s*)?(?:di|off|nghi)\s*(?:day|nhe|nha)",
    r"xin\s*phep\s*(?:di|off|nghi)",
)
# Also a greeting's ending ("xin chào bác sĩ, chúc một ngày tốt lành"): goodbye only when it does not open so.
_GOODBYE_SOFT = _rx(
    r"chao\s*(?:nhe|nha|tam\s*biet)",
    r"(?:chuc|chuc\s*ban|chuc\s*bac\s*si)\s*(?:ngu\s*ngon|mot\s*ngay\s*tot\s*lanh)",
    r"ngu\s*ngon",
)
_HELLO = re.compile(r"^(?:xin\s*)?chao\s*(?:ban|bac\s*si|bs|em|anh|chi|ca\s*nha|buoi)\b")
_HOURS = _rx(
    r"gio\s*(?:mo\s*cua|lam\s*viec|dong\s*cua|kham|hanh\s*chinh)",
    r"(?:mo|dong)\s*cua",
    r"may\s*gio\s*(?:mo|dong|lam|nghi|kham|thi\s*(?:mo|dong|nghi))",
    r"lam\s*(?:viec\s*)?(?:den\s*)?may\s*gio",
    r"(?:lam\s*viec|kham|lam)\s*(?:vao\s*)?(?:thu\s*(?:\d|bay|sau)|chu\s*nhat|ngay\s*le|cuoi\s*tuan|buoi\s*toi|tet)",
    r"(?:thu\s*(?:\d|bay)|chu\s*nhat|ngay\s*le|cuoi\s*tuan|buoi\s*toi|tet)\s*(?:co\s*)?(?:lam|mo|kham|nghi)",
    r"nghi\s*(?:thu|ngay|chu\s*nhat|le|tet)",
)
_ADDRESS = _rx(
    r"dia\s*chi",
    r"(?:phong\s*kham|pk|co\s*so|nha\s*khoa|clinic|ben\s*(?:em|ban|minh))\s*(?:nam\s*)?(?:o|tai)?\s*"
    r"(?:dau|cho\s*nao|duong\s*nao|quan\s*nao|khu\s*nao)",
    r"chi\s*duong(?!\s*huyet)",
    r"(?:cho|bai)\s*(?:gui|do)\s*xe",
    r"duong\s*(?:den|toi|di)\s*(?:phong\s*kham|pk)",
    r"co\s*so\s*(?:nao|khac|o)",
    r"(?:may|bao\s*nhieu)\s*co\s*so",
)
_PHONE = _rx(
    r"so\s*(?:dien\s*thoai|dt|dthoai|lien\s*he|hotline|zalo|tong\s*dai)",
    r"sdt",
    r"hotline",
    r"goi\s*(?:so|dien)\s*(?:nao|gi|may)",
    r"lien\s*he\s*(?:bang\s*cach\s*nao|the\s*nao|o\s*dau|qua\s*dau|kieu\s*gi)",
    r"email|fanpage|website|trang\s*web",
)
_PRICES = _rx(
    r"bang\s*gia",
    r"(?<!nguoi )(?<!tuoi )(?<!cao )gia\s*(?:ca|tien|bao\s*nhieu|the\s*nao|sao|ra\s*sao|kham|nieng|nho|tram|han|cay|boc|tay|lay|lam|rang|"
    r"implant|dich\s*vu|chua|dieu\s*tri|xet\s*nghiem|goi)",
    r"(?:chi\s*phi|phi\s*kham|le\s*phi|tien\s*kham)",
    r"(?:bao\s*nhieu|het|mat|ton|tam)\s*(?:bao\s*nhieu\s*)?(?:tien|dong|trieu|nghin|ngan)",
    r"(?:het|ton)\s*bao\s*nhieu\s*(?:vay|a|the)?\s*$",
    r"thanh\s*toan",
    r"bao\s*nhieu\s*(?:mot|1)\s*(?:rang|cai|tru)",
    r"tra\s*gop|the\s*tin\s*dung|chuyen\s*khoan|quet\s*the|uu\s*dai|khuyen\s*mai|giam\s*gia",
    r"(?:co\s*)?(?:dat|re|mac)\s*(?:khong|ko|k|qua|lam)",
)
_INSURANCE = _rx(r"bao\s*hiem", r"bhyt", r"bhxh", r"the\s*bh", r"bh\s*(?:y\s*te|tu\s*nhan)")
_SERVICES = re.compile(
    r"\b(?:phong\s*kham|pk|ben\s*(?:em|ban|minh)|o\s*day|cho\s*(?:ban|em))\s*(?:co\s*)?"
    r"(?:lam|nhan|kham|chua|dieu\s*tri|co)\b.*\b(?:khong|ko|k|chua)\s*\??$"
)
_CLINIC_NOUN = _rx(r"phong\s*kham", r"pk", r"nha\s*khoa\s*(?:minh|ben|nay)", r"ben\s*(?:em|ban|minh)")

_EN_WORDS = frozenset(
    """a about after am an and any are as at be been before but by can could do does doing don't for from get
    has have having he her his how i i'm if in is it it's its me my need no not of on or our please she should
    so some that the their them then there they this to too up us was we what when where which who why will
    with would you your yes hello hi hey thanks thank there's tooth teeth hurt hurts pain dentist doctor
    appointment book english speak speaks speaking help sugar diabetes blood clinic open address price much
    many time today tomorrow morning afternoon want like know tell anyone someone wisdom gum gums bleeding
    child children son daughter since yesterday toothache week day night sick feel feeling have been""".split()
)
_VI_MARKS = re.compile(r"[àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ]", re.I)
_EN_TOKEN = re.compile(r"[a-z']+")


def looks_english(text: str) -> bool:
    """A sentence of mostly common English words, without Vietnamese diacritics (≥ 3 words)."""
    if _VI_MARKS.search(text):
        return False
    tokens = _EN_TOKEN.findall(text.lower())
    if len(tokens) < 3:
        return False
    known = sum(1 for t in tokens if t in _EN_WORDS)
    return known >= 2 and known / len(tokens) >= 0.5


def clinic_topic(folded: str) -> str | None:
    """Which clinic fact the message asks for: hours, address, phone, prices, insurance, services; or None."""
    for name, pattern in (
        ("insurance", _INSURANCE),
        ("prices", _PRICES),
        ("hours", _HOURS),
        ("address", _ADDRESS),
        ("phone", _PHONE),
    ):
        if pattern.search(folded):
            return name
    if _SERVICES.search(folded):
        return "services"
    return None


def service_intent(folded: str, *, question: bool, symptom: bool) -> tuple[str, str] | None:
    """The clinic-service intent of a folded message and a short Vietnamese reason, or None."""
    n_words = len(folded.split())
    if _COMPLAINT.search(folded) and not symptom:
        return "complaint", "phàn nàn về phòng khám hoặc về bot"
    if _BOOKING.search(folded):
        return "booking", "muốn đặt lịch khám"
    if symptom:
        return None
    if _HUMAN.search(folded) and (_HUMAN_REQUEST.search(folded) or not _WHETHER.search(folded)):
        return "human", "muốn nói chuyện với người của phòng khám"
    topic = clinic_topic(folded)
    if topic is not None and (topic != "prices" or n_words <= 20):
        return "clinic_info", f"hỏi thông tin phòng khám ({topic})"
    if _PRAISE.search(folded) and n_words <= 20 and not question:
        return "praise", "lời khen"
    if n_words <= 10 and not question and (_THANKS.search(folded) or _THANKS_ANY.search(folded)):
        return "thanks", "lời cảm ơn"
    soft_goodbye = _GOODBYE_SOFT.search(folded) and not _HELLO.match(folded)
    if n_words <= 10 and not question and (_GOODBYE.search(folded) or soft_goodbye):
        return "goodbye", "lời chào tạm biệt"
    return None


def mentions_clinic(folded: str) -> bool:
    return bool(_CLINIC_NOUN.search(folded))
