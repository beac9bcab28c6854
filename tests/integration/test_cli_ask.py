"""`medbot ask` on the sample KB: one JSON object per stdin line with the fields of DESIGN.md section 9."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


def _ask(sample_kb_url: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "ask", *args],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": sample_kb_url, "DISCLAIMER": "Chỉ để tham khảo."},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ask_json_lines_from_stdin(sample_kb_url: str) -> None:
    lines = "Răng khôn mọc lệch có cần nhổ không?\n\nbo toi dau nguc trai lan ra tay, va mo hoi\nxin chào\n"
    proc = _ask(sample_kb_url, "--role", "patient_dental", "--json", "-", stdin=lines)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == 3  # the blank line is skipped
    assert all(FIELDS <= set(a) for a in answers)
    wisdom, emergency, hello = answers
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


def test_each_line_is_its_own_conversation_unless_named(sample_kb_url: str) -> None:
    lines = "Răng khôn mọc lệch có cần nhổ không?\ncòn bị sưng thì sao?\n"
    alone = [
        json.loads(x)
        for x in _ask(
            sample_kb_url, "--role", "patient_dental", "--json", "-", stdin=lines
        ).stdout.splitlines()
    ]
    assert alone[0]["citations"] == ["NK-013"]
    assert alone[1]["citations"] == []  # no context leaks from the line before: too vague alone

    name = f"test-{os.getpid()}"
    kept = _ask(sample_kb_url, "--role", "patient_dental", "--json", "--conversation", name, "-", stdin=lines)
    first, follow = [json.loads(x) for x in kept.stdout.splitlines()]
    # the swelling of that tooth
    assert first["citations"] == ["NK-013"] and follow["citations"] == ["NK-014"]
    assert "Chỉ để tham khảo." not in follow["explain"]  # the disclaimer came with the first answer
    later = _ask(
        sample_kb_url, "--role", "patient_dental", "--json", "--conversation", name, "bao lâu thì lành?"
    )
    assert json.loads(later.stdout)["citations"] == ["NK-015"]  # a later run continues the named conversation


def test_ask_plain_text_and_unknown_role(sample_kb_url: str) -> None:
    proc = _ask(sample_kb_url, "--role", "patient_diabetes", "tieu duong co an duoc trai cay khong")
    assert proc.returncode == 0, proc.stderr
    assert "Câu hỏi gợi ý" in proc.stdout and "Chỉ để tham khảo." in proc.stdout
    bad = _ask(sample_kb_url, "--role", "nobody", "xin chào")
    assert bad.returncode == 2 and "không có chuyên khoa 'nobody'" in bad.stderr
