"""The LLM path against a real llama.cpp server: llama.cpp's own OpenAI-compatible HTTP server (the
``xllamacpp`` wheel) serving a tiny random-weight chat model written for the session (``tests/tiny_llama``).

The model's words are garbage; what is real is the server: structured-output detection on a server that
supports ``response_format`` = ``json_schema``, grammar-constrained sampling that can only produce JSON of
the schema, real token counts, and our validation and offline fallback around whatever comes back. The
sample KB and the production wiring (``bot.wiring.engine_deps``) are the rest of the path.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from bot.runtime import Runtime
from bot.wiring import engine_deps
from engine.deps import EngineDeps
from engine.flows import run_medical_flow
from engine.llm import LLMClient, LLMConfig, LLMError, strict_schema
from engine.nodes import Classification, PruneOut
from engine.reply_nodes import ComposeOut
from tests.conftest import runtime_with_llm
from tests.tiny_llama import free_port, serve, write_tiny_llama

BUDGET = 8.0  # the production default of LLM_BUDGET_SECONDS


@pytest.fixture(scope="module")
def llama_urls(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Two servers: "terse" (its strings and lists close within a few tokens, as a real model's do) and
    "rambling" (no bias: inside a string it goes on until max_tokens cuts the reply)."""
    folder = tmp_path_factory.mktemp("tiny-llama")
    servers, urls = [], {}
    for name, bias in (("terse", 1.0), ("rambling", 0.0)):
        port = free_port()
        servers.append(serve(write_tiny_llama(folder / f"{name}.gguf", closing_bias=bias), port, n_ctx=16384))
        urls[name] = f"http://127.0.0.1:{port}/v1"
    port = free_port()  # the terse model with a context of 256 tokens
    servers.append(serve(folder / "terse.gguf", port, n_ctx=256))
    urls["small-context"] = f"http://127.0.0.1:{port}/v1"
    yield urls
    servers.clear()


@pytest.fixture
async def client(llama_urls: dict[str, str]) -> Any:
    llm = LLMClient(LLMConfig(base_url=llama_urls["terse"], api_key="none", model="tiny-llama", timeout=20.0))
    yield llm
    await llm.aclose()


