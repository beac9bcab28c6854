"""The async node engine, medical flow, retrieval, LLM access and Vietnamese text tools. No SQL, no Telegram.

The public surface — what channels, jobs and the composition root use — is ``__all__`` below: import it as
``from engine import run_medical_flow, FlowResult``. Every other module of the package is the engine's own
business and may change without notice (``engine.verify`` and ``engine.triage`` are feature packages with
their own surfaces).

The names load on first use (PEP 562): importing one light module (``engine.text``) must not load the flow,
the triage model or the LLM client, which take seconds. ``TYPE_CHECKING`` gives tools the same names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name → the module that defines it
_SURFACE: dict[str, str] = {
    # the medical flow and its typed result
    "run_medical_flow": "engine.flows",
    "MEDICAL_FLOW": "engine.flows",
    "flow_to_mermaid": "engine.core",
    "FlowResult": "engine.result",
    # what the flow needs from its caller
    "EngineDeps": "engine.deps",
    "EngineConfig": "engine.deps",
    "ClinicProfile": "engine.clinic",
    "Role": "engine.roles",
    "load_roles": "engine.roles",
    "unknown_role_message": "engine.roles",
    # the engine's data types and the store interfaces ``db`` implements
    "KBEntry": "engine.types",
    "Hit": "engine.types",
    "Turn": "engine.types",
    "MemoryRead": "engine.types",
    "Embedder": "engine.types",
    # text tools
    "fold": "engine.text",
    "fold_plain": "engine.text",
    "strip_diacritics": "engine.text",
    "vn_number": "engine.untrusted",
    "passage_text": "engine.embedding",
    # the emergency check (a package with its own surface: triage.triage, triage.answer, triage.Triage)
    "triage": "engine.triage",
}

__all__ = sorted(_SURFACE)


def __getattr__(name: str) -> Any:
    module = _SURFACE.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    # A lazy import by design (see the module docstring): the flow and the triage model are heavy.
    loaded = importlib.import_module(module)
    value = loaded if module == f"engine.{name}" else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from engine import triage as triage
    from engine.clinic import ClinicProfile as ClinicProfile
    from engine.core import flow_to_mermaid as flow_to_mermaid
    from engine.deps import EngineConfig as EngineConfig
    from engine.deps import EngineDeps as EngineDeps
    from engine.embedding import passage_text as passage_text
    from engine.flows import MEDICAL_FLOW as MEDICAL_FLOW
    from engine.flows import run_medical_flow as run_medical_flow
    from engine.result import FlowResult as FlowResult
    from engine.roles import Role as Role
    from engine.roles import load_roles as load_roles
    from engine.roles import unknown_role_message as unknown_role_message
    from engine.text import fold as fold
    from engine.text import fold_plain as fold_plain
    from engine.text import strip_diacritics as strip_diacritics
    from engine.types import Embedder as Embedder
    from engine.types import Hit as Hit
    from engine.types import KBEntry as KBEntry
    from engine.types import MemoryRead as MemoryRead
    from engine.types import Turn as Turn
    from engine.untrusted import vn_number as vn_number
