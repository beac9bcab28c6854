"""The deciding nodes of the medical flow (DESIGN.md §5): the input and the emergency check, the conversation
memory, the classification of the message, retrieval, pruning and the score decision. The nodes that write
the reply are ``engine.reply_nodes`` (and ``engine.clinic_nodes``); the framework they are built on is
``engine.core``, ``engine.shared`` (the shared store) and ``engine.structured`` (the typed LLM step).

Shared-store keys read: ``deps`` (EngineDeps), ``role``, ``input``, ``conversation_id``, optional ``history``
(list of Turn) or ``memory_read`` (an awaitable of MemoryRead). Keys written: ``query``, ``input_error``,
``offline_intent``, ``red_flag``, ``red_flag_categories``, ``triage``
(what triage found, for the trace), ``emergency_card`` (a clinician role's card, or a patient's conditional 115
line for a doubted message, after the answer), ``history``,
``summary``, ``input_type``, ``classification_confidence``, ``classification_reason``, ``rag_questions``,
``is_follow_up``, ``retrieval_query``, ``retrieved`` (list[Hit]), ``retrieval_score``, ``retrieval_timings``,
``pruning``, ``decision``, ``query_search`` (the message as asked and its query vectors), ``switch_role``
(another role whose KB answers a message this one cannot), ``usage`` (llm.Usage) and ``trace`` (core).
Optional input: ``switch_roles`` (the roles the user may be pointed to; default every configured role).
``engine.flows`` turns the store into the typed ``engine.result.FlowResult`` once the flow is done.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from engine import followups, prompts, triage
from engine.classify import Intent, classify, has_question
from engine.core import Node, register
from engine.intents import SERVICE_INTENTS
from engine.roles import Role
from engine.safety import InvalidInput, normalize_input, validate_input
from engine.shared import dedup_hits, deps_of, history_text, role_of, say
from engine.structured import Structured, StructuredNode, disagree, step_on
from engine.text import fold_plain
from engine.types import Hit, MemoryRead, Turn

log = logging.getLogger(__name__)


CLINIC_INTENTS = frozenset((*SERVICE_INTENTS, "english"))

ROUTES = {
    "medical_question": "retrieve_kb",
    "greeting": "greeting",
    "topic_suggest": "topic_suggest",
    "statement": "statement",
    "nonsense": "nonsense",
    # Messages about the clinic (engine.intents): each its own route, so a staff handoff can take some over.
    **{intent: intent for intent in (*SERVICE_INTENTS, "english")},
}
InputType = Literal[
    "medical_question",
    "greeting",
    "topic_suggest",
    "statement",
    "nonsense",
    "booking",
    "human",
    "complaint",
    "praise",
    "clinic_info",
    "thanks",
    "goodbye",
    "english",
]


# ----- input, safety, memory ---------------------------------------------------------------------------


@register
class IngestQuery(Node):
    """NFC, control characters, whitespace; 1–1000 characters. Never stops the flow: the red-flag check runs
    next on the full text, so an emergency in an over-long message is still caught.

    A valid message that the offline classifier does not surely route elsewhere (``offline_sure``) is very
    likely to be searched: its query embedding starts here, in the background (``Searcher.prefetch``), so
    that it runs while the red-flag check, the memory read and the classification do their work; the search
    then finds it done or on its way. The classification is kept (``offline_intent``) for MainDecisionAgent,
    which would otherwise compute it again."""

    async def prep(self, shared: dict[str, Any]) -> str:
        return shared.get("input") or ""

    async def exec(self, raw: str) -> tuple[str, str | None]:
        try:
            return validate_input(raw), None
        except InvalidInput as exc:
            return normalize_input(raw), str(exc)

    async def post(self, shared: dict[str, Any], prep: str, res: tuple[str, str | None]) -> str:
        shared["query"], shared["input_error"] = res
        if res[1] is None:
            intent = offline_intent(shared)
            prefetch = getattr(deps_of(shared).searcher, "prefetch", None)
            if prefetch is not None and not (
                intent.input_type != "medical_question" and offline_sure(intent)
            ):
                prefetch(role_of(shared).kb, [res[0]])
        return "default"


def offline_intent(shared: dict[str, Any]) -> Intent:
    """The offline classifier's reading of ``shared["query"]``, computed once per message."""
    query = shared["query"]
    kept = shared.get("offline_intent")
    if kept is None or kept[0] != query:
        kept = (query, classify(query))
        shared["offline_intent"] = kept
    intent: Intent = kept[1]
    return intent