def conforms(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    """Does ``value`` match a strict schema (the subset ``strict_schema`` produces: objects with all
    properties required and no others, arrays, enums, strings, numbers, booleans, $ref)?"""
    if "$ref" in schema:
        return conforms(value, defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return any(conforms(value, s, defs) for s in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind == "object":
        props = schema["properties"]
        return (
            isinstance(value, dict)
            and set(value) == set(props)
            and all(conforms(value[k], props[k], defs) for k in props)
        )
    if kind == "array":
        return isinstance(value, list) and all(conforms(v, schema["items"], defs) for v in value)
    checks = {
        "string": lambda v: isinstance(v, str),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    return kind is None or checks[kind](value)


@pytest.mark.parametrize("model", [Classification, PruneOut, ComposeOut], ids=lambda m: m.__name__)
async def test_the_server_enforces_each_steps_schema(client: LLMClient, model: Any) -> None:
    schema = strict_schema(model.model_json_schema())
    messages = [
        {"role": "system", "content": "Trả lời bằng JSON."},
        {"role": "user", "content": "Răng khôn mọc lệch có cần nhổ không?"},
    ]
    reply = await client.complete(messages, schema=schema, schema_name="step", max_tokens=900)
    # Detected on the first schema request and remembered: the server accepted response_format.
    assert client.structured is True and reply.structured is True
    value = json.loads(reply.text)  # plain JSON, no fences or prose: the grammar allowed nothing else
    assert conforms(value, schema, schema.get("$defs", {}))
    assert not reply.usage.estimated and reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


async def test_without_a_schema_the_same_model_writes_no_json(client: LLMClient) -> None:
    """The control: the JSON above comes from the grammar, not from the model."""
    reply = await client.complete([{"role": "user", "content": "Trả lời bằng JSON."}], max_tokens=40)
    assert client.structured is None and reply.structured is False  # nothing learnt from a schema-less call
    with pytest.raises(ValueError):
        json.loads(reply.text)


async def test_a_prompt_over_the_context_size_is_not_taken_for_a_server_without_structured_outputs(
    llama_urls: dict[str, str],
) -> None:
    """llama.cpp answers HTTP 400 to a prompt longer than its context, schema or not: that 400 must not switch
    structured outputs off for the life of the process."""
    llm = LLMClient(LLMConfig(base_url=llama_urls["small-context"], api_key="none", model="tiny-llama"))
    schema = strict_schema(PruneOut.model_json_schema())
    try:
        with pytest.raises(LLMError, match="HTTP 400"):
            await llm.complete([{"role": "user", "content": "răng " * 400}], schema=schema)
        assert llm.structured is None  # nothing learnt
        reply = await llm.complete([{"role": "user", "content": "răng"}], schema=schema)
        assert llm.structured is True and conforms(json.loads(reply.text), schema, {})
    finally:
        await llm.aclose()


@pytest.fixture(params=["terse", "rambling"])
async def make_deps(
    request: pytest.FixtureRequest, sample_runtime: Runtime, llama_urls: dict[str, str]
) -> Any:
    runtime = runtime_with_llm(
        sample_runtime,
        llama_urls[request.param],
        model="tiny-llama",
        api_key="none",
        llm_budget_seconds=BUDGET,
    )
    made: list[EngineDeps] = []

    def make() -> EngineDeps:
        made.append(engine_deps(runtime))
        return made[-1]

    make.model = request.param  # type: ignore[attr-defined]
    yield make
    for deps in made:
        assert deps.llm is not None
        await deps.llm.aclose()


QUESTIONS = [
    "Răng khôn mọc lệch có cần nhổ không?",
    "rang bi e buot khi uong nuoc lanh thi lam sao",
    "niềng răng mất bao lâu",
    "trẻ mấy tuổi thì bắt đầu chải răng",
]


async def test_the_medical_flow_with_a_garbage_model_answers_as_offline_within_the_budget(
    sample_runtime: Runtime, make_deps: Any
) -> None:
    """Every reply is schema-valid JSON (terse) or cut at max_tokens (rambling), and none is usable (a
    confidence of 5e17, an empty explanation...): the refine loop runs, the steps fall back, the circuit
    breaker stops asking the model, and every answer is the offline one, well within the budget."""
    offline_deps = engine_deps(sample_runtime)
    deps = make_deps()
    outs = []
    for text in QUESTIONS:
        offline = await run_medical_flow(offline_deps, {"role": "patient_dental", "input": text})
        t0 = time.perf_counter()
        out = await run_medical_flow(deps, {"role": "patient_dental", "input": text})
        seconds = time.perf_counter() - t0
        assert seconds < BUDGET, (text, seconds)
        assert out.input_type == offline.input_type == "medical_question"
        assert out.citations == offline.citations and out.text == offline.text, text
        outs.append(out)
    first = outs[0].llm
    # The model was really asked, three times, and did not deliver: both steps it was asked for fell back.
    assert first["classify"]["calls"] == 3
    assert first["classify"]["source"] == first["compose"]["source"] == "offline"
    assert deps.llm is not None
    if make_deps.model == "terse":
        # Schema-valid JSON with real token counts: the server's structured outputs were learnt and used.
        assert deps.llm.structured is True and first["classify"]["structured"] is True
        assert not first["classify"]["tokens"]["estimated"] and first["classify"]["tokens"]["completion"] > 0
    else:
        # llama.cpp answers HTTP 500 to a reply cut inside the JSON ("does not match the expected format"):
        # that says nothing about the schema, so nothing is learnt and the schema is still sent.
        assert deps.llm.structured is None
    # Three failed steps in a row: the breaker is open and the last questions never waited for the model.
    assert deps.llm.breaker.state == "open"
    assert all(rec["calls"] == 0 for rec in outs[-1].llm.values())
