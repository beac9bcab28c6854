"""A tiny llama-architecture chat model for tests, written with the ``gguf`` package from random weights, and
llama.cpp's own OpenAI-compatible HTTP server (from the ``xllamacpp`` wheel) serving it.

The model (about 350 KB: one layer, width 64, a 354-token SentencePiece-style vocabulary of the 256 byte
tokens plus printable ASCII, a ChatML-like chat template) says nothing sensible; what it is for is the
server around it. Asked with ``response_format`` = ``json_schema``, llama.cpp turns the schema into a grammar
and samples only tokens the grammar allows, so even random weights produce schema-valid JSON: the real
structured-output path, with nothing downloaded. The grammar guarantees a valid prefix, not an end: a random
model inside a string rarely picks the closing quote and is cut at ``max_tokens`` (llama.cpp then answers
HTTP 500). ``closing_bias`` (default 1.0) raises the logits of the closing quote and bracket so that strings
and lists end within a few tokens, as a real model's do; 0 gives the rambling model. Written in well under a second; served in-process on a free
loopback port (``xllamacpp.Server`` with ``hostnames``/``port`` starts llama.cpp's HTTP server, the same one
``llama-server`` runs, with ``/v1/chat/completions``).
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import xllamacpp

# A ChatML-like template (jinja, as llama.cpp's server renders it).
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
# gguf.TokenType values
_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6


def write_tiny_llama(
    out: Path,
    *,
    seed: int = 0,
    width: int = 64,
    layers: int = 1,
    heads: int = 4,
    ffn: int = 128,
    output_scale: float = 0.3,
    closing_bias: float = 1.0,
) -> Path:
    """Write a random-weight llama GGUF to ``out`` (F32 tensors, no quantisation) and return the path."""
    rng = np.random.default_rng(seed)
    chars = ["▁", *(chr(c) for c in range(33, 127))]
    pieces = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256)), *chars]
    types = [_UNKNOWN, _CONTROL, _CONTROL, *[_BYTE] * 256, *[_NORMAL] * len(chars)]
    scores = [0.0] * (3 + 256) + [-float(i) for i in range(len(chars))]
    n_vocab = len(pieces)

    def weights(*shape: int, scale: float = 0.02) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name("medbot-test-tiny-llama")
    writer.add_context_length(16384)  # llama.cpp caps n_ctx at the trained context
    writer.add_embedding_length(width)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(width // heads)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    # Feature 0 of every token embedding is a constant, which the near-zero layers leave in place: through
    # column 0 of the output matrix it acts as a bias on the logits of the closing quote and bracket.
    embed = weights(n_vocab, width, scale=1.0)
    embed[:, 0] = 4.0
    output = weights(n_vocab, width, scale=output_scale)
    output[:, 0] = 0.0
    for closing in ('"', "]"):
        output[pieces.index(closing), 0] = closing_bias
    writer.add_tensor("token_embd.weight", embed)
    writer.add_tensor("output_norm.weight", np.ones(width, np.float32))
    writer.add_tensor("output.weight", output)
    for i in range(layers):
        blk = f"blk.{i}."
        writer.add_tensor(blk + "attn_norm.weight", np.ones(width, np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(blk + name + ".weight", weights(width, width))
        writer.add_tensor(blk + "ffn_norm.weight", np.ones(width, np.float32))
        writer.add_tensor(blk + "ffn_gate.weight", weights(ffn, width))
        writer.add_tensor(blk + "ffn_up.weight", weights(ffn, width))
        writer.add_tensor(blk + "ffn_down.weight", weights(width, ffn))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(model: Path, port: int, *, n_ctx: int = 4096) -> Any:
    """llama.cpp's HTTP server on 127.0.0.1:``port`` for ``model`` (running until the object is dropped)."""
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = n_ctx
    params.n_batch = params.n_ubatch = 512
    params.n_parallel = 1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
    params.warmup = False
    params.verbosity = -1  # llama.cpp's own log lines off
    params.sampling.seed = 20  # the same garbage on every run
    params.hostnames = ["127.0.0.1"]
    params.port = port
    return xllamacpp.Server(params)
