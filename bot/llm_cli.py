"""``medbot llm check``: whether the configured LLM helps, hurts or breaks each step (``engine.llm_check``).

The report is kept in ``MEDBOT_DATA_DIR/llm_check.json``; ``bot.wiring`` reads it when it builds the engine,
so a step that hurts or breaks is switched off (with a log line) in every process started afterwards. The
admin's ``LLM_STEPS`` setting (``prune=on,compose=off``) overrides the check.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from bot.runtime import open_runtime
from bot.wiring import engine_deps
from db.settings import Settings
from engine.llm_check import check_model, parse_override, steps_from

log = logging.getLogger(__name__)


def check_file(settings: Settings) -> Path:
    return settings.medbot_data_dir / "llm_check.json"


def last_check(settings: Settings) -> dict[str, Any] | None:
    path = check_file(settings)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


async def llm_check(args: argparse.Namespace, settings: Settings) -> int:
    if not settings.llm_enabled:
        print("medbot llm check: no LLM configured (OPENAI_API_KEY): the bot runs offline")
        return 2
    runtime = await open_runtime(settings)
    try:
        deps = engine_deps(runtime)
        assert deps.llm is not None
        report = (await check_model(deps, args.role, args.questions)).as_dict()
        await deps.llm.aclose()
    finally:
        await runtime.close()
    report["model"] = settings.openai_model
    report["structured_outputs"] = deps.llm.structured
    steps = steps_from(report, parse_override(settings.llm_steps))
    report["switches"] = steps
    print(f"model {settings.openai_model} on {args.role}: {report['n']} messages, "
          f"offline right {report['offline_right']}")  # fmt: skip
    print(f"{'step':<9} {'verdict':<8} {'right':>5} {'calls':>5} {'fallbacks':>9} {'model s':>8} {'tokens':>7}  switch")
    for name, res in report["steps"].items():
        print(f"{name:<9} {res['verdict']:<8} {res['right']:>5} {res['calls']:>5} {res['fallbacks']:>9} "
              f"{res['ms'] / 1000:>8.1f} {res['tokens']:>7}  {'on' if steps[name] else 'off'}")  # fmt: skip
    path = check_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print(f"wrote {path}; LLM_STEPS overrides (e.g. LLM_STEPS=prune=on)")
    return 0
