"""The nodes of the medical flow that write the reply (DESIGN.md §5): the grounded answer from the KB
(``ComposeAnswer``), the honest "no confident match" (``ClarifyQuestionNode``; led by the other role whose KB
answers the message better, ``switch_role``), the topic lists (``TopicSuggestResponse``; with no match, the
other role whose KB answers the message, ``switch_role``), greetings and thanks, the reply to personal information, and ``Finalize``, which
joins the parts and adds the disclaimer where it matters. The deciding nodes before them are
``engine.nodes``; their Vietnamese sentences are ``engine.texts``.

Shared-store keys written: ``answer_parts``, ``suggestion_questions``, ``citations``, ``confidence``,
``answer_source``, ``disclaimer_shown`` and ``explain`` (the final text, disclaimer last).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pydantic import BaseModel, Field

from engine import prompts, texts
from engine.answers import curated_answer, source_line
from engine.core import Node, register
from engine.roles import Role
from engine.shared import deps_of, history_text, role_of, say, unique_questions
from engine.structured import Structured, StructuredNode
from engine.text import fold_plain
from engine.types import Hit, KBEntry

log = logging.getLogger(__name__)


class ComposeOut(BaseModel):
    explanation: str = Field(min_length=1, max_length=2500)
    suggestion_questions: list[str] = Field(default_factory=list, max_length=8)
    used_codes: list[str] = Field(default_factory=list)


def entry_label(e: KBEntry) -> str:
    """How an entry is introduced to the composing LLM: its code, and URGENT when it is marked so."""
    return f"[{e.code}] (URGENT)" if e.urgent else f"[{e.code}]"


@register
class ComposeAnswer(StructuredNode):
    """LLM: grounded answer from the retrieved entries + last turns, validated. Offline / fallback: the
    curated answer of the best entry (both entries of a two-part question, ``second_part``) framed by the
    persona (``engine.answers``); other hits as suggestions."""

    step = "compose"
    output_model = ComposeOut
    system_template = prompts.COMPOSE_SYSTEM
    user_template = prompts.COMPOSE_USER
    max_output_chars = 5000
    max_tokens = 900

    def context(self, shared: dict[str, Any]) -> dict[str, Any]:
        hits: list[Hit] = [h for h in shared["retrieved"] if (h.entry.answer or "").strip()][:5]
        second: Hit | None = shared.get("second_part")
        return {
            "role": role_of(shared),
            "query": shared["query"],
            "hits": hits,
            "entries": [hits[0].entry, second.entry]
            if second is not None and hits
            else [h.entry for h in hits[:1]],
            "clinic": deps_of(shared).config.clinic,
            "pinned": shared.get("pinned"),
            "history_text": history_text(shared.get("history") or []),
            "min_suggestions": deps_of(shared).config.min_suggestions,
            "entries_text": "\n\n".join(
                f"{entry_label(h.entry)} {h.entry.question}\n{h.entry.answer[:1500]}" for h in hits
            ),
        }

    def guardrails(self, out: ComposeOut, prep: dict[str, Any]) -> list[str]:
        known = {h.entry.code for h in prep["ctx"]["hits"]}
        problems = []
        if not out.used_codes or any(c not in known for c in out.used_codes):
            problems.append(f"used_codes must be a non-empty subset of {sorted(known)}")
        pinned = prep["ctx"]["pinned"]
        if pinned in known and pinned not in out.used_codes:  # the confident offline answer stays in
            problems.append(f"the answer must rely on entry {pinned} (used_codes must include it)")
        if not out.explanation.strip():
            problems.append("explanation is empty")
        return problems

    async def offline(self, prep: dict[str, Any]) -> ComposeOut:
        ctx = prep["ctx"]
        entries: list[KBEntry] = ctx["entries"]
        # The 2,500-character cap validates LLM output; a curated answer may be longer (the KB import allows
        # 8,000 characters, channels split long texts), so it is not validated against that cap.
        return ComposeOut.model_construct(
            explanation=curated_answer(ctx["role"], entries, ctx["query"], ctx["clinic"]),
            suggestion_questions=[],
            used_codes=[e.code for e in entries],
        )

    async def apply(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str:
        out: ComposeOut = res.value
        hits: list[Hit] = shared["retrieved"]
        explanation = out.explanation.strip()
        used = set(out.used_codes)
        if res.source == "llm":
            role: Role = prep["ctx"]["role"]
            if any(h.entry.sample for h in hits if h.entry.code in used):
                explanation = role.sample_intro + "\n\n" + explanation
            elif role.clinician and role.answer_intro:  # says the text is for health professionals
                explanation = role.answer_intro + "\n\n" + explanation
            used_entries = [h.entry for h in hits if h.entry.code in used]
            explanation += "\n\n" + source_line(role, used_entries)
        say(shared, explanation)
        related = [h.entry for h in hits if h.entry.code not in used]
        asked = {shared["query"]} | {h.entry.question for h in hits if h.entry.code in used}
        suggestions = [q.strip() for q in out.suggestion_questions if q.strip()]
        suggestions += unique_questions(related, exclude=asked | set(suggestions), limit=10)
        shared["suggestion_questions"] = suggestions[:5]
        shared["citations"] = list(out.used_codes)
        shared["confidence"] = shared.get("retrieval_score", 0.0)
        shared["answer_source"] = res.source
        return "default"


@register
class ClarifyQuestionNode(Node):
    """No confident match: say so honestly and offer ≥ 5 questions (retrieved first, then sampled). When
    another role's KB answers the message better (``switch_role``), that section is offered first and the
    questions follow as the other possibility."""

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        return {
            "searcher": deps.searcher,
            "role": role_of(shared).kb,
            "n": deps.config.min_suggestions,
            "entries": [h.entry for h in shared.get("retrieved") or []],
            "query": shared["query"],
        }

    async def exec(self, p: dict[str, Any]) -> list[str]:
        questions = unique_questions(p["entries"], exclude={p["query"]}, limit=p["n"])
        if len(questions) < p["n"]:
            sampled = await p["searcher"].sample_questions(p["role"], p["n"] * 2)
            questions += unique_questions(
                sampled, exclude={p["query"], *questions}, limit=p["n"] - len(questions)
            )
        return questions

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> list[str]:
        return unique_questions(p["entries"], exclude={p["query"]}, limit=p["n"])

    async def post(self, shared: dict[str, Any], p: dict[str, Any], questions: list[str]) -> str:
        other = deps_of(shared).roles.get(shared.get("switch_role") or "")
        if other is not None:  # another role's KB answers it better: offer that first, this list under it
            role = role_of(shared)
            offer = texts.SECTION_OFFER_CLINICIAN if role.clinician else texts.SECTION_OFFER
            here = texts.CLARIFY_HERE_CLINICIAN if role.clinician else texts.CLARIFY_HERE
            say(shared, offer.format(section=other.name))
            say(shared, here.format(current=role.name))
        else:
            say(shared, texts.CLARIFY_CLINICIAN if role_of(shared).clinician else texts.CLARIFY)
        shared["suggestion_questions"] = questions
        shared["confidence"] = shared.get("retrieval_score", 0.0)
        return "default"


@register
class TopicSuggestResponse(Node):
    """Every topic (ĐỀ MỤC) of the role, listed and offered as buttons (channels page long lists); a topic
    button tapped (or "chủ đề <name>" typed, ``topic``) lists that topic's questions as buttons."""

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        return {"searcher": deps.searcher, "role": role_of(shared).kb, "topic": shared.get("topic")}

    async def exec(self, p: dict[str, Any]) -> tuple[list[str], list[KBEntry]]:
        if p["topic"]:
            return [p["topic"]], await p["searcher"].topic_entries(p["role"], p["topic"])
        groups = await p["searcher"].topics(p["role"])
        return [t or texts.OTHER_TOPIC for t, entries in groups if entries], []

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> tuple[list[str], list[KBEntry]]:
        log.warning("topics unavailable: %r", exc)
        return [], []

    async def post(
        self, shared: dict[str, Any], p: dict[str, Any], res: tuple[list[str], list[KBEntry]]
    ) -> str:
        topics, entries = res
        kind = shared.get("input_type")
        clinician = role_of(shared).clinician
        if p["topic"] and entries:
            listing = texts.TOPIC_QUESTIONS_CLINICIAN if clinician else texts.TOPIC_QUESTIONS
            say(shared, listing.format(topic=p["topic"]))
            shared["suggestion_questions"] = [e.question.strip() for e in entries]
            shared.setdefault("confidence", shared.get("classification_confidence", 0.0))
            return "default"
        other = deps_of(shared).roles.get(shared.get("switch_role") or "")
        if shared.get("no_match") and other is not None:  # another role's KB answers it: say which
            role = role_of(shared)
            hint = texts.OTHER_SECTION_CLINICIAN if role.clinician else texts.OTHER_SECTION
            say(shared, hint.format(current=role.name, section=other.name))
            intro = texts.OTHER_SECTION_TOPICS.format(current=role.name)
        elif shared.get("no_match"):
            intro = (
                texts.NO_MATCH_CLINICIAN
                if clinician
                else texts.NO_MATCH.format(ask=deps_of(shared).config.clinic.ask_doctor_line())
            )
        elif kind == "nonsense":
            intro = texts.NOT_UNDERSTOOD_CLINICIAN if clinician else texts.NOT_UNDERSTOOD
        elif kind == "greeting":
            intro = texts.START_WITH_TOPICS_CLINICIAN if clinician else texts.START_WITH_TOPICS
        else:
            intro = texts.TOPICS_CLINICIAN if clinician else texts.TOPICS
        if not topics:
            say(shared, intro.rstrip(":") + "." + texts.NO_TOPICS)
        else:
            say(shared, intro + "\n" + "\n".join(f"• {t}" for t in topics))
        shared["suggestion_questions"] = topics
        shared.setdefault("confidence", shared.get("classification_confidence", 0.0))
        return "default"


