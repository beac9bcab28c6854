"""The async node engine: PocketFlow's model (prep → exec → post → action), async only.

A ``Node`` does its work in three steps: ``prep(shared)`` reads the shared store, ``exec(prep_res)`` does the
(possibly failing) work and ``post(shared, prep_res, exec_res)`` writes results back and returns the *action*
that picks the next node. ``exec`` is retried ``max_retries`` times with exponential backoff and jitter, each
attempt bounded by ``timeout``; when attempts run out ``exec_fallback`` decides (default: re-raise).

A ``Flow`` follows actions from its start node (``a >> b`` for "default", ``a - "x" >> b`` for action "x").
Every node is shallow-copied per run, so per-run attributes never leak between concurrent conversations,
and every run appends ``{node, action, ms, retries, error}`` to ``shared["trace"]``, plus whatever the run put
in ``self.trace_extra`` (e.g. an LLM step's model time and tokens).

Node classes are registered by name (``@register``) so a flow can also be built from a declarative
definition (plain data: node ids with type names, edges with actions) — the same graph, which
``flow_to_mermaid`` can draw and ``check_definition`` can validate without running anything.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random
import time
from typing import Any, ClassVar, TypeVar

log = logging.getLogger(__name__)

DEFAULT = "default"


class FlowError(RuntimeError):
    """A flow definition or a flow run is inconsistent (unknown node type, missing successor, loop...)."""


class Node:
    """One step of a flow. Subclasses override ``prep``, ``exec``, ``post`` and optionally ``exec_fallback``."""

    max_retries: int = 1  # attempts of exec, not extra retries: 1 means "run once"
    wait: float = 0.0  # base delay before the 2nd attempt; doubled (``backoff``) each time
    backoff: float = 2.0
    max_wait: float = 30.0
    jitter: float = 0.25  # +/- fraction of the delay, so concurrent retries do not stampede
    timeout: float | None = None  # seconds per exec attempt
    actions: ClassVar[tuple[str, ...]] = (DEFAULT,)  # actions post() may return, for static checks

    def __init__(self, name: str | None = None, **params: Any) -> None:
        self.name = name or type(self).__name__
        self.params: dict[str, Any] = params
        self.successors: dict[str, Node] = {}
        self.cur_retry = 0
        self.last_error: BaseException | None = None
        self.trace_extra: dict[str, Any] = {}

    # ----- graph building -------------------------------------------------------------------------------
    def next(self, node: Node, action: str = DEFAULT) -> Node:
        if action in self.successors:
            log.warning("node %s: overwriting successor for action %r", self.name, action)
        self.successors[action] = node
        return node

    def __rshift__(self, other: Node) -> Node:
        return self.next(other)

    def __sub__(self, action: str) -> _Transition:
        if not isinstance(action, str):
            raise TypeError("action must be a string")
        return _Transition(self, action)

    # ----- the three steps --------------------------------------------------------------------------------
    async def prep(self, shared: dict[str, Any]) -> Any:
        return None

    async def exec(self, prep_res: Any) -> Any:
        return None

    async def exec_fallback(self, prep_res: Any, exc: BaseException) -> Any:
        raise exc

    async def post(self, shared: dict[str, Any], prep_res: Any, exec_res: Any) -> str | None:
        return None

    # ----- machinery --------------------------------------------------------------------------------------
    def retry_delay(self, attempt: int, exc: BaseException) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based). Honours ``exc.retry_after``."""
        if getattr(exc, "retry_now", False):  # e.g. a guardrail violation: ask again at once
            return 0.0
        delay = self.wait * (self.backoff**attempt)
        delay *= 1 + random.uniform(-self.jitter, self.jitter)
        hint = getattr(exc, "retry_after", None)
        if isinstance(hint, int | float) and hint > delay:
            delay = float(hint)
        return max(0.0, min(delay, self.max_wait))

    async def _exec(self, prep_res: Any) -> Any:
        attempts = max(1, self.max_retries)
        for self.cur_retry in range(attempts):
            try:
                if self.timeout is None:
                    return await self.exec(prep_res)
                async with asyncio.timeout(self.timeout):
                    return await self.exec(prep_res)
            except Exception as exc:  # CancelledError is a BaseException and is never swallowed
                self.last_error = exc
                last = self.cur_retry == attempts - 1 or getattr(exc, "retryable", True) is False
                # A non-retryable error is a designed fallback (e.g. no LLM configured): not worth INFO.
                level = logging.DEBUG if getattr(exc, "retryable", True) is False else logging.INFO
                log.log(level, "node %s attempt %d failed: %r", self.name, self.cur_retry + 1, exc)
                if last:
                    return await self.exec_fallback(prep_res, exc)
                await asyncio.sleep(self.retry_delay(self.cur_retry, exc))
        raise AssertionError("unreachable")

    async def _run(self, shared: dict[str, Any]) -> str | None:
        t0 = time.perf_counter()
        action: str | None = None
        error: str | None = None
        self.trace_extra = {}  # this run's own (the node is a shallow copy: never the class's dict)
        try:
            prep_res = await self.prep(shared)
            exec_res = await self._exec(prep_res)
            action = await self.post(shared, prep_res, exec_res)
            if self.last_error is not None:
                error = _describe(self.last_error)
            return action
        except Exception as exc:
            error = _describe(exc)
            raise
        finally:
            shared.setdefault("trace", []).append(
                {
                    "node": self.name,
                    "action": action,
                    "ms": round((time.perf_counter() - t0) * 1000, 2),
                    "retries": self.cur_retry,
                    "error": error,
                    **self.trace_extra,
                }
            )

    async def run(self, shared: dict[str, Any]) -> str | None:
        """Run this node alone (its successors are ignored)."""
        return await copy.copy(self)._run(shared)


