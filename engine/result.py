"""``FlowResult``: what the medical flow hands to a channel, typed — built once, at the end of a run.

Every channel reads the engine's answer through this one object's attributes (``bot.service.ChatService``
stores it with the exchange and gives it to Telegram, Zalo and the console inside its ``Reply``); the rest
of the flow's shared store stays internal to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.llm import Usage


@dataclass(frozen=True, slots=True)
class FlowResult:
    """One answered message.

    ``text``: the whole reply as plain text (the KB answer framed for the role, its source line, the
    emergency card of a clinician's role, the disclaimer last where it matters); channels escape and split it.
    ``input_type``: what the message was taken for (``medical_question``, ``greeting``, ``booking``…, or
    ``emergency``, ``invalid``, ``error``). ``suggestions``: follow-up questions or topics, offered as buttons
    (a topic list may be long: channels page it). ``citations``: the KB codes the answer relies on (empty when
    it is not an answer from the KB). ``confidence``: the retrieval score for an answer from the KB, 1.0 for
    an emergency, else the classification confidence.
    """

    text: str
    input_type: str = ""
    suggestions: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    retrieval_score: float = 0.0
    confidence: float = 0.0
    # an emergency: the 115 answer (a patient) or the card after the answer (a clinician)
    red_flag: bool = False
    # what triage found, when it found something
    emergency_categories: list[str] = field(default_factory=list)
    disclaimer_shown: bool = False  # the reply ends with the disclaimer line
    answer_source: str = ""  # "llm" or "offline" for an answer from the KB, else ""
    usage: Usage = field(default_factory=Usage)  # LLM tokens and calls of the whole message
    llm: dict[str, dict[str, Any]] = field(default_factory=dict)  # per LLM step: time, tokens, calls, outcome
    disagreements: list[dict[str, Any]] = field(default_factory=list)  # the model vs the offline path
    trace: list[dict[str, Any]] = field(default_factory=list)  # one record per node run (engine.core)
    latency_ms: float = 0.0
    # no match (or only a clarify list) in this role's KB, but the KB of this other role (a key) answers the
    # message: the reply says so and the channel offers to switch (the flow never switches by itself)
    switch_role: str = ""
    # with a staff handoff available: the message asks for one ("human" or "complaint"); ``text`` is then the
    # honest reply for when none can be opened (the caller opens it and says so instead)
    handoff: str = ""
    switch_label: str = ""  # its button: "Chuyển sang mục Tiểu đường"
