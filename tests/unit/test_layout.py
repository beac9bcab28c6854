"""The package layout's rules (docs/architecture.md), checked on the source with ``ast``:

* arrows between top-level packages run one way: engine ← db ← kb_import ← bot (and alembic, the
  migrations, above db): no package imports one above it, so there is no cycle between packages; no product
  package imports the test and benchmark code (testkit, tests, bench);
* inside ``bot``, the channels and services never import the composition root (``bot.wiring``) or an entry
  point: they receive what they need;
* no import of our own modules inside a function unless its line says why (``# lazy: <why>``, for a heavy
  dependency that only some commands need).

Every import counts, at module level or inside a function, so an import hidden in a function cannot get
around the direction rule.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Lower rank = lower layer; a package may import its own modules and those of lower rank only. The test and
# benchmark code (testkit, tests, bench) sits above everything: product code never imports it.
RANK = {"engine": 0, "db": 1, "kb_import": 2, "bot": 3, "testkit": 4, "tests": 4, "bench": 4}
OURS = set(RANK)
# Folders scanned as importers only: alembic/ holds the migration scripts (alembic loads them by path; an
# ``import alembic`` is the library), which may use db like an application.
SCANNED = {"engine": 0, "db": 1, "kb_import": 2, "bot": 3, "alembic": 3}

# The application services' half of the composition root and the entry points: only entry points (the
# modules that start a process or run one command) may import them. ``bot.runtime`` (the resources' half:
# pool, embedder, LLM client) is a plain holder every part of ``bot`` may receive.
ROOT_MODULES = {
    "bot.wiring",
    "bot.main",
    "bot.cli",
    "bot.worker.cli",
    "bot.console_cli",
    "bot.kb_cli",
    "bot.setup",
    "bot.web_cli",
}
ENTRY_POINTS = ROOT_MODULES | {"bot.llm_cli", "bot.evaluate", "bot.dialogue_eval", "bot.verify_console"}

# Files allowed to break a rule for now (each with the reason); empty today. test_allow_list_is_not_stale says
# when an entry is no longer needed.
ALLOWED_LOCAL_IMPORTS: set[str] = set()
ALLOWED_UPWARD_IMPORTS: set[str] = set()


@dataclass(frozen=True, slots=True)
class Import:
    file: str  # path relative to the project root
    line: int
    source: str  # importing module, dotted
    target: str  # imported module, dotted
    local: bool  # inside a function
    justified: bool  # a ``# lazy:`` comment on one of the statement's lines


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> list[Import]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    rel = path.relative_to(ROOT).as_posix()
    found: list[Import] = []

    def add(node: ast.Import | ast.ImportFrom, target: str, depth: int) -> None:
        if target.split(".")[0] not in OURS:
            return
        span = lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
        justified = any("# lazy:" in line for line in span)
        found.append(Import(rel, node.lineno, module, target, depth > 0, justified))

    def visit(node: ast.AST, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            inner = depth + isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(child, alias.name, depth)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    target = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    target = child.module or ""
                add(child, target, depth)
                for alias in child.names:  # ``from bot import wiring``: the submodule is imported too
                    sub = f"{target}.{alias.name}"
                    if is_module(sub):
                        add(child, sub, depth)
            visit(child, inner)

    visit(ast.parse(text, filename=rel), 0)
    return found


def all_imports() -> list[Import]:
    out: list[Import] = []
    for folder in sorted(SCANNED):
        for path in sorted((ROOT / folder).rglob("*.py")):
            out.extend(imports_of(path))
    return out


IMPORTS = all_imports()


def top(module: str) -> str:
    return module.split(".")[0]


def test_the_scan_sees_the_project() -> None:
    """Guard against a vacuous pass: the scan finds the known arrows of every layer."""
    edges = {(top(i.source), top(i.target)) for i in IMPORTS}
    assert {("db", "engine"), ("kb_import", "db"), ("kb_import", "engine"), ("bot", "kb_import")} <= edges
    assert any(i.source == "bot.wiring" for i in IMPORTS)


def test_arrows_between_packages_run_one_way() -> None:
    upward = [
        f"{i.file}:{i.line}: {i.source} imports {i.target} ({top(i.source)} may import only "
        f"{', '.join(sorted(p for p, r in SCANNED.items() if r < SCANNED[top(i.source)])) or 'nothing of ours'})"
        for i in IMPORTS
        if top(i.source) != top(i.target)
        and RANK[top(i.target)] >= SCANNED[top(i.source)]
        and i.file not in ALLOWED_UPWARD_IMPORTS
    ]
    assert not upward, "imports against the layer order engine <- db <- kb_import <- bot:\n" + "\n".join(
        upward
    )


def test_no_cycle_between_top_level_packages() -> None:
    graph: dict[str, set[str]] = {p: set() for p in SCANNED}
    for i in IMPORTS:
        if top(i.source) != top(i.target) and i.file not in ALLOWED_UPWARD_IMPORTS:
            graph[top(i.source)].add(top(i.target))
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, set())):
            cycle = walk(nxt, [*path, node])
            if cycle:
                return cycle
        done.add(node)
        return None

    cycles = [c for p in sorted(graph) if (c := walk(p, []))]
    assert not cycles, f"import cycle between packages: {' -> '.join(cycles[0])}"


def test_channels_and_services_never_import_the_composition_root() -> None:
    wrong = [
        f"{i.file}:{i.line}: {i.source} imports {i.target}"
        for i in IMPORTS
        if i.target in ROOT_MODULES and i.source not in ENTRY_POINTS
    ]
    assert not wrong, (
        "only entry points may import the composition root or another entry point; channels and services "
        "receive their services as arguments:\n" + "\n".join(wrong)
    )


def test_no_unexplained_function_local_import_of_our_modules() -> None:
    hidden = [
        f"{i.file}:{i.line}: {i.target}"
        for i in IMPORTS
        if i.local and not i.justified and i.file not in ALLOWED_LOCAL_IMPORTS
    ]
    assert not hidden, (
        "import our own modules at the top of the file; a function-local import needs a '# lazy: <why>' "
        "comment on its line (a heavy dependency only some commands need):\n" + "\n".join(hidden)
    )


def test_allow_list_is_not_stale() -> None:
    """An allow-listed file that no longer needs its entry must leave the list (so the rule covers it)."""
    local = {i.file for i in IMPORTS if i.local and not i.justified}
    upward = {
        i.file
        for i in IMPORTS
        if top(i.source) != top(i.target) and RANK[top(i.target)] >= SCANNED[top(i.source)]
    }
    stale = sorted((ALLOWED_LOCAL_IMPORTS - local) | (ALLOWED_UPWARD_IMPORTS - upward))
    assert not stale, f"remove from the allow-lists in tests/unit/test_layout.py: {stale}"
