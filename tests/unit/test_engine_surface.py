"""The engine's public surface (``engine.__all__``): every name resolves, a light module does not load the flow,
and the chat channels reach the engine only through that surface."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parents[2]
CHANNELS = [
    ROOT / "bot" / "service.py",
    ROOT / "bot" / "console.py",
    ROOT / "bot" / "telegram" / "render.py",
    *sorted((ROOT / "bot" / "telegram" / "routers").glob("*.py")),
    *sorted((ROOT / "bot" / "zalo").glob("*.py")),
]
# Feature packages with a surface of their own, and what still waits for another step of issue 18.
ALLOWED = ("engine.verify", "engine.triage")
PENDING: set[tuple[str, str]] = set()


def test_every_public_name_resolves() -> None:
    for name in engine.__all__:
        assert getattr(engine, name) is not None, name
    assert engine.run_medical_flow.__module__ == "engine.flows"
    assert engine.FlowResult.__module__ == "engine.result"


def test_a_light_module_does_not_load_the_flow() -> None:
    code = "import sys, engine.text; print('engine.flows' in sys.modules, 'engine.triage' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]


def test_channels_use_the_public_surface_only() -> None:
    wrong = []
    for path in CHANNELS:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "engine":
                wrong += [f"{rel}: engine.{a.name}" for a in node.names if a.name not in engine.__all__]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine."):
                module = node.module or ""
                if not module.startswith(ALLOWED) and (rel, module) not in PENDING:
                    wrong.append(f"{rel}: {module}")
            elif isinstance(node, ast.Import):
                wrong += [f"{rel}: {a.name}" for a in node.names if a.name.startswith("engine.")]
    assert wrong == []
