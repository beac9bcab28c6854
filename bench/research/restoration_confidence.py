"""What the dense leg should embed for a message typed without diacritics when the restorer is unsure (issue 21,
fifteenth round; research, not the product).

``engine.text.DiacriticRestorer`` gives an unmarked message the KB's spelling back before the dense leg embeds it;
its ``readings`` say how sure each choice is (the share of its context's spellings, the two neighbouring bigrams,
else the syllable alone, that agree with it) and give the second reading (the best other spelling); this round
wrote them here first and moved them into the restorer. Variants of the text(s) embedded, each for unmarked texts
only (a text with marks is embedded as typed in every variant):

- ``restored``: the product;
- ``keep@T``: syllables whose confidence is under T left unmarked, the rest restored;
- ``raw+restored``: the mean of the vectors of the restored and the unmarked text;
- ``top2@T``: the mean of the vectors of the restored text and the text with every syllable under T switched
  to its second reading (``top2plain@T``: the mean not renormalised; ``top2short@T``: only for messages under
  ``fusion.LEARNED_MIN_WORDS`` words, the others restored alone);
- ``keep+restored@T``: the mean of the vectors of ``restored`` and ``keep@T``.

A mean of two vectors is renormalised (the e5 vectors are unit length), so the dense cosine keeps its scale.

The sixteenth round adds ``near:`` variants: the product's ``NEAR_SPELLING_K`` set, the message restored in the
spelling of the sparse leg's first k entries before the KB's (``DiacriticRestorer.restore_near``), with options
``near:k=20,syl=1,ctx=0,agree=0,w=flat,tok=40,below=2`` (``syl``: the entries' syllables too; ``ctx``: the KB's
bigrams before the entries' syllables; ``agree``: the KB's choice when the entries' bigrams split under that share;
``w=rank``: an entry weighted 1/rank; ``tok``: words read per field; ``below``: only words the KB is less sure
of). ``--near-wer`` gives their syllable error rate and the share of messages whose entry the sparse leg has in
its first 10 / 20 / 30; every run writes each variant's per-message ranks beside ``--out``.

Measured on the ``questions`` shape: faq-val dev (the shipped adapter, fitted on every dev pair, so in-sample for
the typed map) and the blind sets RQ–RQ6 (RQ6 was the fifteenth round's judge and is a development set since the
sixteenth round; the fifteenth round used RQ–RQ5 only): P@1 as typed and with every mark removed, the loss, the
answered share and precision when answered of both runs, false answers on the unanswerable messages (as typed,
and with every mark removed: ``false_nodiac``, added in the sixteenth round). Messages
whose text carries marks are searched once (the ``restored`` run) and shared by every variant. With ``--wer``
only the restorer's syllable error rate on the stripped messages whose marked form is known, by confidence bin.

    PYTHONPATH=$PWD python -m bench.research.restoration_confidence [--variants restored,keep@0.6] [--wer]
    PYTHONPATH=$PWD python -m bench.research.restoration_confidence --variants "restored;near:k=20,ctx=1"
    PYTHONPATH=$PWD python -m bench.research.restoration_confidence --near-wer "near:k=20,ctx=1;near:k=5,ctx=1"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

import engine.retrieval.search as search_module
from bench.bench_retrieval_heldout import HELD_OUT_SETS, load_held_out
from bench.retrieval_shapes import (
    DiskCachedEmbedder,
    EvalQuery,
    QueryOutcome,
    build_shapes,
    run_queries,
    without,
)
from engine.retrieval.fusion import LEARNED_MIN_WORDS
from engine.retrieval.sparse import SparseIndex, spelling_fields
from engine.text import (
    _WORD,
    DiacriticRestorer,
    NearSpelling,
    clean_query,
    has_diacritics,
    split_words,
    strip_diacritics,
)

SETS = ("RQ", "RQ2", "RQ3", "RQ4", "RQ5", "RQ6")  # RQ6 a development set since the sixteenth round
SEP = "\x1f"  # joins the texts whose vectors are averaged (the mean renormalised)
SEP_PLAIN = "\x1e"  # the same, the mean not renormalised (its cosines are the mean of the texts' cosines)
THRESHOLD = 0.5


def variant_text(name: str, restorer: DiacriticRestorer, text: str) -> str:
    """The text(s) embedded for an unmarked cleaned message (several joined by ``SEP``: their mean vector)."""
    restored = restorer.restore(text)
    if name == "restored":
        return restored
    base, _, arg = name.partition("@")
    t = float(arg) if arg else 0.0
    if base == "keep":
        return restorer.restore(text, keep_below=t)
    if base == "raw+restored":
        return restored + SEP + text
    if (
        base == "top2short"
    ):  # top2 for messages under fusion.LEARNED_MIN_WORDS words only (cheap to embed twice)
        if len(_WORD.findall(text)) >= LEARNED_MIN_WORDS:
            return restored
        base = "top2"
    if base in ("top2", "top2plain"):
        alt = restorer.restore_both(text, t)[1]
        return restored if alt is None else restored + (SEP if base == "top2" else SEP_PLAIN) + alt
    if base == "keep+restored":
        kept = restorer.restore(text, keep_below=t)
        return restored if kept == restored else restored + SEP + kept
    raise ValueError(name)


class MeanEmbedder:
    """The bench's cached embedder; a query text joined by ``SEP`` is the renormalised mean of its parts."""

    def __init__(self, inner: DiskCachedEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.passage_vectors = inner.passage_vectors

    async def embed_passages(self, texts):
        return self.inner.passage_vectors(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        plain = SEP_PLAIN in text
        parts = text.split(SEP_PLAIN if plain else SEP)
        vecs = self.inner.query_vectors(parts)
        if len(parts) == 1:
            return vecs[0]
        v = vecs.mean(axis=0)
        return v.astype(np.float32) if plain else (v / np.linalg.norm(v)).astype(np.float32)


_PRODUCT = (search_module._embedding_texts, search_module._restore_near, search_module.NEAR_SPELLING_K)


def install(name: str) -> None:
    """Every search embeds ``name``'s text(s) for an unmarked message (``KBSearch`` averages several vectors);
    a ``near:`` variant sets the product's ``NEAR_SPELLING_K`` and restores with the variant's options."""
    search_module._embedding_texts, search_module._restore_near, search_module.NEAR_SPELLING_K = _PRODUCT
    if name.startswith("near"):
        o = near_variant(name)

        def restore_near(restorer, index, text, near):
            texts = []
            for rank, eid in enumerate(near[: int(o["k"])]):
                e = index.entries[index.position[eid]]
                w = 1.0 if o["w"] == "flat" else 1.0 / (1.0 + rank)
                texts.extend((f, w) for f in spelling_fields(e))
            return restorer.restore_near(
                text,
                NearSpelling(texts, max_tokens_per_text=int(o["tok"])),
                syllables=bool(o["syl"]),
                context_first=bool(o["ctx"]),
                agree=float(o["agree"]),
                unsure_below=float(o["below"]),
            )

        search_module.NEAR_SPELLING_K = int(o["k"])
        search_module._restore_near = restore_near
        return

    def embedding_texts(index: SparseIndex, text: str) -> tuple[str, ...]:
        if has_diacritics(text):
            return (text,)
        restorer = index.restorer or index.build_restorer()
        return tuple(variant_text(name, restorer, text).split(SEP))

    search_module._embedding_texts = embedding_texts


def data() -> dict[str, tuple[list, list[EvalQuery], list[EvalQuery]]]:
    """Per set (dev, RQ..RQ6): the KB entries, answerable and unanswerable queries."""
    shape = build_shapes()["questions"]
    out = {}
    dev = shape.queries["dev"]
    out["dev"] = (shape.entries, dev, dev)  # dev's unanswerable run: every dev gold removed
    for s in SETS:
        ans, un = load_held_out(HELD_OUT_SETS[s])
        out[s] = (shape.entries, ans, un)
    return out


async def run_set(name, entries, ans, un, emb, variant, base=None):
    """Runs typed / stripped / declined; with ``base`` (the ``restored`` outcomes) only unmarked texts searched."""

    def unmarked(qs, strip=False):
        return [q for q in qs if strip or not has_diacritics(clean_query(q.text))]

    golds = {q.gold for q in un}
    removed = without(entries, golds)
    runs = {}
    for run, kb, qs, strip in (
        ("typed", entries, ans, False),
        ("stripped", entries, ans, True),
        ("declined", removed, un, False),
        ("declined_stripped", removed, un, True),
    ):
        todo = qs if base is None else unmarked(qs, strip)
        got = await run_queries(kb, todo, emb, strip=strip, query_adapter=True)
        if base is not None:
            by = {o.query_id: o for o in got}
            got = [by.get(o.query_id, o) for o in base[run]]
        runs[run] = got
    return runs


def summary(runs: dict[str, list[QueryOutcome]]) -> dict[str, float]:
    def p1(os):
        return sum(o.rank == 1 for o in os) / len(os)

    def ans(os):
        a = [o for o in os if o.top and o.score >= THRESHOLD]
        return len(a) / len(os), sum(o.rank == 1 for o in a) / max(1, len(a))

    t, s, d = runs["typed"], runs["stripped"], runs["declined"]
    ta, tp = ans(t)
    sa, sp = ans(s)
    return {
        "n": len(t),
        "p1": round(p1(t), 4),
        "p1_nodiac": round(p1(s), 4),
        "loss": round(p1(t) - p1(s), 4),
        "answered": round(ta, 4),
        "precision": round(tp, 4),
        "answered_nodiac": round(sa, 4),
        "precision_nodiac": round(sp, 4),
        "false": round(sum(bool(o.top) and o.score >= THRESHOLD for o in d) / len(d), 4),
        "false_nodiac": round(
            sum(bool(o.top) and o.score >= THRESHOLD for o in runs["declined_stripped"]) / len(d), 4
        ),
        "only_typed": sum(a.rank == 1 and b.rank != 1 for a, b in zip(t, s, strict=True)),
        "only_unmarked": sum(a.rank != 1 and b.rank == 1 for a, b in zip(t, s, strict=True)),
    }


def marked_messages(queries: list[EvalQuery]):
    """(query, its cleaned text with every mark removed, the words it was typed with, lower-cased) for each query
    typed with marks: the messages whose right spelling is known."""
    for q in queries:
        typed = clean_query(q.text)
        if has_diacritics(typed):
            yield q, clean_query(strip_diacritics(q.text)), split_words(typed.lower())


def wer(sets) -> None:
    """Syllable error rate of the restorer on stripped messages whose marked form is known, by confidence bin."""
    bins = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.01)
    for name, (entries, ans, _) in sets.items():
        r = DiacriticRestorer(f for e in entries for f in spelling_fields(e))
        tot = Counter()
        for _q, stripped, tw in marked_messages(ans):
            read = [(m.group(0), c, sh, o) for m, c, sh, o in r.readings(stripped)]
            if len(tw) != len(read):
                continue
            for gold, (_, c, s, o) in zip(tw, read, strict=True):
                b = next(i for i in range(len(bins) - 1) if bins[i] <= s < bins[i + 1])
                tot[b, "n"] += 1
                tot[b, "err"] += c.lower() != gold
                tot[b, "second"] += c.lower() != gold and o.lower() == gold
                tot[b, "plain"] += c.lower() != gold and strip_diacritics(gold) == gold
        n = sum(tot[b, "n"] for b in range(len(bins) - 1))
        err = sum(tot[b, "err"] for b in range(len(bins) - 1))
        print(f"{name}: {n} syllables, error {err / max(1, n):.3f}")
        for b in range(len(bins) - 1):
            k = tot[b, "n"]
            if k:
                print(
                    f"  conf [{bins[b]:.2f},{bins[b + 1]:.2f}): {k / n:.3f} of syllables, error "
                    f"{tot[b, 'err'] / k:.3f}, second reading right {tot[b, 'second'] / k:.3f}, "
                    f"unmarked right {tot[b, 'plain'] / k:.3f}"
                )


def near_spelling(index: SparseIndex, text: str, k: int, weighting: str, max_tokens: int) -> NearSpelling:
    """The spellings of the fields of the sparse leg's first ``k`` entries for a cleaned unmarked message."""
    hits = index.search(text, k)
    texts = []
    for rank, (eid, _) in enumerate(hits):
        e = index.entries[index.position[eid]]
        w = 1.0 if weighting == "flat" else 1.0 / (1.0 + rank)
        texts.extend((f, w) for f in spelling_fields(e))
    return NearSpelling(texts, max_tokens_per_text=max_tokens)


def near_variant(name: str) -> dict:
    """``near:k=20,syl=1,ctx=0,agree=0,w=flat,tok=40`` -> its settings."""
    opts = {"k": 20, "syl": 1, "ctx": 0, "agree": 0.0, "w": "flat", "tok": 40, "below": 2.0}
    for part in filter(None, name.partition(":")[2].split(",")):
        key, _, value = part.partition("=")
        opts[key] = value if key == "w" else float(value)
    return opts


def near_restore(restorer: DiacriticRestorer, index: SparseIndex, text: str, name: str) -> str:
    o = near_variant(name)
    near = near_spelling(index, text, int(o["k"]), o["w"], int(o["tok"]))
    return restorer.restore_near(
        text,
        near,
        syllables=bool(o["syl"]),
        context_first=bool(o["ctx"]),
        agree=float(o["agree"]),
        unsure_below=float(o["below"]),
    )


def near_wer(sets, variants: list[str]) -> dict:
    """Syllable error rate of the stripped marked messages, restored by the KB-wide restorer and by each
    ``near:`` variant; and the share of messages whose gold entry is among the sparse leg's first k."""
    entries = next(iter(sets.values()))[0]
    index = SparseIndex(entries)
    restorer = index.build_restorer()
    out = {}
    for name, (_, ans, _) in sets.items():
        row = {}
        msgs = [
            (q, stripped, tw)
            for q, stripped, tw in marked_messages(ans)
            if len(tw) == len(split_words(stripped))
        ]
        gold_pos = {e.code: e.id for e in entries}
        for variant in ["restored", *variants]:
            n = err = clean = 0
            for _q, stripped, tw in msgs:
                got = (
                    restorer.restore(stripped)
                    if variant == "restored"
                    else near_restore(restorer, index, stripped, variant)
                )
                gw = split_words(got.lower())
                e = sum(a != b for a, b in zip(gw, tw, strict=True))
                n += len(tw)
                err += e
                clean += e == 0
            row[variant] = (round(err / max(1, n), 4), round(clean / max(1, len(msgs)), 4))
        for k in (10, 20, 30):
            row[f"gold@{k}"] = round(
                sum(gold_pos.get(q.gold) in {i for i, _ in index.search(st, k)} for q, st, _ in msgs)
                / len(msgs),
                4,
            )
        row["n"] = len(msgs)
        out[name] = row
        print(name, json.dumps(row), flush=True)
    return out


async def main_async(args) -> None:
    sets = data()
    if args.wer:
        wer(sets)
        return
    if args.near_wer:
        Path(args.out).write_text(json.dumps(near_wer(sets, args.near_wer.split(";")), indent=1))
        return
    emb = MeanEmbedder(DiskCachedEmbedder(root=Path(args.cache)))
    results = {}
    base: dict[str, dict[str, list[QueryOutcome]]] = {}
    every: dict[str, dict[str, dict[str, list[QueryOutcome]]]] = {}
    for variant in args.variants.split(";" if ";" in args.variants else ","):
        install(variant)
        results[variant] = {}
        for name, (entries, ans, un) in sets.items():
            runs = await run_set(name, entries, ans, un, emb, variant, base.get(name))
            if variant == "restored":
                base[name] = runs
            results[variant][name] = summary(runs)
            every.setdefault(variant, {})[name] = runs
        pooled = {
            run: [o for s in SETS for o in every[variant][s][run]]
            for run in ("typed", "stripped", "declined", "declined_stripped")
        }
        results[variant]["all"] = summary(pooled)
        print(variant, json.dumps(results[variant]), flush=True)
        Path(args.out).write_text(json.dumps(results, indent=1))
        ranks = {
            s: {run: {o.query_id: [o.rank, round(o.score, 4), o.top] for o in os} for run, os in runs.items()}
            for s, runs in every[variant].items()
        }
        Path(args.out).with_suffix(f".{variant.replace(':', '_').replace(',', '_')}.ranks.json").write_text(
            json.dumps(ranks)
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="restored,keep@0.6,raw+restored,top2@0.8,keep+restored@0.6")
    ap.add_argument("--wer", action="store_true")
    ap.add_argument("--near-wer", default="", help="';'-separated near: variants (syllable error rate)")
    ap.add_argument("--cache", default="/tmp/ret15-cache")
    ap.add_argument("--out", default="/tmp/ret15-variants.json")
    asyncio.run(main_async(ap.parse_args(sys.argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