_THANKS = re.compile(r"\b(cam on|thank|thanks|tks|tam biet|bye|hen gap lai)\b")


@register
class GreetingResponse(Node):
    """Hello → the role's greeting; thanks / goodbye → a short reply. Then the topics."""

    async def prep(self, shared: dict[str, Any]) -> tuple[str, Role]:
        return shared["query"], role_of(shared)

    async def post(self, shared: dict[str, Any], p: tuple[str, Role], _: Any) -> str:
        query, role = p
        if _THANKS.search(fold_plain(query)):
            say(shared, texts.THANKS_REPLY_CLINICIAN if role.clinician else texts.THANKS_REPLY)
        else:
            say(shared, role.greeting)
        return "default"


@register
class StatementResponse(Node):
    """Personal information or an acknowledgement: thank, remember (memory keeps the turn), offer questions."""

    max_retries = 1

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        return {
            "searcher": deps.searcher,
            "role": role_of(shared).kb,
            "query": shared["query"],
            "n": deps.config.min_suggestions,
        }

    async def exec(self, p: dict[str, Any]) -> list[str]:
        res = await p["searcher"].search(p["role"], p["query"], k=p["n"])
        questions = unique_questions([h.entry for h in res.hits], limit=p["n"])
        if len(questions) < p["n"]:
            sampled = await p["searcher"].sample_questions(p["role"], p["n"])
            questions += unique_questions(sampled, exclude=set(questions), limit=p["n"] - len(questions))
        return questions

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> list[str]:
        return []

    async def post(self, shared: dict[str, Any], p: dict[str, Any], questions: list[str]) -> str:
        say(shared, texts.STATEMENT_REPLY_CLINICIAN if role_of(shared).clinician else texts.STATEMENT_REPLY)
        shared["suggestion_questions"] = questions
        return "default"


