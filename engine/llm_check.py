"""Self-check of the configured LLM (``medbot llm check``): per step, does the model help, hurt or break?

A small labelled set — greetings, thanks, off-topic messages, and medical questions taken from the role's
own KB with the entry that answers each — goes through the medical flow offline (``llm_allowed`` False) and
then once per step with only that step switched on (classify, expand = rag_questions, prune, compose). A step

* **breaks** when at least half of the calls it made fell back to the offline result (errors, timeouts,
  replies it could not use);
* **hurts** when the answers are less often right than offline (right: the expected input type, and for a
  medical question the expected entry cited first);
* **helps** when they are more often right; else it is **neutral** (composing cannot be judged better than
  the curated answer without a judge: it is neutral unless it breaks or hurts).

``steps_from(report, override)``: the switches — a step that hurts or breaks is off, the rest on, and the
admin's override (``LLM_STEPS``, e.g. ``prune=on,compose=off``) wins. Each check gets a fresh circuit breaker
per step, so one step's failures do not hide the next one's.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from engine.deps import EngineDeps
from engine.flows import run_medical_flow
from engine.llm import CircuitBreaker
from engine.result import FlowResult
from engine.structured import LLM_STEPS

log = logging.getLogger(__name__)

GREETINGS = ("Xin chào bác sĩ", "chào bạn", "alo chào phòng khám")
THANKS = ("cảm ơn bác sĩ nhiều", "ok cảm ơn nhé")
OFF_TOPIC = ("giá vàng hôm nay bao nhiêu", "đội nào vô địch world cup 2022", "asdfgh qwerty")


@dataclass(slots=True)
class CheckItem:
    text: str
    input_type: str
    code: str | None = None


@dataclass(slots=True)
class StepResult:
    step: str
    verdict: str  # helps | hurts | breaks | neutral
    right: int
    calls: int
    fallbacks: int
    ms: float
    tokens: int


@dataclass(slots=True)
class CheckReport:
    role: str
    n: int
    offline_right: int
    steps: dict[str, StepResult] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "n": self.n,
            "offline_right": self.offline_right,
            "steps": {k: dataclasses.asdict(v) for k, v in self.steps.items()},
        }


async def labelled_set(deps: EngineDeps, role: str, n_questions: int = 12) -> list[CheckItem]:
    entries = await deps.searcher.sample_questions(role, n_questions)
    items = [CheckItem(e.question, "medical_question", e.code) for e in entries if (e.answer or "").strip()]
    items += [CheckItem(t, "greeting") for t in GREETINGS]
    items += [CheckItem(t, "thanks") for t in THANKS]
    items += [CheckItem(t, "nonsense") for t in OFF_TOPIC]
    return items


def is_right(item: CheckItem, out: FlowResult) -> bool:
    if item.code is not None:
        return out.input_type == "medical_question" and out.citations[:1] == [item.code]
    if item.input_type == "nonsense":  # off-topic: any reply that does not answer from the KB
        return not out.citations
    return out.input_type == item.input_type


def verdict(right: int, offline_right: int, calls: int, fallbacks: int) -> str:
    if calls and fallbacks * 2 >= calls:
        return "breaks"
    if right < offline_right:
        return "hurts"
    return "helps" if right > offline_right else "neutral"


async def _run_set(deps: EngineDeps, role: str, items: list[CheckItem], *, llm: bool) -> list[FlowResult]:
    outs = []
    for item in items:
        shared: dict[str, Any] = {"role": role, "input": item.text, "llm_allowed": llm}
        outs.append(await run_medical_flow(deps, shared))
    return outs


async def check_model(deps: EngineDeps, role: str, n_questions: int = 12) -> CheckReport:
    """Run the labelled set offline and with each step alone; ``deps.llm`` must be set."""
    if deps.llm is None:
        raise ValueError("no LLM configured (OPENAI_API_KEY)")
    items = await labelled_set(deps, role, n_questions)
    offline = await _run_set(deps, role, items, llm=False)
    report = CheckReport(role, len(items), sum(is_right(i, o) for i, o in zip(items, offline, strict=True)))
    for step in LLM_STEPS:
        only = {s: s == step for s in LLM_STEPS}
        step_deps = dataclasses.replace(deps, config=dataclasses.replace(deps.config, llm_steps=only))
        deps.llm.breaker = CircuitBreaker(deps.llm.breaker.threshold, deps.llm.breaker.cooldown)
        outs = await _run_set(step_deps, role, items, llm=True)
        # "expand" rides on the classify call: its record is the classify step's.
        records = [o.llm.get("classify" if step == "expand" else step) for o in outs]
        records = [r for r in records if r]
        calls = sum(1 for r in records if r["calls"])
        fallbacks = sum(1 for r in records if r["calls"] and r["source"] == "offline")
        right = sum(is_right(i, o) for i, o in zip(items, outs, strict=True))
        report.steps[step] = StepResult(
            step=step,
            verdict=verdict(right, report.offline_right, calls, fallbacks),
            right=right,
            calls=calls,
            fallbacks=fallbacks,
            ms=round(sum(r["ms"] for r in records), 1),
            tokens=sum(r["tokens"]["total"] for r in records),
        )
    return report


def parse_override(text: str) -> dict[str, bool]:
    """``"prune=off, compose=on"`` → {"prune": False, "compose": True}; unknown steps are ignored."""
    out: dict[str, bool] = {}
    for part in text.split(","):
        name, _, value = part.strip().partition("=")
        if name.strip() in LLM_STEPS and value.strip().lower() in ("on", "off", "1", "0", "true", "false"):
            out[name.strip()] = value.strip().lower() in ("on", "1", "true")
    return out


def steps_from(report: dict[str, Any] | None, override: dict[str, bool]) -> dict[str, bool]:
    """The step switches: off where the last check found the step hurts or breaks; the override wins."""
    steps = dict.fromkeys(LLM_STEPS, True)
    for name, res in ((report or {}).get("steps") or {}).items():
        if name in steps and res.get("verdict") in ("hurts", "breaks"):
            steps[name] = False
    steps.update(override)
    return steps
