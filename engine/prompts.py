"""Every prompt template of the engine, in one place, rendered with ``{{ variable }}`` from the shared store.

``render(template, context)`` fills ``{{ name }}`` and dotted ``{{ role.persona }}`` from a dict (or object
attributes); lists are joined one item a line; a missing variable renders as an empty string. Templates are
English instructions (models follow them best) that demand Vietnamese output for the user.
"""

from __future__ import annotations

import re
from typing import Any

_VAR = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


def _lookup(context: Any, dotted: str) -> Any:
    value = context
    for part in dotted.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        else:
            value = getattr(value, part, None)
        if value is None:
            return ""
    return value


def render(template: str, context: Any) -> str:
    def sub(m: re.Match[str]) -> str:
        value = _lookup(context, m.group(1))
        if isinstance(value, list | tuple):
            return "\n".join(str(v) for v in value)
        return str(value)

    return _VAR.sub(sub, template)


CLASSIFY_SYSTEM = """You route messages for a Vietnamese medical Q&A bot of a clinic ({{ role.label }}).
Classify the user's last message into exactly one input_type:
- medical_question: any health question or description of a symptom/problem (when in doubt, choose this)
- greeting: hello ("xin chào", "chào bác sĩ")
- thanks: thanks without a new question ("cảm ơn bác sĩ", "ok cảm ơn nhé")
- goodbye: ends the conversation ("tạm biệt", "thôi mình đi nhé")
- booking: wants to book, change or cancel an appointment ("cho tôi đặt lịch sáng mai", "đổi lịch hẹn")
- human: wants to talk to a person of the clinic (doctor, staff, receptionist), not the bot
- complaint: complains about the clinic, its staff, waiting, prices or the bot (not about a symptom)
- praise: compliments the clinic or the bot
- clinic_info: asks for the clinic's hours, address, phone, prices, insurance or services
- english: the message is written in English
- topic_suggest: asks what topics/questions the bot can help with
- statement: personal information or acknowledgement without a question ("tôi bị tiểu đường 5 năm rồi", "vâng")
- nonsense: random characters or clearly unrelated to health and to the clinic
A symptom described together with a complaint is a medical_question; a booking request is booking even when it
mentions a symptom.
For medical_question also write up to 3 rag_questions: standalone Vietnamese search questions (with diacritics)
that resolve pronouns and follow-ups using the conversation; otherwise rag_questions is [].
Reply with JSON only: {"input_type": "...", "confidence": 0.0-1.0, "reason": "short, Vietnamese", "rag_questions": ["..."]}"""

CLASSIFY_USER = """Conversation so far:
{{ history_text }}

User message: {{ query }}"""

COMPOSE_SYSTEM = """You are {{ role.persona }}. You speak to {{ role.audience }}. Tone: {{ role.tone }}.
Answer in Vietnamese, using ONLY the knowledge-base entries given (never add facts, doses or diagnoses that are
not in them). If the entries do not answer the question, say so honestly. An entry marked (URGENT) tells the
reader to get care now: when you use it, keep that urgency first and never suggest waiting or booking a routine
appointment. Keep it under 1200 characters.
Reply with JSON only:
{"explanation": "the answer", "suggestion_questions": ["up to 5 related follow-up questions in Vietnamese"],
 "used_codes": ["codes of the entries you relied on"]}"""

COMPOSE_USER = """Knowledge-base entries:
{{ entries_text }}

Recent conversation:
{{ history_text }}

Question: {{ query }}"""

PRUNE_SYSTEM = """You select knowledge-base entries for a Vietnamese medical question.
From the candidates keep the {{ keep }} most relevant to the question, most relevant first.
Reply with JSON only: {"keep_codes": ["code", ...]}"""

PRUNE_USER = """Question: {{ query }}
Other phrasings: {{ rag_questions }}

Candidates (code: question — topic):
{{ candidates_text }}"""

REFINE = """Your previous reply was rejected: {{ error }}
Reply again with JSON only, exactly in the requested format."""
