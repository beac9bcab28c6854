"""A stand-in chat model for ``bench_llm``, served by :class:`~testkit.fakes.openai_server.FakeOpenAI`
(``server.model = FlowModel(...)``): it answers the three LLM steps of the medical flow (classify, prune,
compose) with a chosen behaviour.

Behaviours (``FlowModel.behaviour``):

* ``good``: a well-behaved model — the right input type for a labelled message (it is told the labels:
  an oracle, the best a model could do), the message itself as a rag_question, the candidates kept in order,
  an answer that relies on the first entry it is given;
* ``weak``: the failures the issue saw with a 0.5B model — one message in three (deterministic by its hash)
  gets a wrong input type with high confidence (a greeting read as a medical question, a question as a
  greeting), a misleading rag_question (another KB question), pruning keeps the candidates in reverse
  order (the right entry out), composing cites the last entry it was given;
* ``garbage``: prose with no JSON at all;
* ``slow``: the ``good`` replies after ``delay`` seconds (set it beyond the budget).

``delay`` (seconds before each reply) and ``error_rate`` (share of requests answered with HTTP 500, chosen
by a seeded generator) apply to every behaviour. A server without structured outputs is the server's
``structured = False``, whatever the model.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from testkit.fakes.openai_server import Reply

_USER_MESSAGE = re.compile(r"User message: (.*)\Z", re.S)
_QUESTION = re.compile(r"^Question: (.*)$", re.M)
_CANDIDATE = re.compile(r"^([A-Za-z0-9_.-]+): ", re.M)
_ENTRY = re.compile(r"^\[([^\]]+)\]", re.M)


@dataclass
class FlowModel:
    behaviour: str = "good"
    delay: float = 0.0
    error_rate: float = 0.0
    labels: dict[str, str] = field(default_factory=dict)  # message → input type (the oracle)
    distractors: list[str] = field(default_factory=list)  # KB questions a weak model wrongly searches with
    seed: int = 7

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def _unlucky(self, text: str) -> bool:
        return hashlib.sha256(text.encode()).digest()[0] % 3 == 0

    def _classify(self, text: str) -> dict[str, Any]:
        label = self.labels.get(text, "medical_question")
        rag = [text] if label == "medical_question" else []
        if self.behaviour == "weak" and self._unlucky(text):
            label = "medical_question" if label != "medical_question" else "greeting"
            pick = int(hashlib.sha256(text.encode()).hexdigest(), 16) % max(1, len(self.distractors))
            rag = [self.distractors[pick]] if self.distractors else []
        return {"input_type": label, "confidence": 0.95, "reason": "mô hình thử", "rag_questions": rag}

    def content(self, body: dict[str, Any]) -> str:
        """The assistant's text for one chat-completions request."""
        if self.behaviour == "garbage":
            return "Tôi nghĩ đây là một câu hỏi hay, bạn nên hỏi bác sĩ nhé."
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        if system.startswith("You route messages"):
            m = _USER_MESSAGE.search(user)
            out: dict[str, Any] = self._classify(m.group(1).strip() if m else user)
        elif system.startswith("You select knowledge-base entries"):
            codes = _CANDIDATE.findall(user.split("Candidates", 1)[-1])
            out = {"keep_codes": (codes[::-1] if self.behaviour == "weak" else codes)[:7]}
        else:
            codes = _ENTRY.findall(user)
            q = _QUESTION.search(user)
            used = codes[-1:] if self.behaviour == "weak" else codes[:1]
            out = {
                "explanation": f"Trả lời cho câu hỏi “{q.group(1) if q else ''}” theo tài liệu của phòng khám.",
                "suggestion_questions": [],
                "used_codes": used,
            }
        return json.dumps(out, ensure_ascii=False)

    def __call__(self, body: dict[str, Any]) -> Reply:
        """The server's reply to one request (``FakeOpenAI.model``)."""
        if self._rng.random() < self.error_rate:
            return Reply(status=500, content=None, delay=self.delay)
        text = self.content(body)
        prompt = sum(len(m.get("content") or "") for m in body["messages"]) // 4
        usage = {"prompt_tokens": prompt, "completion_tokens": len(text) // 4}
        return Reply(content=text, delay=self.delay, usage=usage)
