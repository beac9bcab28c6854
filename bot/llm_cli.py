"""``medbot llm check``: whether the configured LLM helps, hurts or breaks each step (``engine.llm_check``).

The report is kept in ``MEDBOT_DATA_DIR/llm_check.json`` (``bot.llm_selfcheck``); ``bot.wiring`` reads it
when it builds the engine, so a step that hurts or breaks is switched off (with a log line) in every process
started afterwards. The admin's ``LLM_STEPS`` setting (``prune=on,compose=off``) overrides the check. The
same check runs at ``medbot setup`` and in the background at start (``bot.llm_selfcheck``).
"""

from __future__ import annotations

import argparse
import logging

from bot.llm_selfcheck import check_file, report_lines, run_check
from bot.runtime import open_runtime
from bot.wiring import engine_deps
from db.settings import Settings

log = logging.getLogger(__name__)


async def llm_check(args: argparse.Namespace, settings: Settings) -> int:
    if not settings.llm_enabled:
        print("medbot llm check: chưa cấu hình mô hình AI (OPENAI_API_KEY): bot đang trả lời không dùng AI")
        return 2
    runtime = await open_runtime(settings)
    try:
        deps = engine_deps(runtime)
        try:
            report = await run_check(deps, settings, args.role, args.questions)
        finally:
            assert deps.llm is not None
            await deps.llm.aclose()
    finally:
        await runtime.close()
    for line in report_lines(report):
        print(line)
    print(
        f"Đã lưu kết quả vào {check_file(settings)}; cài đặt LLM_STEPS (ví dụ LLM_STEPS=prune=on) được ưu tiên."
    )
    return 0