@register
class RedFlagCheck(Node):
    """Emergencies first: the 115 answer and nothing that delays it.

    Reads the raw input (before the length check): an emergency in an over-long message is still caught. A
    clinician's role goes on to the clinical answer, and Finalize puts the emergency card after it."""

    actions = ("default", "emergency", "invalid")

    async def prep(self, shared: dict[str, Any]) -> str:
        return shared.get("input") or shared.get("query") or ""

    async def exec(self, text: str) -> triage.Triage:
        return triage.triage(text)

    async def post(self, shared: dict[str, Any], prep: str, res: triage.Triage) -> str:
        shared["red_flag"] = res.is_emergency
        shared["red_flag_categories"] = list(res.categories)
        shared["triage"] = res.as_trace()
        if res.is_emergency or res.topics:  # the verdict, for whoever reads the stored trace (the console)
            self.trace_extra["triage"] = shared["triage"]
        if role_of(shared).clinician:
            if res.is_emergency or res.topics:
                shared["emergency_card"] = triage.answer(res, clinician=True)
        elif res.doubted:  # answered as usual, with a conditional 115 line after the answer
            shared["emergency_card"] = triage.answer(res)
        elif res.is_emergency:
            shared["input_type"] = "emergency"
            shared["confidence"] = 1.0
            clinic = deps_of(shared).config.clinic
            say(
                shared, triage.answer(res, clinic_phone=clinic.phone or None, clinic_name=clinic.name or None)
            )
            return "emergency"
        if shared.get("input_error"):
            shared["input_type"] = "invalid"
            say(shared, shared["input_error"])
            return "invalid"
        return "default"


@register
class LoadMemory(Node):
    """The last turns and the summary of the conversation (memory store), unless the caller passed them:
    ``history`` itself, or ``memory_read``, an awaitable of ``MemoryRead`` the caller started before the flow
    (the chat service reads the memory in the same round trip that finds the conversation, while the first
    nodes run)."""

    max_retries = 2
    wait = 0.05
    timeout = 3.0

    async def prep(self, shared: dict[str, Any]) -> tuple[Any, Any, int]:
        deps = deps_of(shared)
        n = deps.config.history_turns
        if shared.get("history") is not None:
            return None, None, n
        if shared.get("memory_read") is not None:
            return shared["memory_read"], None, n
        if deps.memory is None or shared.get("conversation_id") is None:
            return None, None, n
        return deps.memory, shared["conversation_id"], n

    async def exec(self, prep: tuple[Any, Any, int]) -> tuple[list[Turn] | None, str, bool | None]:
        memory, conv, n = prep
        if memory is None:
            return None, "", None
        if conv is None:  # the caller's read (memory_read), in flight: waited for, never cancelled from here
            read: MemoryRead = await asyncio.shield(memory)
            return list(read.turns), read.summary, read.answered
        load = getattr(memory, "load", None)  # a store that reads it all in one round trip
        if load is not None:
            turns, summary, *answered = await load(conv, n)
            return list(turns), summary, (bool(answered[0]) if answered else None)
        return list(await memory.recent_turns(conv, n)), await memory.summary(conv), None

    async def exec_fallback(
        self, prep: Any, exc: BaseException
    ) -> tuple[list[Turn] | None, str, bool | None]:
        log.warning("memory unavailable: %r", exc)
        return [], "", None

    async def post(
        self, shared: dict[str, Any], prep: Any, res: tuple[list[Turn] | None, str, bool | None]
    ) -> str:
        turns, summary, answered = res
        if turns is not None:
            shared["history"] = turns
        shared.setdefault("history", [])
        shared["history"] = list(shared["history"])[-prep[2] :]
        shared["summary"] = summary or shared.get("summary", "")
        if answered is None:  # a store that cannot tell: the turns it returned
            answered = any(t.citations for t in shared["history"])
        shared["answered_before"] = answered
        return "default"


# ----- classification -------------------------------------------------------------------------------------


class Classification(BaseModel):
    input_type: InputType
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = Field(default="", max_length=400)
    rag_questions: list[str] = Field(default_factory=list, max_length=5)


# The offline classifier's decision stands at this confidence or above: the model cannot turn a confident
# greeting, thanks or medical question into something else (it still adds rag_questions to a medical one).
OFFLINE_SURE = 0.85


