"""The rules' factored and compiled patterns kept between processes (``engine/triage/compiled.py``): a process that
loads them from the file has exactly the rules a process building them afresh has, and a damaged, foreign or
unwritable file only costs the time to build them again; triage never fails because of it."""

from __future__ import annotations

import dataclasses
import marshal
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from engine.triage import alternation
from engine.triage.compiled import PatternStore
from engine.triage.rules import RULES_FILE, RuleSet, parse_rules

TEXT = RULES_FILE.read_text(encoding="utf-8")
CODE = Path(alternation.__file__)


def patterns_in(value: Any) -> list[re.Pattern[str]]:
    """Every compiled pattern reachable from ``value`` (a RuleSet: dataclasses, lists, dicts, tuples)."""
    if isinstance(value, re.Pattern):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [p for f in dataclasses.fields(value) for p in patterns_in(getattr(value, f.name))]
    if isinstance(value, dict):
        return [p for v in value.values() for p in patterns_in(v)]
    if isinstance(value, list | tuple | set | frozenset):
        return [p for v in value for p in patterns_in(v)]
    return []


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RuleSet]:
    """The product's rules built once through a store in an empty folder, which then holds them."""
    folder = tmp_path_factory.mktemp("patterns")
    store = PatternStore(folder, factoring_code=CODE)
    built = parse_rules(TEXT, store=store)
    assert store.compiled > 200  # every phrase list factored and compiled here
    store.save()
    assert store.path is not None and store.path.is_file()
    return folder, built


def test_a_second_process_loads_the_rules_the_first_built_and_they_are_the_same_rules(kept):
    folder, built = kept
    store = PatternStore(folder, factoring_code=CODE)
    loaded = parse_rules(TEXT, store=store)
    assert store.compiled == 0  # nothing factored or compiled again
    assert loaded == built  # every pattern: same text, flags and compiled program (re.Pattern's ==)


def test_every_pattern_built_so_is_the_one_re_compile_gives(kept):
    _, built = kept
    found = patterns_in(built)
    assert len(found) > 200
    for pattern in found:
        assert pattern == re.compile(pattern.pattern), pattern.pattern[:200]


def test_a_change_to_the_factoring_code_starts_a_new_file(kept, tmp_path):
    folder, _ = kept
    changed = tmp_path / "alternation.py"
    changed.write_bytes(CODE.read_bytes() + b"\n# changed\n")
    store = PatternStore(folder, factoring_code=changed)
    assert store.path != PatternStore(folder, factoring_code=CODE).path
    assert store.factored(["kho tho nhanh", "kho tho gap"], alternation.factor) == "kho tho (?:nhanh|gap)"
    assert store.compiled == 1  # factored here, not read from the other code's file


@pytest.mark.parametrize(
    "damage",
    [
        b"not a file of ours",
        zlib.compress(marshal.dumps(("another-python", ({}, {})))),
        zlib.compress(marshal.dumps(["a", "list"])),
    ],
    ids=["garbage", "another interpreter", "another layout"],
)
def test_a_damaged_or_foreign_file_only_means_compiling_again(tmp_path, damage):
    store = PatternStore(tmp_path, factoring_code=CODE)
    assert store.path is not None
    store.path.write_bytes(damage)
    store = PatternStore(tmp_path, factoring_code=CODE)
    rx = store.compile(r"(?<![a-z0-9])(?:dau nguc|kho tho)(?![a-z0-9])")
    assert rx.search("em bi dau nguc qua").group() == "dau nguc"
    assert store.compiled == 1
    store.save()  # replaced by a good file
    again = PatternStore(tmp_path, factoring_code=CODE)
    assert again.compile(rx.pattern) == rx and again.compiled == 0


def test_an_unwritable_folder_compiles_every_time_and_never_fails(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder should be")
    store = PatternStore(blocked, factoring_code=CODE)
    rx = store.compile(r"(?:bat tinh|ngung tho)")
    store.save()  # logged, not raised
    assert rx.search("ong ngung tho roi") is not None
    assert PatternStore(blocked, factoring_code=CODE).compile(rx.pattern) == rx
