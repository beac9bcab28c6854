"""The self-check of the configured LLM outside the ``medbot llm check`` command: at ``medbot setup``, in the
background at start, and the note ``/stats`` shows (issue 20).

* ``run_check(deps, settings)`` runs ``engine.llm_check.check_model`` on its own LLM client (its own circuit
  breaker: the check never opens the live one) and writes the report to ``MEDBOT_DATA_DIR/llm_check.json``
  with the model, the endpoint, the time and the resulting switches. ``bot.wiring.llm_steps`` reads that file
  when it builds an engine, so every process started afterwards runs with it.
* ``start_background_check(runtime, live)``: at start, when a key is set and the last check is missing, is
  for another model or endpoint, or is older than ``CHECK_MAX_AGE``, the check runs in a background task
  while the bot already answers (offline or with the model, as before); when it ends, a step that hurts or
  breaks is switched off in the running engine (``live.config.llm_steps``) with a log line. Only for the
  first engine built after ``arm()`` (called by ``medbot run``): the CLI, tests and evaluations never start it.
* ``stats_note(settings)``: the Vietnamese line ``/stats`` shows when steps are switched off, and why.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from db.settings import Settings
from engine.deps import EngineDeps
from engine.llm import LLMClient
from engine.llm_check import check_model, parse_override, steps_from

log = logging.getLogger("medbot.llm_check")

CHECK_MAX_AGE = timedelta(days=7)
STEP_LABELS = {  # what each step is called for clinic staff
    "classify": "phân loại tin nhắn",
    "expand": "diễn đạt lại câu hỏi để tìm kiếm",
    "prune": "chọn lọc tài liệu",
    "compose": "soạn câu trả lời",
}
VERDICT_LABELS = {
    "helps": "giúp trả lời đúng hơn",
    "neutral": "không làm thay đổi độ chính xác",
    "hurts": "làm câu trả lời kém chính xác hơn",
    "breaks": "thường bị lỗi, quá chậm hoặc trả lời không dùng được",
}

_armed = False


def check_file(settings: Settings) -> Path:
    return settings.medbot_data_dir / "llm_check.json"


def last_check(settings: Settings) -> dict[str, Any] | None:
    try:
        return json.loads(check_file(settings).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_for_this_model(report: dict[str, Any], settings: Settings) -> bool:
    """Was ``report`` made for the configured model at the configured endpoint? (A check of another model
    says nothing about this one.)"""
    return report.get("model") == settings.openai_model and report.get("base_url") == settings.openai_base_url


def current_check(settings: Settings) -> dict[str, Any] | None:
    """The last check when it was made for the configured model and endpoint, else None."""
    report = last_check(settings)
    return report if report and is_for_this_model(report, settings) else None


def check_due(settings: Settings, now: datetime | None = None) -> bool:
    """Is a check needed at start? A key is set and the last check is missing, is for another model or
    endpoint, or is older than ``CHECK_MAX_AGE``."""
    if not settings.llm_enabled:
        return False
    report = last_check(settings)
    if not report:
        return True
    if not is_for_this_model(report, settings):
        return True
    try:
        checked = datetime.fromisoformat(report["checked_at"])
    except (KeyError, TypeError, ValueError):
        return True
    return (now or datetime.now(UTC)) - checked > CHECK_MAX_AGE


async def run_check(deps: EngineDeps, settings: Settings, role: str, n_questions: int = 12) -> dict[str, Any]:
    """Run the check with ``deps`` (its LLM client's breaker is replaced per step: give it a client of its
    own, not the live one) and write the report."""
    if deps.llm is None:
        raise ValueError("no LLM configured (OPENAI_API_KEY)")
    report = (await check_model(deps, role, n_questions)).as_dict()
    report["model"] = settings.openai_model
    report["base_url"] = settings.openai_base_url
    report["checked_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    report["structured_outputs"] = deps.llm.structured
    report["switches"] = steps_from(report, parse_override(settings.llm_steps))
    path = check_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.part")
    tmp.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    tmp.replace(path)
    return report


def apply_switches(live: EngineDeps, report: dict[str, Any], settings: Settings) -> list[str]:
    """Switch the running engine's steps as the report says (the admin's LLM_STEPS still wins); log and
    return the steps switched off."""
    switches = steps_from(report, parse_override(settings.llm_steps))
    off = []
    for name, on in switches.items():
        if live.config.llm_steps.get(name, True) and not on:
            verdict = (report.get("steps") or {}).get(name, {}).get("verdict", "switched off by LLM_STEPS")
            log.warning("LLM step %s switched off by the self-check (%s): offline there", name, verdict)
            off.append(name)
        live.config.llm_steps[name] = on
    return off


def report_lines(report: dict[str, Any]) -> list[str]:
    """The check as a short table in Vietnamese, for the CLI and ``medbot setup``."""
    switches = report.get("switches") or {}
    lines = [
        f"Mô hình {report.get('model')} với vai trò {report['role']}: {report['n']} tin nhắn mẫu, "
        f"không dùng mô hình trả lời đúng {report['offline_right']}",
        f"{'bước':<9} {'đánh giá':<8} {'đúng':>5} {'lần gọi':>7} {'lỗi':>5} {'giây':>6} {'token':>7}  trạng thái",
    ]
    for name, res in (report.get("steps") or {}).items():
        lines.append(
            f"{name:<9} {res['verdict']:<8} {res['right']:>5} {res['calls']:>7} {res['fallbacks']:>5} "
            f"{res['ms'] / 1000:>6.1f} {res['tokens']:>7}  {'bật' if switches.get(name, True) else 'TẮT'}"
        )
    return lines


async def check_at_setup(
    make_deps: Callable[[], EngineDeps], settings: Settings, echo: Callable[[str], None]
) -> None:
    """``medbot setup`` with a key: check the model now and print the table; a failure never fails setup.
    ``make_deps`` builds the check's own engine (``bot.wiring.engine_deps``), whose LLM client is closed
    afterwards. Without a key, nothing."""
    if not settings.llm_enabled:
        return
    deps = make_deps()
    if deps.llm is None:
        return
    echo("Đang kiểm tra mô hình AI đã cấu hình (medbot llm check)…")
    try:
        report = await run_check(deps, settings, settings.default_role)
    except Exception as exc:  # the check is advice: setup goes on without it
        log.exception("llm_check.failed at setup")
        echo(f"Không kiểm tra được mô hình AI ({type(exc).__name__}); chạy lại bằng: medbot llm check")
        return
    finally:
        await deps.llm.aclose()
    for line in report_lines(report):
        echo(line)


def arm() -> None:
    """``medbot run`` calls this before it builds its channels: the first engine built afterwards may start
    the background check (``start_background_check``), and no other."""
    global _armed
    _armed = True


def start_background_check(runtime: Any, live: EngineDeps) -> asyncio.Task[None] | None:
    """The first engine built after ``arm()`` starts the check in the background when it is due
    (``runtime``: ``bot.runtime.Runtime``); its result switches that engine's steps."""
    global _armed
    settings: Settings = runtime.settings
    if not _armed:
        return None
    _armed = False
    if live.llm is None or not settings.llm_check_at_start or not check_due(settings):
        return None

    async def work() -> None:
        log.info(
            "llm_check.start model=%s role=%s (in the background)",
            settings.openai_model,
            settings.default_role,
        )
        own = LLMClient(live.llm.config)  # its own breaker: the check never opens the live one
        try:
            report = await run_check(dataclasses.replace(live, llm=own), settings, settings.default_role)
        except Exception:
            log.exception("llm_check.failed: the steps stay as they were")
            return
        finally:
            await own.aclose()
        verdicts = {name: res["verdict"] for name, res in report["steps"].items()}
        off = apply_switches(live, report, settings)
        log.info("llm_check.done verdicts=%s off=%s", verdicts, ",".join(off) or "-")

    task = asyncio.create_task(work(), name="llm-check")
    runtime.extras["llm_check_task"] = task  # kept referenced until the process ends
    return task