MAX_SUGGESTIONS = 30  # a full topic list or one topic's questions; channels page them


def wants_disclaimer(shared: dict[str, Any]) -> bool:
    """Where the disclaimer matters: every emergency, and the first answer from the KB in a conversation —
    not under greetings, thanks, clinic information or a request to rephrase."""
    if shared.get("red_flag") or shared.get("emergency_card") or shared.get("input_type") == "emergency":
        return True
    return bool(shared.get("citations")) and not shared.get("answered_before")


@register
class Finalize(Node):
    """Joins the answer, ends it with the disclaimer line from settings where it matters (``wants_disclaimer``)."""

    async def post(self, shared: dict[str, Any], prep: Any, _: Any) -> None:
        parts = [p for p in shared.get("answer_parts", []) if p]
        if shared.get("emergency_card"):
            parts.append(shared["emergency_card"])
        disclaimer = deps_of(shared).config.disclaimer
        shared["disclaimer_shown"] = bool(disclaimer) and wants_disclaimer(shared)
        if shared["disclaimer_shown"]:
            parts.append(disclaimer)
        shared["explain"] = "\n\n".join(parts)
        questions = list(dict.fromkeys(shared.get("suggestion_questions") or []))
        shared["suggestion_questions"] = questions[:MAX_SUGGESTIONS]
        return None
