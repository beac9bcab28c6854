"""The triage rule matcher, old against new: verdict identity and per-message time (not one of ``python -m bench``'s
modules: it needs a second copy of ``rules.py`` to compare with).

    git show main:engine/triage/rules.py > /tmp/rules_old.py
    python -m bench.triage_matcher compare /tmp/rules_old.py   # every text: the same Match, hit for hit
    python -m bench.triage_matcher time [/tmp/rules_old.py]     # p50/p95 ms of rules-only ``match`` per message

Texts: every labelled set (``engine/triage/data/*.jsonl``), the held-out set, the other labelled sets under
``tests/data`` (dialogues, intents), and faq-val's queries when ``../shared/eval/faq-val`` is present. ``compare``
checks the whole rules-only result (categories, topics, hits with their phrases, the message-level flags) and,
phrase list by phrase list, every match each compiled alternation finds (its text and position).
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from engine.triage import rules as new_rules
from engine.triage.model import DATA_DIR
from engine.triage.normalize import normalize
from engine.triage.numbers import glucose_hits

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT = ROOT / "tests" / "data" / "triage_heldout.jsonl"
FAQ_VAL = ROOT.parent / "shared" / "eval" / "faq-val" / "queries.jsonl"
OTHER = ("dialogues.jsonl", "intents_eval.jsonl", "intents_heldout.jsonl")
MESSAGE_KEYS = ("text", "query", "turns", "say")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _strings(value: object) -> list[str]:
    """The messages in a JSON row: its text or query, or each turn of a dialogue."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k in MESSAGE_KEYS for s in _strings(v)]
    return []


def texts() -> dict[str, list[str]]:
    sets = {p.stem: [r["text"] for r in _lines(p)] for p in sorted(DATA_DIR.glob("*.jsonl"))}
    if HELD_OUT.is_file():  # absent between a freeze and the next blind set's measurement
        sets["held-out"] = [r["text"] for r in _lines(HELD_OUT)]
    for name in OTHER:
        path = ROOT / "tests" / "data" / name
        if path.is_file():
            sets[path.stem] = [s for r in _lines(path) for s in _strings(r)]
    if FAQ_VAL.is_file():
        sets["faq-val"] = [q["query"] for q in _lines(FAQ_VAL)]
    return sets


def _load(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("rules_old", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rules_old"] = module
    spec.loader.exec_module(module)
    return module


def _result(module: ModuleType, rules: Any, text: str) -> tuple[object, ...]:
    found = module.match(text, rules, glucose_hits(text, rules.glucose))
    return (
        found.categories,
        found.topics,
        [(h.category, h.kind, h.phrase) for h in found.hits],
        found.general_question,
        found.recurrent,
        found.resolved,
        found.about_animal,
    )


def _patterns(rules: Any) -> dict[str, Any]:
    out = {}
    for cat in rules.categories:
        for key in ("alone", "accented", "symptoms", "severity", "exclude", "fragment", "dismiss"):
            out[f"{cat.id}.{key}"] = getattr(cat, key)
    for key in rules.markers.__dataclass_fields__:
        if not isinstance(getattr(rules.markers, key), int):
            out[f"markers.{key}"] = getattr(rules.markers, key)
    out["glucose.words"] = rules.glucose.words
    return out


def compare(old_path: str) -> int:
    old = _load(old_path)
    old_rules = old.parse_rules(new_rules.RULES_FILE.read_text(encoding="utf-8"))
    rules = new_rules.parse_rules(new_rules.RULES_FILE.read_text(encoding="utf-8"))
    old_rx, new_rx = _patterns(old_rules), _patterns(rules)
    assert old_rx.keys() == new_rx.keys()
    differ = [k for k in old_rx if (old_rx[k] is None) != (new_rx[k] is None)]
    total = differences = searches = 0
    for name, group in texts().items():
        print(f"{name}: {len(group)} texts", flush=True)
        for text in group:
            total += 1
            a, b = _result(old, old_rules, text), _result(new_rules, rules, text)
            if a != b:
                differences += 1
                print(f"DIFF [{name}] {text[:120]!r}\n  old {a}\n  new {b}")
            # every alternation, searched from every word start (as ``_hits`` resumes) of the reading it is for
            norm = normalize(text, rules.words)
            for key, rx in new_rx.items():
                if rx is None:
                    continue
                orx = old_rx[key]
                body = norm.accented if key.endswith("accented") else norm.text
                for pos in [0] + [i + 1 for i, ch in enumerate(body) if ch == " "]:
                    m, o = rx.search(body, pos), orx.search(body, pos)
                    searches += 1
                    if (m and (m.span(), m.group(0))) != (o and (o.span(), o.group(0))):
                        differences += 1
                        print(f"DIFF {key} at {pos} [{name}] {body[:120]!r}: old {o} new {m}")
                    if o is None:
                        break  # nothing further on either
    print(
        f"{total} texts, {searches} pattern searches, {differences} differences; {len(differ)} lists differ"
    )
    return 1 if differences or differ else 0


def _time(module: ModuleType, group: list[str], rounds: int = 3) -> tuple[float, float]:
    rules = module.parse_rules(new_rules.RULES_FILE.read_text(encoding="utf-8"))
    timings = []
    for _ in range(rounds):
        for text in group:
            t0 = time.perf_counter()
            module.match(text, rules, glucose_hits(text, rules.glucose))
            timings.append((time.perf_counter() - t0) * 1000)
    ordered = sorted(timings)
    return statistics.median(ordered), ordered[int(0.95 * len(ordered))]


def timing(old_path: str | None) -> int:
    sets = texts()
    # no held-out file: the last blind sets' chat messages
    chat = sets.get("held-out") or sets["dev57"] + sets["dev58"]
    groups = {"held-out": chat} | ({"faq-val": sets["faq-val"]} if "faq-val" in sets else {})
    modules = {"new": new_rules} | ({"old": _load(old_path)} if old_path else {})
    for name, group in groups.items():
        for label, module in modules.items():
            t0 = time.perf_counter()
            p50, p95 = _time(module, group)
            print(f"{name:<9} {label}: {len(group)} messages, p50 {p50:.3f} ms, p95 {p95:.3f} ms "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)  # fmt: skip
    for label, module in modules.items():  # in a new process each: nothing compiled yet
        code = (
            "import importlib.util, sys, time\n"
            f"spec = importlib.util.spec_from_file_location('timed_rules', {module.__file__!r})\n"
            "module = importlib.util.module_from_spec(spec); sys.modules['timed_rules'] = module\n"
            "spec.loader.exec_module(module)\n"
            f"text = open({str(new_rules.RULES_FILE)!r}, encoding='utf-8').read()\n"
            "t0 = time.perf_counter(); module.parse_rules(text); print(time.perf_counter() - t0)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        )
        print(f"parse_rules {label}, in a new process: {float(out.stdout):.2f} s")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["compare"] and len(argv) == 2:
        return compare(argv[1])
    if argv[:1] == ["time"]:
        return timing(argv[1] if len(argv) > 1 else None)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