def stats_note(settings: Settings) -> str | None:
    """What ``/stats`` says about the LLM steps that are off (the self-check's verdicts, or LLM_STEPS), or
    None when every step is on or no model is configured."""
    if not settings.llm_enabled:
        return None
    report = current_check(settings) or {}
    switches = steps_from(report, parse_override(settings.llm_steps))
    off = [name for name, on in switches.items() if not on]
    if not off:
        return None
    verdicts = {name: res.get("verdict") for name, res in (report.get("steps") or {}).items()}
    parts = []
    for name in off:
        reason = VERDICT_LABELS.get(verdicts.get(name) or "", "")
        if name in parse_override(settings.llm_steps) or not reason:
            reason = "tắt theo cài đặt LLM_STEPS"
        parts.append(f"{STEP_LABELS[name]} ({reason})")
    when = ""
    if report.get("checked_at"):
        try:
            checked = datetime.fromisoformat(report["checked_at"]).strftime("%H:%M ngày %d/%m/%Y")
            when = f"Lần tự kiểm tra gần nhất: {checked} (giờ UTC). "
        except ValueError:
            when = ""
    return (
        f"🤖 Mô hình AI {settings.openai_model}: đã tắt {len(off)} bước — " + "; ".join(parts) + ". "
        "Ở các bước này bot trả lời như khi không dùng AI. "
        + when
        + "Quản trị viên có thể bật lại bằng cài đặt LLM_STEPS (ví dụ LLM_STEPS=compose=on) "
        "hoặc kiểm tra lại bằng lệnh medbot llm check."
    )
