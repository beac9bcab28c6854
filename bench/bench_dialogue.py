"""Multi-turn accuracy on the labelled dialogue set (issue 19): ``tests/data/dialogues.jsonl``, 170 short
dialogues written from the sample KB (follow-ups, topic switches, corrections, suggestion taps, messages about
the clinic, two-part questions), through the path of ``medbot eval dialogue`` — the same figures as

    medbot eval dialogue tests/data/dialogues.jsonl

on the development database (the sample KB is imported first when the KB is empty, as ``medbot setup`` does),
with the configured embedding backend.

"Before" is the code this issue started from (commit c524a70), measured once on the same set with the same
scoring: each dialogue one fresh console user (one conversation) through that commit's
``ChatService.handle_text``, llama.cpp embeddings, its per-turn results kept in
``bench/data/dialogue_before_c524a70.json`` (that commit has no ``eval dialogue``; the turns were sent by a
12-line script in a worktree of it) and scored here by ``bot.dialogue_eval``'s rules.

A turn is right when the cited codes are exactly the expected ones; a wrong answer is a reply from an entry
that is not expected. Writes bench/results/dialogue.json.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from bench.output import write_json
from bot.dialogue_eval import Figures, TurnResult, evaluate_dialogues, read_dialogues
from bot.runtime import open_runtime
from bot.setup import setup
from bot.wiring import build_service
from db.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
DIALOGUES = ROOT / "tests" / "data" / "dialogues.jsonl"
BEFORE = ROOT / "bench" / "data" / "dialogue_before_c524a70.json"
OUT = ROOT / "bench" / "results" / "dialogue.json"


def before_figures(dialogues: list[dict]) -> Figures:
    by_id = {d["id"]: d for d in dialogues}
    figures = Figures()
    for row in json.loads(BEFORE.read_text(encoding="utf-8")):
        turn = by_id[row["dialogue"]]["turns"][row["index"]]
        figures.turns.append(
            TurnResult(
                dialogue=row["dialogue"],
                index=row["index"],
                kind=row["kind"],
                text=row["text"],
                expect=row["expect"],
                cited=row["cited"],
                input_type=row["input_type"],
                offered=row["offered"],
                any_of=list(turn.get("expect_any") or []),
            )
        )
    return figures


async def run() -> dict[str, object]:
    settings = load_settings()
    await setup(settings)
    dialogues = read_dialogues(DIALOGUES)
    runtime = await open_runtime(settings)
    try:
        after = await evaluate_dialogues(await build_service(runtime), dialogues)
    finally:
        await runtime.close()
    before = before_figures(dialogues)
    return {
        "set": str(DIALOGUES.relative_to(ROOT)),
        "embedding_backend": settings.embedding_backend,
        "before_c524a70": before.as_dict(),
        "after": after.as_dict(),
        "wrong_after": [
            {"dialogue": t.dialogue, "turn": t.index, "kind": t.kind, "text": t.text, "cited": t.cited}
            for t in after.turns
            if t.wrong
        ],
        "wrong_before": [
            {"dialogue": t.dialogue, "turn": t.index, "kind": t.kind, "text": t.text, "cited": t.cited}
            for t in before.turns
            if t.wrong
        ],
    }


def main() -> int:
    result = asyncio.run(run())
    before, after = result["before_c524a70"], result["after"]
    assert isinstance(before, dict) and isinstance(after, dict)
    print(
        f"{'kind':<12} {'turns':>5} {'right before':>13} {'right after':>12} {'wrong before':>13} {'wrong after':>12}"
    )
    for kind in sorted(after["by_kind"]):
        b, a = before["by_kind"].get(kind, {}), after["by_kind"][kind]
        print(f"{kind:<12} {a['turns']:>5} {b.get('right', 0):>13} {a['right']:>12} "
              f"{b.get('wrong_answers', 0):>13} {a['wrong_answers']:>12}")  # fmt: skip
    print(f"{'all':<12} {after['turns']:>5} {before['right']:>13} {after['right']:>12} "
          f"{before['wrong_answers']:>13} {after['wrong_answers']:>12}")  # fmt: skip
    print(f"turn accuracy {before['accuracy']:.1%} → {after['accuracy']:.1%}")
    write_json(OUT, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