class _Transition:
    def __init__(self, src: Node, action: str) -> None:
        self.src, self.action = src, action

    def __rshift__(self, target: Node) -> Node:
        return self.src.next(target, self.action)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


class Flow(Node):
    """Runs nodes from ``start`` following the actions. A flow is itself a node, so flows nest."""

    max_steps: int = 100  # guard against cycles that never end

    def __init__(self, start: Node | None = None, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        self.start_node = start

    def start(self, node: Node) -> Node:
        self.start_node = node
        return node

    def get_next(self, node: Node, action: str | None) -> Node | None:
        nxt = node.successors.get(action or DEFAULT)
        if nxt is None and node.successors:
            # An action nobody handles: the flow ends here, which is nearly always a wiring mistake.
            log.warning(
                "flow %s ends: action %r of node %s has no successor (known: %s)",
                self.name,
                action,
                node.name,
                sorted(node.successors),
            )
        return nxt

    async def _orchestrate(self, shared: dict[str, Any]) -> str | None:
        if self.start_node is None:
            raise FlowError(f"flow {self.name} has no start node")
        node: Node | None = copy.copy(self.start_node)
        action: str | None = None
        steps = 0
        while node is not None:
            steps += 1
            if steps > self.max_steps:
                raise FlowError(f"flow {self.name} exceeded {self.max_steps} steps (cycle?)")
            action = await node._run(shared)
            nxt = self.get_next(node, action)
            node = copy.copy(nxt) if nxt is not None else None
        return action

    async def _run(self, shared: dict[str, Any]) -> str | None:
        prep_res = await self.prep(shared)
        action = await self._orchestrate(shared)
        return await self.post(shared, prep_res, action)

    async def post(self, shared: dict[str, Any], prep_res: Any, exec_res: Any) -> str | None:
        return exec_res

    async def run(self, shared: dict[str, Any]) -> str | None:
        return await copy.copy(self)._run(shared)


# ----- registry and declarative definitions ---------------------------------------------------------------

NODE_TYPES: dict[str, type[Node]] = {}
NT = TypeVar("NT", bound=type[Node])


def register(cls: NT) -> NT:
    """Class decorator: make a node type buildable by name from a flow definition."""
    name = cls.__name__
    if name in NODE_TYPES and NODE_TYPES[name] is not cls:
        raise FlowError(f"node type {name} registered twice")
    NODE_TYPES[name] = cls
    return cls


FlowDefinition = dict[str, Any]
"""``{"name": str, "start": node_id, "nodes": {node_id: type_name | {"type": ..., "params": {...}}},
"edges": [[from_id, action, to_id], ...]}``"""


def _node_spec(spec: str | dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if isinstance(spec, str):
        return spec, {}
    return spec["type"], dict(spec.get("params", {}))


def check_definition(defn: FlowDefinition, registry: dict[str, type[Node]] | None = None) -> list[str]:
    """Problems of a definition: unknown types/ids (errors) and declared actions with no edge (warnings)."""
    registry = NODE_TYPES if registry is None else registry
    problems: list[str] = []
    nodes = defn.get("nodes", {})
    if defn.get("start") not in nodes:
        problems.append(f"error: start node {defn.get('start')!r} is not defined")
    for node_id, spec in nodes.items():
        type_name, _ = _node_spec(spec)
        if type_name not in registry:
            problems.append(f"error: node {node_id}: unknown type {type_name}")
    wired: dict[str, set[str]] = {}
    for src, action, dst in defn.get("edges", []):
        for nid in (src, dst):
            if nid not in nodes:
                problems.append(f"error: edge {src} -{action}-> {dst}: unknown node {nid}")
        wired.setdefault(src, set()).add(action)
    for node_id, spec in nodes.items():
        cls = registry.get(_node_spec(spec)[0])
        if cls is None:
            continue
        for action in cls.actions:
            if action not in wired.get(node_id, set()) and (action != DEFAULT or wired.get(node_id)):
                problems.append(f"warning: node {node_id}: action {action!r} has no successor")
    return problems


def build_flow(defn: FlowDefinition, registry: dict[str, type[Node]] | None = None) -> Flow:
    """Build the graph a definition describes. Raises ``FlowError`` on any error-level problem."""
    registry = NODE_TYPES if registry is None else registry
    problems = check_definition(defn, registry)
    errors = [p for p in problems if p.startswith("error")]
    if errors:
        raise FlowError("; ".join(errors))
    for p in problems:
        log.warning("flow %s: %s", defn.get("name"), p)
    built: dict[str, Node] = {}
    for node_id, spec in defn["nodes"].items():
        type_name, params = _node_spec(spec)
        built[node_id] = registry[type_name](node_id, **params)
    for src, action, dst in defn["edges"]:
        built[src].next(built[dst], action)
    return Flow(built[defn["start"]], name=defn.get("name", "flow"))


def graph_edges(flow: Flow) -> set[tuple[str, str, str, str, str]]:
    """Every reachable edge as (src name, src type, action, dst name, dst type): compares two graphs."""
    seen: set[int] = set()
    edges: set[tuple[str, str, str, str, str]] = set()
    stack: list[Node] = [flow.start_node] if flow.start_node else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for action, nxt in node.successors.items():
            edges.add((node.name, type(node).__name__, action, nxt.name, type(nxt).__name__))
            stack.append(nxt)
    return edges


def flow_to_mermaid(defn: FlowDefinition) -> str:
    """A mermaid ``flowchart`` of a definition (for ``medbot flow show``)."""
    lines = ["flowchart TD"]
    for node_id, spec in defn["nodes"].items():
        lines.append(f'    {node_id}["{_node_spec(spec)[0]}"]')
    for src, action, dst in defn["edges"]:
        label = "" if action == DEFAULT else f"|{action}|"
        lines.append(f"    {src} -->{label} {dst}")
    return "\n".join(lines)
