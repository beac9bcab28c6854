"""The node engine: retries, backoff, fallback, timeout, trace, routing, copy per run, declarative graphs."""

import asyncio
import logging

import pytest

from engine.core import (
    DEFAULT,
    Flow,
    FlowError,
    Node,
    build_flow,
    check_definition,
    flow_to_mermaid,
    graph_edges,
)
from engine.flows import MEDICAL_FLOW, medical_flow


class Flaky(Node):
    """Fails ``fails`` times, then succeeds; records attempt times."""

    max_retries = 3
    wait = 0.01
    jitter = 0.0

    def __init__(self, name=None, fails=0, **params):
        super().__init__(name, **params)
        self.fails = fails
        self.attempt_times = []

    async def prep(self, shared):
        self.attempt_times = []  # per-run state (the node is copied per run)
        return shared

    async def exec(self, shared):
        self.attempt_times.append(asyncio.get_running_loop().time())
        if len(self.attempt_times) <= self.fails:
            raise ValueError(f"boom {len(self.attempt_times)}")
        return "ok"

    async def exec_fallback(self, prep, exc):
        return f"fallback after {exc}"

    async def post(self, shared, prep, res):
        shared["res"] = res
        shared["times"] = self.attempt_times
        return None


async def test_retry_then_success_and_trace():
    shared = {}
    await Flow(Flaky(fails=2)).run(shared)
    assert shared["res"] == "ok"
    (rec,) = shared["trace"]
    assert rec["node"] == "Flaky" and rec["retries"] == 2 and rec["error"].startswith("ValueError")
    assert set(rec) == {"node", "action", "ms", "retries", "error"}


async def test_exponential_backoff():
    shared = {}
    await Flow(Flaky(fails=2)).run(shared)
    t = shared["times"]
    gaps = [t[1] - t[0], t[2] - t[1]]
    assert gaps[0] >= 0.01 * 0.99 and gaps[1] >= 0.02 * 0.99  # wait, then wait * 2


def test_backoff_delays_jitter_and_retry_after():
    n = Node()
    n.wait, n.backoff, n.jitter, n.max_wait = 1.0, 2.0, 0.25, 100
    delays = [n.retry_delay(3, ValueError()) for _ in range(200)]
    assert all(6.0 <= d <= 10.0 for d in delays) and len(set(delays)) > 1

    class Hinted(Exception):
        retry_after = 7.0

    assert n.retry_delay(0, Hinted()) == 7.0
    n.max_wait = 5
    assert n.retry_delay(0, Hinted()) == 5


async def test_fallback_when_retries_exhausted():
    shared = {}
    await Flow(Flaky(fails=5)).run(shared)
    assert shared["res"] == "fallback after boom 3"
    assert shared["trace"][0]["retries"] == 2


async def test_non_retryable_goes_straight_to_fallback():
    class Fatal(Exception):
        retryable = False

    class N(Flaky):
        async def exec(self, shared):
            self.attempt_times.append(0)
            raise Fatal("no")

    shared = {}
    await N().run(shared)
    assert len(shared["times"]) == 1 and shared["res"].startswith("fallback")


async def test_timeout_per_attempt():
    class Slow(Flaky):
        timeout = 0.05
        max_retries = 2

        async def exec(self, shared):
            self.attempt_times.append(0)
            await asyncio.Event().wait()  # never set: only the timeout ends this

    shared = {}
    await Slow().run(shared)
    assert len(shared["times"]) == 2
    assert shared["res"].startswith("fallback") and "TimeoutError" in shared["trace"][0]["error"]


async def test_default_fallback_reraises_and_trace_has_error():
    class Broken(Node):
        async def exec(self, _):
            raise RuntimeError("bad")

    shared = {}
    with pytest.raises(RuntimeError):
        await Flow(Broken()).run(shared)
    assert shared["trace"][0]["error"] == "RuntimeError: bad"


class Step(Node):
    def __init__(self, name=None, action=None, **params):
        super().__init__(name, **params)
        self.action = action

    async def post(self, shared, prep, res):
        shared.setdefault("path", []).append(self.name)
        return self.action


async def test_action_routing():
    a, b, c = Step("a", "go_c"), Step("b"), Step("c")
    a >> b
    a - "go_c" >> c
    shared = {}
    await Flow(a).run(shared)
    assert shared["path"] == ["a", "c"]
    assert [r["action"] for r in shared["trace"]] == ["go_c", None]


async def test_missing_successor_warns(caplog):
    a, b = Step("a", "nowhere"), Step("b")
    a >> b
    with caplog.at_level(logging.WARNING):
        await Flow(a).run({})
    assert "has no successor" in caplog.text


async def test_cycle_guard():
    a = Step("a")
    a >> a
    with pytest.raises(FlowError):
        await Flow(a).run({})


async def test_nodes_are_copied_per_run_no_state_leak():
    class Remember(Node):
        async def prep(self, shared):
            self.mine = shared["id"]
            await asyncio.sleep(0)  # let the other conversation run in between
            return None

        async def post(self, shared, prep, res):
            await asyncio.sleep(0)
            shared["seen"] = self.mine

    node = Remember()
    flow = Flow(node)
    shared = [{"id": i} for i in range(20)]
    await asyncio.gather(*(flow.run(s) for s in shared))
    assert [s["seen"] for s in shared] == list(range(20))
    assert not hasattr(node, "mine")  # the template node was never touched


async def test_nested_flow():
    inner = Flow(Step("x", "out"), name="inner")
    after = Step("after")
    inner - "out" >> after
    shared = {}
    await Flow(inner).run(shared)
    assert shared["path"] == ["x", "after"]


REG = {"Step": Step, "Flaky": Flaky}
DEFN = {
    "name": "demo",
    "start": "a",
    "nodes": {"a": {"type": "Step", "params": {"action": "go_c"}}, "b": "Step", "c": "Flaky"},
    "edges": [["a", DEFAULT, "b"], ["a", "go_c", "c"]],
}


async def test_declarative_builds_the_same_graph():
    a, b, c = Step("a", "go_c"), Step("b"), Flaky("c")
    a >> b
    a - "go_c" >> c
    built = build_flow(DEFN, REG)
    assert graph_edges(built) == graph_edges(Flow(a))
    shared = {}
    await built.run(shared)
    assert [r["node"] for r in shared["trace"]] == ["a", "c"]


def test_definition_checks_and_mermaid():
    bad = {**DEFN, "nodes": {**DEFN["nodes"], "d": "Nope"}, "edges": [*DEFN["edges"], ["a", "x", "zz"]]}
    problems = check_definition(bad, REG)
    assert any("unknown type Nope" in p for p in problems) and any("unknown node zz" in p for p in problems)
    with pytest.raises(FlowError):
        build_flow(bad, REG)
    text = flow_to_mermaid(DEFN)
    assert text.startswith("flowchart TD") and "a -->|go_c| c" in text and "a --> b" in text


def test_medical_flow_definition_is_complete():
    assert check_definition(MEDICAL_FLOW) == []
    flow = medical_flow()
    names = {e[0] for e in graph_edges(flow)} | {e[3] for e in graph_edges(flow)}
    assert names == set(MEDICAL_FLOW["nodes"])
