"""The emergency answer: 115 first, then the two or three first-aid steps of the most time-critical category,
then the clinic's own phone when it is set. Suicide has an answer of its own (compassion, crisis lines, 115 if
something has already been taken). A clinician's role gets a short card, shown after the clinical answer.
"""

from __future__ import annotations

from engine.triage.rules import Category, RuleSet

CALL_115 = (
    "👉 Hãy GỌI NGAY 115 hoặc đến phòng cấp cứu của bệnh viện gần nhất. "
    "Đừng chờ trả lời qua tin nhắn, và đừng tự lái xe nếu bạn là người đang có triệu chứng."
)
MAX_STEPS = 4


def _clinic_line(clinic_phone: str | None, clinic_name: str | None = None) -> str | None:
    if not clinic_phone:
        return None
    return f"📞 Sau khi đã gọi 115, bạn có thể báo cho {clinic_name or 'phòng khám'} qua số {clinic_phone}."


def patient_answer(
    cats: list[Category], rules: RuleSet, *, clinic_phone: str | None = None, clinic_name: str | None = None
) -> str:
    """The card for a patient or family member; ``cats`` most time-critical first (never empty)."""
    lead = cats[0]
    if lead.message:
        text = lead.message.replace(
            "{crisis_lines}", "\n".join(f"• {line}" for line in rules.crisis_lines)
        ).strip()
        others = [c for c in cats[1:] if not c.message]
        if others:  # e.g. pills already swallowed: the poisoning steps follow
            text += "\n\n" + "Trong lúc chờ cấp cứu:\n" + "\n".join(f"• {s}" for s in others[0].advice[:3])
        clinic = _clinic_line(clinic_phone, clinic_name)
        return text + (f"\n\n{clinic}" if clinic else "")
    names = ", ".join(c.name for c in cats)
    steps = list(lead.advice[:3])
    for other in cats[1:]:  # the first step of each other category, when it says something new
        if other.advice and other.advice[0] not in steps and len(steps) < MAX_STEPS:
            steps.append(other.advice[0])
    lines = [f"🚨 Những gì bạn mô tả có thể là tình huống CẤP CỨU ({names}).", CALL_115]
    lines.append("Trong lúc chờ cấp cứu:\n" + "\n".join(f"• {s}" for s in steps))
    clinic = _clinic_line(clinic_phone, clinic_name)
    if clinic:
        lines.append(clinic)
    return "\n\n".join(lines)


def doubt_line(cats: list[Category]) -> str:
    """The line after the answer to a message the rules read as an emergency and the model doubted ("what is
    ketoacidosis?", "dad is in hospital after a stroke, what should he eat?"): in case it is happening now."""
    names = ", ".join(c.name for c in cats)
    return (
        f"⚠️ Nếu ngay lúc này bạn hoặc người thân đang gặp tình huống cấp cứu ({names}), "
        "hãy gọi 115 ngay, đừng chờ tin nhắn."
    )


def clinician_card(cats: list[Category]) -> str:
    """The short card a clinician's role gets after the clinical answer."""
    names = ", ".join(c.name for c in cats)
    return (
        f"🚨 Lưu ý cấp cứu ({names}): nếu đây là một người bệnh đang có triệu chứng, "
        "hãy xử trí theo quy trình cấp cứu của cơ sở và gọi 115 ngay; đừng chờ tra cứu."
    )
