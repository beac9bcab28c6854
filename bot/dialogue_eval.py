"""``medbot eval dialogue FILE``: multi-turn accuracy on labelled dialogues, through the path of ``medbot ask
--conversation`` (the production ChatService, engine, memory and database).

FILE is JSONL, one dialogue a line::

    {"id": "d001", "role": "patient_dental", "turns": [
        {"say": "Răng khôn mọc lệch có cần nhổ không?", "expect": "NK-013", "kind": "start"},
        {"say": "còn bị sưng thì sao?", "expect": "NK-014", "kind": "follow"},
        {"tap": "Trẻ mấy tuổi thì bắt đầu chải răng?", "expect": "NK-021", "kind": "tap"}]}

``say`` is typed; ``tap`` is a suggestion button of the previous reply (sent as its text, as every channel
does; a tap the previous reply did not offer is counted). ``expect`` is the KB code that should answer, a
list of codes (a two-part question: all of them), or null (no answer from the KB: a greeting, a booking, a
question the KB does not cover); ``expect_any`` instead lists entries each of which answers the turn (a bare
subject like "niềng răng" that two entries answer equally). ``kind`` (start, follow, switch, correction, tap, service, two_part) groups
the figures.

Per turn: **right** when the cited codes are exactly the expected ones (none for null); **wrong answer** when
the bot answered from an entry that is not expected (what misleads a patient); otherwise a **miss** (an
honest "not sure", or half of a two-part question). ``section_offers`` counts the replies (declines, clarify
lists) that pointed to another section's KB ("Câu hỏi này có vẻ thuộc mục …"), per role offered. Each
dialogue is a named conversation of its own. The last line printed is the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.console import ask_one, ask_user
from bot.runtime import open_runtime
from bot.service import ChatService, Reply
from bot.wiring import chat_service
from db.settings import Settings


@dataclass(slots=True)
class TurnResult:
    dialogue: str
    index: int
    kind: str
    text: str
    expect: list[str]
    cited: list[str]
    input_type: str
    offered: bool = True  # a tap: whether the previous reply offered it
    any_of: list[str] = field(default_factory=list)  # each of these alone answers the turn
    switch_role: str | None = None  # the reply (a decline or a clarify) offered this other section

    @property
    def right(self) -> bool:
        if self.any_of:
            return len(self.cited) == 1 and self.cited[0] in self.any_of
        return sorted(self.cited) == sorted(self.expect)

    @property
    def wrong(self) -> bool:
        return bool(self.cited) and not set(self.cited) <= set(self.expect or self.any_of)


@dataclass(slots=True)
class Figures:
    turns: list[TurnResult] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        def block(rows: list[TurnResult]) -> dict[str, Any]:
            n = len(rows)
            right = sum(r.right for r in rows)
            return {
                "turns": n,
                "right": right,
                "accuracy": round(right / n, 4) if n else None,
                "wrong_answers": sum(r.wrong for r in rows),
            }

        kinds = sorted({r.kind for r in self.turns})
        return {
            "dialogues": len({r.dialogue for r in self.turns}),
            **block(self.turns),
            "taps_not_offered": sum(not r.offered for r in self.turns),
            # replies that offered another section ("Câu hỏi này có vẻ thuộc mục …"), per offered role
            "section_offers": dict(Counter(r.switch_role for r in self.turns if r.switch_role)),
            "by_kind": {k: block([r for r in self.turns if r.kind == k]) for k in kinds},
        }


def read_dialogues(path: Path) -> list[dict[str, Any]]:
    dialogues = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            assert isinstance(d["role"], str) and d["turns"], "cần 'role' và 'turns'"
            for t in d["turns"]:
                assert ("say" in t) != ("tap" in t), "mỗi lượt có đúng một trong 'say' hoặc 'tap'"
        except (ValueError, KeyError, AssertionError, TypeError) as exc:
            raise ValueError(f"{path}, dòng {n}: hội thoại không hợp lệ ({exc})") from exc
        d.setdefault("id", f"line{n}")
        dialogues.append(d)
    return dialogues


def _codes(expect: Any) -> list[str]:
    if expect is None:
        return []
    return [expect] if isinstance(expect, str) else list(expect)


async def run_dialogue(service: ChatService, dialogue: dict[str, Any], run: str) -> list[TurnResult]:
    """Talk one dialogue through a named conversation of its own; one result per turn."""
    name = f"eval:{run}:{dialogue['id']}"
    user = await ask_user(service, dialogue["role"], name)
    if user is None:
        raise ValueError(f"hội thoại {dialogue['id']}: không có chuyên khoa '{dialogue['role']}'")
    results: list[TurnResult] = []
    previous: Reply | None = None
    for i, turn in enumerate(dialogue["turns"]):
        text = turn.get("say") or turn["tap"]
        offered = "tap" not in turn or (previous is not None and text in previous.suggestions)
        reply = await ask_one(service, user, text, name)
        results.append(
            TurnResult(
                dialogue=dialogue["id"],
                index=i,
                kind=turn.get("kind", ""),
                text=text,
                expect=_codes(turn.get("expect")),
                cited=list(reply.citations),
                input_type=reply.input_type,
                offered=offered,
                any_of=list(turn.get("expect_any") or []),
                switch_role=reply.switch_role,
            )
        )
        previous = reply
    return results


async def evaluate_dialogues(service: ChatService, dialogues: list[dict[str, Any]]) -> Figures:
    run = uuid.uuid4().hex[:8]
    figures = Figures()
    for dialogue in dialogues:
        figures.turns += await run_dialogue(service, dialogue, run)
    return figures


def _show(r: TurnResult) -> str:
    verdict = "ĐÚNG" if r.right else ("SAI" if r.wrong else "thiếu")
    expect = ", ".join(r.expect) or " hoặc ".join(r.any_of) or "(không)"
    cited = ", ".join(r.cited) or f"(không; {r.input_type})"
    if r.switch_role:
        cited += f", gợi ý chuyển sang {r.switch_role}"
    return f"{verdict:5} {r.dialogue}#{r.index} [{r.kind}] {r.text!r}: cần {expect}, bot trả lời {cited}"


async def eval_dialogue(args: argparse.Namespace, settings: Settings) -> int:
    path = Path(args.file)
    if not path.is_file():
        print(f"medbot eval: không có tệp {path}", file=sys.stderr)
        return 2
    try:
        dialogues = read_dialogues(path)
    except ValueError as exc:
        print(f"medbot eval: {exc}", file=sys.stderr)
        return 2
    runtime = await open_runtime(settings)
    try:
        service = await chat_service(runtime)
        figures = await evaluate_dialogues(service, dialogues)
    finally:
        await runtime.close()
    if args.show != "none":
        for r in figures.turns:
            if args.show == "all" or not r.right:
                print(_show(r))
    result = figures.as_dict()
    kinds = Counter(r.kind for r in figures.turns)
    print(
        f"{result['dialogues']} hội thoại, {result['turns']} lượt ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}): "
        f"đúng {result['right']} ({result['accuracy']:.1%}), trả lời sai {result['wrong_answers']}"
    )
    print(json.dumps(result, ensure_ascii=False))
    return 0