def offline_sure(intent: Intent) -> bool:
    return intent.input_type in CLINIC_INTENTS or intent.confidence >= OFFLINE_SURE


@register
class MainDecisionAgent(StructuredNode):
    """input_type + confidence + reason (+ rag_questions with an LLM); offline: classifier + rules.

    The offline classifier always runs first. A confident offline decision that is not a medical question (a
    greeting, thanks, a request about the clinic…) is final and the model is not asked; for the rest the
    model is asked, but a confident offline decision still wins over it (the disagreement is recorded) and
    the model's rag_questions are used when the message goes to retrieval (step "expand")."""

    step = "classify"
    actions = tuple(ROUTES.values())
    output_model = Classification
    system_template = prompts.CLASSIFY_SYSTEM
    user_template = prompts.CLASSIFY_USER
    max_output_chars = 3000
    max_tokens = 300

    def context(self, shared: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": role_of(shared),
            "query": shared["query"],
            "history_text": history_text(shared["history"]),
            "offline": offline_intent(shared),
        }

    def steps_on(self, shared: dict[str, Any]) -> bool:
        return step_on(shared, "classify") or step_on(shared, "expand")

    def skip(self, prep: dict[str, Any]) -> Classification | None:
        offline: Intent = prep["ctx"]["offline"]
        if offline.input_type != "medical_question" and offline_sure(offline):
            return self.as_output(offline)
        return None

    def guardrails(self, out: Classification, prep: dict[str, Any]) -> list[str]:
        bad = [q for q in out.rag_questions if not q.strip() or len(q) > 300]
        return ["rag_questions must be non-empty and under 300 characters"] if bad else []

    @staticmethod
    def as_output(intent: Intent) -> Classification:
        return Classification(
            input_type=intent.input_type, confidence=intent.confidence, reason=intent.reason
        )

    async def offline(self, prep: dict[str, Any]) -> Classification:
        return self.as_output(prep["ctx"]["offline"])

    async def apply(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str:
        out: Classification = res.value
        offline: Intent = prep["ctx"]["offline"]
        if res.source == "llm":
            llm_type = out.input_type
            if not step_on(shared, "classify") or offline_sure(offline):
                # Only rag_questions are taken from the model (the classify step is off, or offline is sure).
                out = out.model_copy(
                    update={
                        "input_type": offline.input_type,
                        "confidence": offline.confidence,
                        "reason": offline.reason,
                    }
                )
            elif out.input_type != "medical_question" and out.confidence < 0.7:
                if offline.input_type == "medical_question" and offline.confidence >= 0.8:  # prefer retrieval
                    out = out.model_copy(update={"input_type": "medical_question", "reason": offline.reason})
            if llm_type != offline.input_type:
                disagree(
                    shared,
                    self,
                    {
                        "step": "classify",
                        "offline": offline.input_type,
                        "llm": llm_type,
                        "kept": out.input_type,
                    },
                )
            if not step_on(shared, "expand"):
                out = out.model_copy(update={"rag_questions": []})
        history: list[Turn] = shared.get("history") or []
        if out.input_type in ("statement", "nonsense", "topic_suggest") and last_medical_turn(history):
            query = shared["query"]
            if followups.refers_back(query) or (followups.elliptic(query) and has_question(query)):
                # "nó có tự lành được không?" means nothing alone; after an answer it is a follow-up.
                out = out.model_copy(
                    update={"input_type": "medical_question", "reason": "hỏi tiếp câu trước"}
                )
        topic = await tapped_topic(shared)
        if topic:
            out = out.model_copy(update={"input_type": "topic_suggest", "reason": "chọn một chủ đề"})
            shared["topic"] = topic
        if out.input_type != "medical_question" and (shared.get("triage") or {}).get("topics"):
            # It speaks of an emergency ("xử trí ngất trên ghế nha"): a medical question, whatever its length.
            reason = "nói về một tình huống cấp cứu"
            out = out.model_copy(update={"input_type": "medical_question", "reason": reason})
        shared["input_type"] = out.input_type
        shared["classification_confidence"] = round(out.confidence, 4)
        shared["classification_reason"] = out.reason
        shared["classification_source"] = "offline" if res.source == "skipped" else res.source
        shared["rag_questions"] = (
            [q.strip() for q in out.rag_questions if q.strip()][:3]
            if out.input_type == "medical_question"
            else []
        )
        return ROUTES[out.input_type]


_TOPIC_PREFIX = re.compile(r"^(?:xem\s*)?(?:chu\s*de|muc)\s*[:\-]?\s*")


async def tapped_topic(shared: dict[str, Any]) -> str | None:
    """The topic (ĐỀ MỤC) a message names: a topic button of the previous reply, or "chủ đề <name>"."""
    query = shared.get("query") or ""
    history: list[Turn] = shared.get("history") or []
    offered = {fold_plain(q) for q in history[-1].suggestions} if history else set()
    folded = fold_plain(query)
    named = _TOPIC_PREFIX.sub("", folded)
    if folded not in offered and named == folded:
        return None
    if len(named.split()) > 8:
        return None
    groups = await deps_of(shared).searcher.topics(role_of(shared).kb)
    return next((topic for topic, _ in groups if fold_plain(topic) == named), None)


# ----- retrieval --------------------------------------------------------------------------------------------


def last_medical_turn(history: list[Turn]) -> Turn | None:
    for turn in reversed(history):
        if turn.input_type in ("", "medical_question"):
            return turn
    return None


def threshold_of(shared: dict[str, Any]) -> float:
    """The answer threshold: the role's override, else the settings'."""
    role = role_of(shared)
    return (
        role.score_threshold if role.score_threshold is not None else deps_of(shared).config.score_threshold
    )


@register
class RetrieveFromKB(Node):
    """Role-filtered search with the query and the rag_questions; a follow-up is decided on evidence
    (``engine.followups``). A message that refers back ("còn bị sưng thì sao?") or is elliptic is also searched
    with its context — the topic (ĐỀ MỤC) of the entry that answered the previous question, or that question
    itself when it was not answered from the KB — without the entry just given, and the better-supported
    reading wins; a message that stands on its own is answered as asked. A two-part question whose parts are
    each answered confidently by different entries keeps both (``second_part``)."""

    max_retries = 2
    wait = 0.05

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        cfg = deps.config
        self.timeout = cfg.search_timeout
        query, history = shared["query"], shared.get("history") or []
        rag = list(shared.get("rag_questions") or [])
        prev = last_medical_turn(history)
        refers = prev is not None and followups.refers_back(query)
        role = role_of(shared).kb
        contexts: list[str] = []
        own = followups.own_words(query) if refers and followups.is_correction(query) else query
        if prev is not None and (refers or followups.elliptic(query)):
            topic = await deps.searcher.topic_of(role, prev.citations) if prev.citations else ""
            # Read with the previous answer's topic, and with the previous question itself.
            contexts = [f"{topic or prev.user_text} {own}", f"{prev.user_text} {followups.own_words(query)}"]
        return {
            "searcher": deps.searcher,
            "role": role,
            "query": query,
            "own": own,
            "contexts": list(dict.fromkeys(contexts)),
            "refers": refers,
            "suggestions": list(history[-1].suggestions) if history else [],
            "extra": tuple(rag),
            "top_k": cfg.top_k,
            "k": cfg.candidate_k if (deps.llm is not None and rag) else cfg.top_k,
            "exclude": set(prev.citations) if prev else set(),
            "threshold": threshold_of(shared),
        }

    async def exec(self, p: dict[str, Any]) -> dict[str, Any]:
        """The searches only (retried on a store failure); reading their results is ``post``'s."""
        search, role = p["searcher"].search, p["role"]
        parts = [] if p["contexts"] else followups.split_parts(p["query"])
        prefetch = getattr(p["searcher"], "prefetch", None)
        if prefetch is not None:  # every text searched below, embedded while the first searches run
            later = [*p["contexts"]] if p["contexts"] else (parts if len(parts) == 2 else [])
            prefetch(role, [p["own"], *p["extra"], *later])
        own = await search(role, p["own"], extra_queries=p["extra"], k=p["k"])
        out: dict[str, Any] = {
            "own": list(own.hits),
            "timings": dict(own.timings or {}),
            "vectors": dict(own.vectors),
        }
        if p["extra"]:  # the model's rag_questions joined the search: what offline mode would have found
            out["plain"] = list((await search(role, p["own"], k=p["top_k"])).hits)
        if p["contexts"]:
            out["context"] = []
            for context in p["contexts"]:
                ctx = await search(role, context, extra_queries=p["extra"], k=p["k"], exclude=p["exclude"])
                out["context"].append(list(ctx.hits))
        elif len(parts) == 2 and own.hits:
            out["parts"] = [list((await search(role, part, k=3)).hits) for part in parts]
        return out

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> dict[str, Any]:
        log.error("retrieval failed for role %s: %r", p["role"], exc)
        return {"own": [], "timings": {"error": str(exc)[:200]}}

    async def post(self, shared: dict[str, Any], p: dict[str, Any], res: dict[str, Any]) -> str:
        hits = dedup_hits(res["own"])
        query, follow_up = p["own"], False
        if "context" in res:
            ctx_hits = [h for h in best_of(res["context"]) if h.entry.code not in p["exclude"]]
            reading = followups.choose(
                hits,
                ctx_hits,
                refers=p["refers"],
                threshold=p["threshold"],
                suggestions=p["suggestions"],
                query=p["query"],
            )
            shared["follow_up_reason"] = reading.reason
            if reading.follow_up:
                hits, query, follow_up = reading.hits, p["contexts"][0], True
        plain: list[Hit] = res.get("plain") or []
        if plain and not follow_up and plain[0].score >= p["threshold"]:
            hits = self.pin(shared, plain[0], hits)
        second = second_part(hits, res.get("parts") or [], p["threshold"])
        if second is not None:  # both parts answered: the second entry is a candidate too
            hits = [hits[0], second, *[h for h in hits[1:] if h.entry.code != second.entry.code]]
            shared["second_part"] = second
        shared["is_follow_up"] = follow_up
        shared["retrieval_query"] = query
        shared["retrieved"] = hits
        shared["retrieval_score"] = round(hits[0].score, 4) if hits else 0.0
        shared["retrieval_timings"] = res["timings"]
        # The message as asked, for the other roles' KBs when this one has nothing (ScoreDecisionNode). Not a
        # message that refers back or has no subject of its own: "còn mắt thì sao?" or "điều trị thế nào?" means
        # something only in this conversation, and its bare words matched "…thì sao?" in another section.
        shared["query_search"] = (
            {} if p["contexts"] else {"query": p["own"], "extra": p["extra"], "vectors": res.get("vectors")}
        )
        # Why an answer was or was not given: each leg's rank and score and the calibrated probability.
        self.trace_extra["retrieval"] = {"threshold": p["threshold"], "hits": [h.trace() for h in hits[:5]]}
        return "default"

    def pin(self, shared: dict[str, Any], top: Hit, hits: list[Hit]) -> list[Hit]:
        """The offline top entry clears the threshold: it stays first whatever the rag_questions found."""
        shared["pinned"] = top.entry.code
        if hits and hits[0].entry.code == top.entry.code:
            return hits
        llm_top = hits[0].entry.code if hits else None
        disagree(
            shared,
            self,
            {"step": "expand", "offline": top.entry.code, "llm": llm_top, "kept": top.entry.code},
        )
        return [top, *[h for h in hits if h.entry.code != top.entry.code]]


def best_of(readings: list[list[Hit]]) -> list[Hit]:
    """The hits of several readings of one message, each entry at its best score, best first."""
    best: dict[str, Hit] = {}
    for hit in (h for hits in readings for h in hits):
        if hit.entry.code not in best or hit.score > best[hit.entry.code].score:
            best[hit.entry.code] = hit
    return sorted(best.values(), key=lambda h: -h.score)


def second_part(hits: list[Hit], parts: list[list[Hit]], threshold: float) -> Hit | None:
    """The entry answering the other part of a two-part question, when both parts are answered confidently by
    different entries and the whole question's best entry answers one of them."""
    if not hits or len(parts) != 2 or any(not p or p[0].score < threshold for p in parts):
        return None
    first, other = parts[0][0], parts[1][0]
    if first.entry.code == other.entry.code:
        return None
    if hits[0].entry.code == first.entry.code:
        return other
    return first if hits[0].entry.code == other.entry.code else None


class PruneOut(BaseModel):
    keep_codes: list[str] = Field(min_length=1, max_length=30)


@register
class Pruning(StructuredNode):
    """When candidates exceed the threshold and an LLM is configured, it keeps the top N for composing.
    Any failure or invalid reply keeps the original list (deduplicated by code)."""

    step = "prune"
    output_model = PruneOut
    system_template = prompts.PRUNE_SYSTEM
    user_template = prompts.PRUNE_USER
    max_output_chars = 2000
    max_tokens = 200

    def context(self, shared: dict[str, Any]) -> dict[str, Any]:
        cfg = deps_of(shared).config
        hits = dedup_hits(shared.get("retrieved") or [])
        return {
            "hits": hits,
            "threshold": cfg.prune_threshold,
            "keep": cfg.prune_keep,
            "query": shared["query"],
            "rag_questions": "; ".join(shared.get("rag_questions") or []) or "(none)",
            "candidates_text": "\n".join(
                f"{h.entry.code}: {h.entry.question} — {h.entry.topic}" for h in hits
            ),
        }

    def skip(self, prep: dict[str, Any]) -> list[Hit] | None:
        ctx = prep["ctx"]
        if prep["llm"] is None or len(ctx["hits"]) <= ctx["threshold"]:
            return ctx["hits"]
        return None

    def guardrails(self, out: PruneOut, prep: dict[str, Any]) -> list[str]:
        known = {h.entry.code for h in prep["ctx"]["hits"]}
        unknown = [c for c in out.keep_codes if c not in known]
        return [f"keep_codes has {len(unknown)} unknown code(s); use only candidate codes"] if unknown else []

    async def offline(self, prep: dict[str, Any]) -> list[Hit]:
        return prep["ctx"]["hits"]

    async def apply(self, shared: dict[str, Any], prep: dict[str, Any], res: Structured) -> str:
        hits: list[Hit] = prep["ctx"]["hits"]
        if res.source == "llm":
            by_code = {h.entry.code: h for h in hits}
            kept = dedup_hits([by_code[c] for c in res.value.keep_codes])[: prep["ctx"]["keep"]]
            pinned = shared.get("pinned")
            if pinned in by_code and (not kept or kept[0].entry.code != pinned):
                # The model may reorder and drop candidates, never the confident offline answer.
                llm_top = kept[0].entry.code if kept else None
                disagree(shared, self, {"step": "prune", "offline": pinned, "llm": llm_top, "kept": pinned})
                kept = [by_code[pinned], *[h for h in kept if h.entry.code != pinned]]
        else:
            kept = res.value
        shared["pruning"] = {
            "before": len(hits),
            "after": len(kept),
            "source": res.source,
            "error": res.error,
        }
        if res.source != "skipped":
            log.info("pruning %s: %d → %d candidates", res.source, len(hits), len(kept))
        shared["retrieved"] = kept
        shared["retrieval_score"] = round(max((h.score for h in kept), default=0.0), 4)
        return "default"


def other_roles(shared: dict[str, Any]) -> list[Role]:
    """The roles a message that the current role's KB cannot answer may be pointed to: the other roles of
    the deployment (``switch_roles``, given by the caller: the roles the user may pick; else every configured
    role) of the same kind (patients' for a patient, clinicians' for a clinician) that read another KB."""
    current = role_of(shared)
    roles = deps_of(shared).roles
    keys = shared.get("switch_roles")
    seen = {current.kb}
    out: list[Role] = []
    for key in roles if keys is None else keys:
        role = roles.get(key)
        if role is None or role.clinician != current.clinician or role.kb in seen:
            continue
        seen.add(role.kb)
        out.append(role)
    return out


def singled_out(hit: Hit) -> bool:
    """Both legs rank the entry first and its words match above the KB's near-miss level (the calibration's
    ``sparse_excess``): the KB has something on the message even when a close second keeps the probability that
    this very entry is meant low ("đang niềng răng thì đánh răng sao": "Đang niềng răng vệ sinh thế nào cho
    đúng?" and "Bao nhiêu tuổi thì niềng răng được?"), so the patient is asked which, not told there is nothing."""
    features = getattr(hit, "features", None) or {}
    return hit.sparse_rank == 1 and hit.dense_rank == 1 and features.get("sparse_excess", 0.0) > 0


def role_threshold(role: Role, default: float) -> float:
    return role.score_threshold if role.score_threshold is not None else default


@register
class ScoreDecisionNode(Node):
    """Fused calibrated top score vs the threshold (role override, else settings):
    ≥ threshold → compose_answer; ≥ clarify_threshold → clarify; else topic_suggest (honest "no match"),
    except that an entry both legs rank first above the KB's near-miss level (``singled_out``) is offered in a
    clarify — unless another role answers the message, which is then offered with the "no match" reply.

    No match, or a clarify, on a message that stands on its own (not one read with the previous answer, such
    as "còn mắt thì sao?"): the message as asked is searched in the other roles' KBs (``other_roles``:
    patients' for a patient, clinicians' for a clinician) by the same search and calibration, with the query
    vectors the first search computed (nothing is embedded again). The best role whose top entry reaches that
    role's own threshold is offered (``switch_role``) — on the clarify path only when its probability is also
    above this role's best entry's, and on both only when the message is closer in meaning (dense cosine) to
    that entry than to every entry this role found — the reply says so (a clarify keeps its own list under the offer) and the
    channels show a button; the user's role is never changed here. The trace records every role checked (top
    entry, probability) and the offer."""

    actions = ("compose_answer", "clarify", "topic_suggest")
    max_retries = 1

    async def prep(self, shared: dict[str, Any]) -> dict[str, Any]:
        deps = deps_of(shared)
        cfg = deps.config
        threshold = threshold_of(shared)
        hits: list[Hit] = shared.get("retrieved") or []
        answerable = bool(hits) and bool((hits[0].entry.answer or "").strip())
        score = shared.get("retrieval_score", 0.0)
        if score >= threshold and answerable:
            action = "compose_answer"
        elif hits and score >= cfg.clarify_threshold:
            action = "clarify"
        elif hits and singled_out(hits[0]):
            action = "clarify"  # unless another section answers it (``post``)
        else:
            action = "topic_suggest"  # no match
        asked = shared.get("query_search") or {}
        self.timeout = cfg.search_timeout
        return {
            "score": score,
            "threshold": threshold,
            "action": action,
            "searcher": deps.searcher,
            "top_k": cfg.top_k,
            "default_threshold": cfg.score_threshold,
            # only on the "no match" and clarify paths, and only when the first search ran (its vectors are known)
            "others": other_roles(shared)
            if action in ("topic_suggest", "clarify") and asked.get("vectors") is not None
            else [],
            "asked": asked,
            "singled_out": action == "clarify" and score < cfg.clarify_threshold,
            # how close in meaning the message is to this role's nearest entry (0 without the dense leg)
            "own_dense": max((h.dense_score for h in hits), default=0.0),
        }

    async def exec(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        checked: list[dict[str, Any]] = []
        asked = p["asked"]
        for role in p["others"]:
            found = await p["searcher"].search(
                role.kb,
                asked["query"],
                extra_queries=asked["extra"],
                k=p["top_k"],
                vectors=asked["vectors"],
            )
            top = found.hits[0] if found.hits else None
            threshold = role_threshold(role, p["default_threshold"])
            # Offered only when the message is also closer in meaning to that entry than to any of this role's:
            # a frame the two KBs share ("chăm sóc … thế nào", "bao lâu … một lần") can make the other KB's
            # entry on another subject look sure ("chăm sóc răng thế nào" → the diabetes KB's foot care).
            closer = not (p["own_dense"] and top is not None and top.dense_score <= p["own_dense"])
            checked.append(
                {
                    "role": role.key,
                    "code": top.entry.code if top else None,
                    "probability": round(top.score, 4) if top else 0.0,
                    "threshold": threshold,
                    "dense": round(top.dense_score, 4) if top else 0.0,
                    "answers": top is not None
                    and top.score >= threshold
                    and closer
                    and bool((top.entry.answer or "").strip()),
                }
            )
        return checked

    async def exec_fallback(self, p: dict[str, Any], exc: BaseException) -> list[dict[str, Any]]:
        log.warning("cross-role check failed: %r", exc)
        return []

    async def post(self, shared: dict[str, Any], p: dict[str, Any], checked: list[dict[str, Any]]) -> str:
        action = p["action"]
        offer = None
        if p["others"]:
            answering = [c for c in checked if c["answers"]]
            if action == "clarify" and not p["singled_out"]:
                # this role has candidates: another is offered only when it fits better
                answering = [c for c in answering if c["probability"] > p["score"]]
            offer = max(answering, key=lambda c: c["probability"])["role"] if answering else None
            if offer is not None:
                shared["switch_role"] = offer
            self.trace_extra["cross_role"] = {"checked": checked, "offer": offer}
        if p["singled_out"] and offer is not None:
            action = "topic_suggest"  # another section answers it: that offer, not a list of weak candidates
        if action == "topic_suggest":
            shared["no_match"] = True
        shared["decision"] = {"score": p["score"], "threshold": p["threshold"], "action": action}
        return action
