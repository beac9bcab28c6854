"""Safety net: input validation and the red-flag (emergency) detector.

Both run before anything else in the medical flow. Red flags are matched with regular expressions on the
*folded* text (lowercase, no diacritics, đ→d, punctuation → spaces), so "khó thở" and "kho tho" match alike.
Where folding makes a lay word ambiguous ("tự tử" / "từ từ", "xỉu" / "xíu", "ngất" / "ngắt") the folded pattern
requires context and an accented pattern on the original text catches the unambiguous spelling.

Recall is what matters (a missed emergency is far worse than a needless "call 115"), so patterns are
generous; a few negations ("không khó thở") are honoured. The labelled set in ``tests/data/red_flags.jsonl``
guards both recall (100 %) and false alarms (≤ 5 %).

``fold_text`` is deliberately local (one character in, one character out) so this module has no
dependency on the retrieval code and spans in the folded text line up with the original.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from engine.text import CharTable

MAX_INPUT_CHARS = 1000

_CONTROL = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\ufeff]")
_SPACES = re.compile(r"\s+")


class InvalidInput(ValueError):
    """The message cannot be processed; ``str(exc)`` is a message for the user, in Vietnamese."""


def normalize_input(text: str | None) -> str:
    """NFC, control characters removed, whitespace collapsed, stripped. Never raises."""
    text = unicodedata.normalize("NFC", text or "")
    text = _CONTROL.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def validate_input(text: str | None, max_chars: int = MAX_INPUT_CHARS) -> str:
    """The normalised message, or ``InvalidInput`` with a clear Vietnamese message."""
    clean = normalize_input(text)
    if not clean:
        raise InvalidInput("Tin nhắn đang trống. Bạn hãy gõ câu hỏi của mình (tối đa 1000 ký tự) nhé.")
    if len(clean) > max_chars:
        raise InvalidInput(
            f"Tin nhắn dài {len(clean)} ký tự, vượt quá giới hạn {max_chars} ký tự. "
            "Bạn vui lòng rút gọn hoặc tách thành vài câu hỏi ngắn hơn nhé."
        )
    return clean


def _fold_char(ch: str) -> str:
    if ch in "đĐ":
        return "d"
    base = unicodedata.normalize("NFD", ch)[0].lower()
    if len(base) != 1:
        return " "
    return base if base.isalnum() else " "


_FOLD_TABLE = CharTable(_fold_char)


def fold_text(text: str) -> str:
    """Lowercase, no diacritics, đ→d, every non-alphanumeric character a space; same length as NFC input."""
    return unicodedata.normalize("NFC", text).translate(_FOLD_TABLE)


# ----- red flags ------------------------------------------------------------------------------------------

_NEG = re.compile(r"(khong|ko|k|chua|het|chang|khong he|khong co|khong bi|chua bi|chua tung)\s+(bi\s+)?$")


@dataclass(frozen=True, slots=True)
class RedFlagRule:
    category: str
    folded: tuple[re.Pattern[str], ...]  # on fold_text(text)
    accented: tuple[re.Pattern[str], ...] = ()  # on the lowercased NFC text (only unambiguous spellings)
    negatable: bool = False  # "không khó thở" does not count


def _rx(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


# Shared vocabulary (folded).
_CHEST = r"(dau|tuc|nhoi|that|de|ep|bo|nang)\s*(that\s*|tuc\s*|nhoi\s*|buot\s*)?(o\s*)?(vung\s*)?(nguc|tim)"
_SPREAD = r"(lan|chay|xuyen|buot)\s*(ra|xuong|len|sang|toi|den|qua)?\s*(ca\s*)?(canh\s*tay|tay|vai|ham|quai\s*ham|co|sau\s*lung|lung)"
_SUGAR = (
    r"(duong\s*(huyet|mau|trong\s*mau)?|glucose|dh|chi\s*so\s*duong|tieu\s*duong|dai\s*thao\s*duong|insulin)"
)
_CONFUSED = (
    r"(lo\s*mo|lu\s*lan|mo\s*man|li\s*bi|lim\s*(di|dan)|khong\s*(con\s*)?tinh\s*tao|noi\s*nham|"
    r"goi\s*(khong|ko|k)\s*(tra\s*loi|tinh|day|thua)|khong\s*nhan\s*ra\s*(ai|nguoi)|bat\s*tinh|hon\s*me|"
    r"ngat|xiu|mat\s*y\s*thuc|ngu\s*(li\s*bi|khong\s*day)|vat\s*va\s*vat\s*vuong)"
)
_SUGAR_HIGH = r"(cao|tang\s*vot|vot|hi|high|tren\s*\d{2}|\b[3-9]\d{2}\b|\b[2-9]\d\s*(mmol)?)"

RULES: tuple[RedFlagRule, ...] = (
    RedFlagRule(
        "đau ngực cấp",
        _rx(
            _CHEST + r".{0,80}" + _SPREAD,
            _CHEST + r".{0,60}(va|toat|ra)\s*mo\s*hoi",
            _CHEST
            + r".{0,30}(du\s*doi|du\s*qua|bop\s*nghet|de\s*nang|nhu\s*(bi\s*)?(de|bop|ep|dao\s*dam)|kinh\s*khung|khong\s*chiu\s*(duoc|noi))",
            r"(dang|vua|nghi|co\s*the|co\s*phai).{0,20}(nhoi\s*mau\s*co\s*tim|dot\s*tim|len\s*con\s*dau\s*tim)",
        ),
    ),
    RedFlagRule(
        "dấu hiệu đột quỵ",
        _rx(
            r"(meo|lech|xech)\s*(mieng|mom)\b",
            r"meo\s*(mat|moi)\b",
            r"(yeu|liet|te|mat\s*cam\s*giac)\s*(mot\s*|1\s*)?(nua|ben|phia)\s*(nguoi|than|mat|tay|chan)",
            r"(yeu|liet|te)\s*(mot|1)\s*ben\s*(tay|chan|nguoi)",
            r"(noi\s*(ngong|kho|lap\s*bap|khong\s*ro|ngong\s*nghiu)|kho\s*noi|khong\s*noi\s*duoc).{0,40}"
            r"(dot\s*ngot|dot\s*nhien|tu\s*nhien|bong\s*nhien|bong|vua|sang\s*nay|luc\s*nay)",
            r"(dot\s*ngot|dot\s*nhien|tu\s*nhien|bong\s*nhien|bong\s*dung|vua).{0,30}(noi\s*(ngong|kho|lap\s*bap|khong\s*ro)|kho\s*noi|khong\s*noi\s*duoc|mat\s*thi\s*luc|khong\s*nhin\s*thay)",
            r"(dang|vua|nghi|co\s*the|co\s*phai|dau\s*hieu).{0,20}(dot\s*quy|tai\s*bien|trung\s*gio)",
        ),
    ),
    RedFlagRule(
        "chảy máu nặng",
        _rx(
            r"(chay|ra)\s*mau.{0,40}(khong|ko|k|chua|van\s*chua|chang)\s*(chiu\s*)?(cam(?!\s*(on|thay|giac|xuc|nhan))|ngung|dung|het|ngot)",
            r"mau\s*(van\s*)?(khong|ko|chua|chang)\s*(chiu\s*)?(cam|ngung|dung|het)",
            r"mau\s*(chay|ra).{0,30}(khong|ko|k|chua|van\s*chua)\s*(cam|ngung|dung|het)",
            r"(chay|ra|mat)\s*mau\s*(rat\s*)?(rat\s*nhieu|nhieu\s*qua|qua\s*nhieu|o\s*at|xoi\s*xa|lenh\s*lang|tua\s*tua|nhu\s*xoi|nhieu\s*lam|uot\s*ca)",
            r"(non|oi|mua|khac|ho)\s*ra\s*(ca\s*)?(mau|ngum\s*mau|cuc\s*mau)",
            r"(di\s*ngoai|di\s*cau|phan)\s*(ra\s*)?(mau\s*den|den\s*nhu\s*ba\s*ca\s*phe|toan\s*mau)",
            r"bang\s*huyet|bang\s*huet",
        ),
    ),
    RedFlagRule(
        "khó thở",
        _rx(
            r"kho\s*tho",
            r"(khong|ko|k)\s*tho\s*(duoc|noi)",
            r"tho\s*(khong|ko|k)\s*(duoc|noi|ra\s*hoi)",
            r"ngat\s*tho|nghet\s*tho|tho\s*rit|tho\s*hon\s*hen|hoc\s*(xuong|do\s*an|hat)|hut\s*hoi\s*du\s*doi",
            r"(moi|mat|da|mong\s*tay)\s*(tim\s*tai|tim\s*tai|tim\s*di|tim\s*ngat|tim\s*lai|bi\s*tim)",
            r"tim\s*tai",
        ),
        negatable=True,
    ),
    RedFlagRule(
        "mất ý thức",
        _rx(
            r"bat\s*tinh|hon\s*me|mat\s*y\s*thuc|ngat\s*xiu|te\s*xiu|xiu\s*(di|nga|xuong|lim)|bi\s*xiu",
            r"(bi|lai|bong|vua|hay|dot\s*nhien)\s*ngat\b(?!\s*mui)|ngat\s*(di|lim|nga|ra)",
            r"goi\s*(mai\s*)?(khong|ko|k|chang)\s*(tinh|day|tra\s*loi|thua)",
            r"khong\s*(con\s*)?(tinh|biet\s*gi)\s*(nua|gi)",
        ),
        accented=_rx(r"\bngất\b", r"\bxỉu\b", r"\blịm\s*đi\b"),
        negatable=True,
    ),
    RedFlagRule(
        "co giật",
        _rx(
            r"co\s*giat(?!\s*(mi|co\s*mat|bap|nhe|o\s*mi|mi\s*mat))",
            r"len\s*con\s*(dong\s*kinh|co\s*giat|giat)",
            r"sui\s*bot\s*mep|gong\s*cung|giat\s*(tay\s*chan|toan\s*than)|mat\s*tro\s*(nguoc|len)|tro\s*mat\s*(len|nguoc)",
        ),
    ),
    RedFlagRule(
        "dị ứng nặng",
        _rx(
            r"\b(sung|phu)\b\s*(ca\s*)?(luoi|hong|thanh\s*quan)",
            r"\b(sung|phu)\b\s*(moi|mat|mi\s*mat).{0,60}(di\s*ung|sau\s*khi\s*(an|uong|tiem)|kho\s*nuot|nghet|ngua|noi\s*me\s*day)",
            r"(di\s*ung|sau\s*khi\s*(an|uong|tiem)).{0,60}(sung|phu)\s*(moi|mat|mi\s*mat)",
            r"soc\s*phan\s*ve|phan\s*ve|soc\s*thuoc|di\s*ung\s*(nang|toan\s*than)",
            r"(noi\s*me\s*day|noi\s*man)\s*(toan\s*than|khap\s*nguoi).{0,40}(chong\s*mat|tut\s*huyet\s*ap|sung|muon\s*ngat)",
        ),
    ),
    RedFlagRule(
        "ý định tự tử",
        _rx(
            r"muon\s*chet|muon\s*tu\s*sat|tu\s*sat|ket\s*lieu|khong\s*muon\s*song|chan\s*song|"
            r"song\s*khong\s*(con\s*)?(y\s*nghia|de\s*lam\s*gi)|khong\s*thiet\s*song|muon\s*bien\s*mat\s*mai\s*mai",
            r"(muon|dinh|se|nghi\s*den|y\s*dinh|toan|tim\s*cach|da\s*tung|co\s*y|chuan\s*bi|dang\s*tinh)\s*"
            r"(den\s*)?(chuyen\s*|viec\s*)?(tu\s*tu|tu\s*van\s*minh|tu\s*hai|lam\s*hai\s*ban\s*than|nhay\s*lau|nhay\s*cau|cat\s*tay)",
            r"uong\s*(het\s*|ca\s*)?(vi|lo|hop)\s*thuoc\s*(ngu\s*)?(de\s*)?(chet|tu)",
            r"lam\s*hai\s*ban\s*than|tu\s*lam\s*dau\s*ban\s*than",
        ),
        accented=_rx(r"tự\s*tử", r"tự\s*vẫn", r"tự\s*sát"),
    ),
    RedFlagRule(
        "đường huyết nguy hiểm",
        _rx(
            _SUGAR + r".{0,40}" + _SUGAR_HIGH + r".{0,80}" + _CONFUSED,
            _CONFUSED + r".{0,80}" + _SUGAR + r".{0,40}" + _SUGAR_HIGH,
            r"(ha|tut|giam|xuong)\s*(duong\s*(huyet|mau)?|dh).{0,80}" + _CONFUSED,
            _CONFUSED + r".{0,80}(ha|tut)\s*(duong\s*(huyet|mau)?|dh)",
            r"(nhiem\s*toan|nhiem\s*ceton|keto|hon\s*me\s*(do\s*)?(tang\s*)?duong)",
            r"(duong\s*(huyet|mau)?|may\s*do).{0,30}(bao\s*)?\b(hi|high|lo)\b.{0,60}" + _CONFUSED,
        ),
    ),
    RedFlagRule(
        "nhiễm trùng lan rộng vùng mặt cổ",
        _rx(
            r"\b(sung|phu)\b.{0,60}(lan|chay|keo|tran)\s*(ra|xuong|len|sang|toi|den|qua)?\s*(ca\s*)?(co|mat|mi\s*mat|duoi\s*ham|hong|mang\s*tai)",
            r"\b(sung|phu)\b\s*(lan\s*)?(den|toi|xuong)\s*(ca\s*)?(co|mi\s*mat|mat)\b",
            r"\b(sung|phu)\b.{0,80}(kho\s*nuot|nuot\s*(kho|khong\s*duoc|dau\s*du\s*doi)|khong\s*(ha|mo)\s*(duoc\s*)?mieng|kho\s*ha\s*mieng|khong\s*nuot\s*duoc)",
            r"\b(sung|phu)\b\s*(to\s*)?(ca\s*)?(mat|ma|ham).{0,60}sot\s*(cao|\d{2})",
            r"sot\s*(cao|\d{2}).{0,60}(sung|phu)\s*(to\s*)?(ca\s*)?(mat|ma|ham)\s*(to|nhanh|nhieu|lan)",
        ),
    ),
    RedFlagRule(
        "cấp cứu khác",
        _rx(
            r"(uong|an|nuot)\s*(nham|phai)\s*(thuoc|hoa\s*chat|thuoc\s*chuot|thuoc\s*tru\s*sau|nuoc\s*tay|axit|pin)",
            r"(uong|dung)\s*(qua\s*lieu|qua\s*nhieu\s*thuoc|ca\s*(vi|lo)\s*thuoc)",
            r"ngo\s*doc\s*(thuoc|hoa\s*chat|khi|co2|khi\s*than|nam|ruou\s*methanol)",
            r"dau\s*dau\s*(du\s*doi|nhu\s*bua\s*bo|kinh\s*khung|nhat\s*tu\s*truoc\s*den\s*nay).{0,40}(dot\s*ngot|dot\s*nhien|bong|tu\s*nhien|non|cung\s*co)",
            r"(dot\s*ngot|dot\s*nhien|bong).{0,20}dau\s*dau\s*(du\s*doi|nhu\s*bua\s*bo|kinh\s*khung)",
            r"(chan\s*thuong|dap|nga|va)\s*(dau|vao\s*dau).{0,60}(non|lo\s*mo|ngat|li\s*bi|chay\s*mau\s*tai)",
            r"bong\s*(nang|rong|dien\s*rong)|dien\s*giat",
            r"dau\s*bung\s*(du\s*doi|du\s*qua|quan\s*qua|khong\s*chiu\s*noi).{0,40}(sot|non|cung|chuong|khong\s*di\s*ngoai)",
        ),
    ),
)


@dataclass(slots=True)
class RedFlagResult:
    is_emergency: bool
    categories: list[str] = field(default_factory=list)
    matches: list[str] = field(default_factory=list)


def _negated(folded: str, start: int) -> bool:
    return bool(_NEG.search(folded[max(0, start - 20) : start]))


def detect_red_flags(text: str) -> RedFlagResult:
    """Check a message for emergency signs. Works on any length (it runs before the length check)."""
    nfc = _SPACES.sub(" ", unicodedata.normalize("NFC", text or ""))
    folded = fold_text(nfc)  # same length as nfc: positions line up for the negation check
    lowered = nfc.lower()
    result = RedFlagResult(False)
    for rule in RULES:
        hit: str | None = None
        for rx in rule.folded:
            for m in rx.finditer(folded):
                if rule.negatable and _negated(folded, m.start()):
                    continue
                hit = m.group(0)
                break
            if hit:
                break
        if hit is None:
            for rx in rule.accented:
                for m in rx.finditer(lowered):
                    if rule.negatable and _negated(folded, m.start()):
                        continue
                    hit = m.group(0)
                    break
                if hit:
                    break
        if hit is not None:
            result.is_emergency = True
            result.categories.append(rule.category)
            result.matches.append(hit.strip())
    return result


_ADVICE: dict[str, str] = {
    "đau ngực cấp": "Ngồi hoặc nằm nghỉ, không gắng sức, nới lỏng quần áo.",
    "dấu hiệu đột quỵ": "Ghi nhớ thời điểm bắt đầu có triệu chứng; không cho ăn uống hay tự ý uống thuốc.",
    "chảy máu nặng": "Dùng gạc hoặc khăn sạch ép chặt liên tục lên chỗ chảy máu (sau nhổ răng: cắn chặt gạc).",
    "khó thở": "Ngồi thẳng, nới lỏng quần áo; nếu có thuốc xịt cắt cơn bác sĩ đã kê thì dùng ngay.",
    "mất ý thức": "Đặt người bệnh nằm nghiêng an toàn, không cho ăn uống gì, theo dõi nhịp thở.",
    "co giật": "Đặt người bệnh nằm nghiêng, dọn vật cứng xung quanh, không nhét gì vào miệng.",
    "dị ứng nặng": "Nếu có bút tiêm adrenaline đã được kê, hãy dùng ngay.",
    "ý định tự tử": (
        "Bạn không đơn độc. Hãy ở cạnh một người bạn tin tưởng ngay lúc này và cất xa những thứ "
        "có thể gây hại cho bản thân."
    ),
    "đường huyết nguy hiểm": (
        "Nếu người bệnh còn tỉnh và nuốt được khi nghi hạ đường huyết, cho uống nước đường hoặc nước ngọt; "
        "nếu đã lơ mơ hoặc bất tỉnh thì không cho ăn uống gì."
    ),
    "nhiễm trùng lan rộng vùng mặt cổ": "Sưng lan xuống cổ kèm sốt có thể gây tắc đường thở, cần được xử trí ngay.",
}


def emergency_message(result: RedFlagResult) -> str:
    """The emergency answer: call 115 / nearest emergency room first, short first-aid tips after."""
    what = ", ".join(result.categories) if result.categories else "tình trạng cấp cứu"
    lines = [
        f"🚨 Những gì bạn mô tả có thể là tình huống CẤP CỨU ({what}).",
        "👉 Hãy GỌI NGAY 115 hoặc đến phòng cấp cứu của bệnh viện gần nhất. "
        "Đừng chờ trả lời qua tin nhắn và đừng tự lái xe nếu bạn là người đang có triệu chứng.",
    ]
    tips = [_ADVICE[c] for c in result.categories if c in _ADVICE]
    if tips:
        lines.append("Trong lúc chờ cấp cứu: " + " ".join(tips))
    return "\n\n".join(lines)
