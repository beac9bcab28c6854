"""The medical flow as data, and ``run_medical_flow`` — the one entry point every channel calls.

``MEDICAL_FLOW`` is the declarative definition the bot really runs (``build_flow`` turns it into nodes);
``flow_to_mermaid(MEDICAL_FLOW)`` draws it for ``medbot flow show`` (also ``python -m engine.flows``).
``run_medical_flow`` never raises: any unexpected error becomes a polite apology with the disclaimer.

The output is one ``engine.result.FlowResult``. Its ``confidence``: the retrieval score when the answer comes
from the KB, 1.0 for an emergency, else the classification confidence. ``llm``: per LLM step, its model
time, tokens, calls and outcome (also in the step's trace record); ``disagreements``: where the model and
the offline path disagreed, and what was kept.

LLM time budget: every LLM step of one message shares ``EngineConfig.llm_budget`` seconds from the start of
the flow, less a small reserve for the offline steps after the last call (``llm_reserve``), so that even with
a model that never answers the message is answered within the budget. The caller may set ``llm_allowed``
False in the shared store to answer one message with no LLM at all (fair use, …).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from engine import clinic_nodes, nodes, reply_nodes, texts  # noqa: F401  (the node modules register their types)
from engine.core import Flow, FlowDefinition, build_flow, flow_to_mermaid
from engine.deps import EngineDeps
from engine.llm import Usage
from engine.result import FlowResult
from engine.retrieval.search import one_kb_check_per_message

log = logging.getLogger(__name__)

MEDICAL_FLOW: FlowDefinition = {
    "name": "medical",
    "start": "ingest",
    "nodes": {
        "ingest": "IngestQuery",
        "red_flag": "RedFlagCheck",
        "memory": "LoadMemory",
        "decide": "MainDecisionAgent",
        "retrieve": "RetrieveFromKB",
        "prune": "Pruning",
        "score": "ScoreDecisionNode",
        "compose": "ComposeAnswer",
        "clarify": "ClarifyQuestionNode",
        "topics": "TopicSuggestResponse",
        "greeting": "GreetingResponse",
        "statement": "StatementResponse",
        "clinic": "ClinicServiceResponse",
        "finalize": "Finalize",
    },
    "edges": [
        ["ingest", "default", "red_flag"],
        ["red_flag", "default", "memory"],
        ["red_flag", "emergency", "finalize"],
        ["red_flag", "invalid", "finalize"],
        ["memory", "default", "decide"],
        ["decide", "retrieve_kb", "retrieve"],
        ["decide", "greeting", "greeting"],
        ["decide", "topic_suggest", "topics"],
        ["decide", "statement", "statement"],
        ["decide", "nonsense", "topics"],
        # Messages about the clinic, one edge each: a staff handoff re-points "human" and "complaint".
        ["decide", "booking", "clinic"],
        ["decide", "human", "clinic"],
        ["decide", "complaint", "clinic"],
        ["decide", "praise", "clinic"],
        ["decide", "clinic_info", "clinic"],
        ["decide", "thanks", "clinic"],
        ["decide", "goodbye", "clinic"],
        ["decide", "english", "clinic"],
        ["retrieve", "default", "prune"],
        ["prune", "default", "score"],
        ["score", "compose_answer", "compose"],
        ["score", "clarify", "clarify"],
        ["score", "topic_suggest", "topics"],
        ["greeting", "default", "topics"],
        ["compose", "default", "finalize"],
        ["clarify", "default", "finalize"],
        ["topics", "default", "finalize"],
        ["statement", "default", "finalize"],
        ["clinic", "default", "finalize"],
    ],
}

# With a staff handoff (EngineConfig.handoff): the same graph, "human" and "complaint" re-pointed at it.
HANDOFF_ROUTES = ("human", "complaint")
HANDOFF_FLOW: FlowDefinition = {
    **MEDICAL_FLOW,
    "name": "medical_handoff",
    "nodes": {**MEDICAL_FLOW["nodes"], "handoff": "StaffHandoff"},
    "edges": [
        *(
            [src, action, "handoff" if src == "decide" and action in HANDOFF_ROUTES else dst]
            for src, action, dst in MEDICAL_FLOW["edges"]
        ),
        ["handoff", "default", "finalize"],
    ],
}

_flows: dict[bool, Flow] = {}


def medical_flow(handoff: bool = False) -> Flow:
    """The graph (with the handoff's routes when ``handoff``), built once per process (nodes are copied per
    run, so sharing it is safe)."""
    if handoff not in _flows:
        _flows[handoff] = build_flow(HANDOFF_FLOW if handoff else MEDICAL_FLOW)
    return _flows[handoff]


def _result(shared: dict[str, Any], t0: float, deps: EngineDeps) -> FlowResult:
    """The typed result of a run, read from the shared store once the flow is done."""
    offered = shared.get("no_match") or (shared.get("decision") or {}).get("action") == "clarify"
    switch = str(shared.get("switch_role") or "") if offered else ""
    if switch not in deps.roles:
        switch = ""
    confidence = shared.get("confidence")
    if confidence is None:
        confidence = shared.get("classification_confidence", 0.0)
    return FlowResult(
        text=shared.get("explain", ""),
        input_type=shared.get("input_type", ""),
        suggestions=list(shared.get("suggestion_questions") or []),
        citations=list(shared.get("citations") or []),
        retrieval_score=float(shared.get("retrieval_score", 0.0)),
        confidence=float(confidence),
        red_flag=bool(shared.get("red_flag", False)),
        emergency_categories=list(shared.get("red_flag_categories") or []),
        disclaimer_shown=bool(shared.get("disclaimer_shown", False)),
        answer_source=str(shared.get("answer_source") or ""),
        usage=shared.get("usage") or Usage(),
        llm=dict(shared.get("llm_steps") or {}),
        disagreements=list(shared.get("disagreements") or []),
        trace=list(shared.get("trace") or []),
        latency_ms=round((time.perf_counter() - t0) * 1000, 2),
        switch_role=switch,
        handoff=str(shared.get("handoff") or ""),
        switch_label=texts.SWITCH_BUTTON.format(section=deps.roles[switch].name) if switch else "",
    )


def llm_reserve(budget: float) -> float:
    """Seconds of the budget kept for the offline steps that follow the last LLM call."""
    return min(0.5, 0.15 * budget)


async def run_medical_flow(deps: EngineDeps, shared: dict[str, Any]) -> FlowResult:
    """Run the medical flow on ``shared`` ({role, input, conversation_id, history?, user_id, channel}).

    Returns the typed ``FlowResult``; the rest of the shared store stays in ``shared`` for the caller's logs."""
    t0 = time.perf_counter()
    shared["deps"] = deps
    shared.setdefault("trace", [])
    budget = deps.config.llm_budget
    shared["llm_deadline"] = time.monotonic() + budget - llm_reserve(budget)
    try:
        with one_kb_check_per_message():
            await medical_flow(deps.config.handoff).run(shared)
    except Exception:
        log.exception("medical flow failed")
        shared.pop("switch_role", None)  # the reply is an apology: nothing to offer
        if shared.get("red_flag") or shared.get("emergency_card"):  # never lose the emergency answer
            parts = [*shared.get("answer_parts", []), shared.get("emergency_card", "")]
            parts = [p for p in parts if p]
        else:
            parts = [texts.APOLOGY]
            shared["input_type"] = shared.get("input_type") or "error"
        shared["explain"] = "\n\n".join([*parts, deps.config.disclaimer])
        shared["disclaimer_shown"] = bool(deps.config.disclaimer)
    finally:
        shared.pop("deps", None)
        shared.pop("llm_deadline", None)
    return _result(shared, t0, deps)


if __name__ == "__main__":
    print(flow_to_mermaid(MEDICAL_FLOW))
