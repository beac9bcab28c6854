"""`medbot ask` on the sample KB: one JSON object per stdin line with the fields of DESIGN.md section 9."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

FIELDS = {
    "input_type",
    "explain",
    "suggestion_questions",
    "citations",
    "retrieval_score",
    "red_flag",
    "latency_ms",
}


def _ask(
    sample_kb_url: str, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "ask", *args],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": sample_kb_url, "DISCLAIMER": "Chỉ để tham khảo.", **(env or {})},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


CONVERSATION = f"test-{os.getpid()}"


@pytest.fixture(scope="module")
async def runs(sample_kb_url: str) -> dict[str, subprocess.CompletedProcess[str]]:
    """The module's `medbot ask` runs, read by the tests below, two at a time (each process spends seconds
    starting up, mostly on one core; the machine has two):

    * ``unnamed``: ``--json -`` without --conversation: a question, a follow-up too vague alone, a blank line,
      an emergency, a greeting;
    * ``named``: the same question and follow-up with ``--conversation CONVERSATION``;
    then, once those two have ended:
    * ``later``: a follow-up in a new run with ``--conversation CONVERSATION``;
    * ``plain``: one question as plain text, another role."""
    unnamed = (
        "Răng khôn mọc lệch có cần nhổ không?\ncòn bị sưng thì sao?\n\n"
        "bo toi dau nguc trai lan ra tay, va mo hoi\nxin chào\n"
    )
    named = "Răng khôn mọc lệch có cần nhổ không?\ncòn bị sưng thì sao?\n"
    dental = ("--role", "patient_dental", "--json")
    first = {
        "unnamed": asyncio.to_thread(_ask, sample_kb_url, *dental, "-", stdin=unnamed),
        "named": asyncio.to_thread(
            _ask, sample_kb_url, *dental, "--conversation", CONVERSATION, "-", stdin=named
        ),
    }
    done = dict(zip(first, await asyncio.gather(*first.values()), strict=True))
    then = {
        "later": asyncio.to_thread(
            _ask, sample_kb_url, *dental, "--conversation", CONVERSATION, "bao lâu thì lành?"
        ),
        "plain": asyncio.to_thread(
            _ask, sample_kb_url, "--role", "patient_diabetes", "tieu duong co an duoc trai cay khong"
        ),
    }
    return done | dict(zip(then, await asyncio.gather(*then.values()), strict=True))


def test_ask_json_lines_from_stdin(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    proc = runs["unnamed"]
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == 4  # the blank line is skipped
    assert all(FIELDS <= set(a) for a in answers)
    wisdom, _, emergency, hello = answers
    assert wisdom["input_type"] == "medical_question" and wisdom["citations"] == ["NK-013"]
    assert (
        emergency["red_flag"] is True and "115" in emergency["explain"][:300] and emergency["citations"] == []
    )
    assert hello["input_type"] == "greeting" and len(hello["suggestion_questions"]) >= 5
    # The disclaimer where it matters: an answer from the KB (each line is a conversation of its own, so it is
    # a first answer) and every emergency; not under a greeting.
    assert wisdom["explain"].rstrip().endswith("Chỉ để tham khảo.")
    assert emergency["explain"].rstrip().endswith("Chỉ để tham khảo.")
    assert "Chỉ để tham khảo." not in hello["explain"]


def test_each_line_is_its_own_conversation_unless_named(
    runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    alone = [json.loads(x) for x in runs["unnamed"].stdout.splitlines()]  # the two lines, no --conversation
    assert alone[0]["citations"] == ["NK-013"]
    assert alone[1]["citations"] == []  # no context leaks from the line before: too vague alone

    first, follow = [json.loads(x) for x in runs["named"].stdout.splitlines()]
    # the swelling of that tooth
    assert first["citations"] == ["NK-013"] and follow["citations"] == ["NK-014"]
    assert "Chỉ để tham khảo." not in follow["explain"]  # the disclaimer came with the first answer
    later = runs["later"]  # started after the named run had ended
    assert json.loads(later.stdout)["citations"] == ["NK-015"]  # a later run continues the named conversation


def test_ask_plain_text(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    proc = runs["plain"]
    assert proc.returncode == 0, proc.stderr
    assert "Câu hỏi gợi ý" in proc.stdout and "Chỉ để tham khảo." in proc.stdout


def test_ask_refuses_an_unknown_role_before_loading_anything(tmp_path: Path) -> None:
    """The role is checked first: no database (none listens at this address), nothing written to the data
    folder (no embedded server, no model files), only the refusal and the roles there are."""
    nowhere = "postgresql://medbot@127.0.0.1:9/medbot"  # the discard port: nothing answers there
    data = tmp_path / "data"
    bad = _ask(nowhere, "--role", "nobody", "xin chào", env={"MEDBOT_DATA_DIR": str(data)})
    assert bad.returncode == 2 and "không có chuyên khoa 'nobody'" in bad.stderr
    assert "các chuyên khoa: patient_dental, patient_diabetes" in bad.stderr
    assert bad.stdout == "" and not data.exists()


def test_medbot_run_without_telegram_or_zalo_is_the_console_chat(sample_kb_url: str) -> None:
    """``make run`` on a fresh machine: no token, no Zalo settings: the console chat answers, then ends on Ctrl-D."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "ZALO_"))}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "run"],
        cwd=ROOT,
        env={**env, "DATABASE_URL": sample_kb_url},
        input="xin chào\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "starting the console chat" in done.stdout and "Bạn:" in done.stdout
    assert "Hôi miệng" in done.stdout  # the greeting offers the KB's topics
