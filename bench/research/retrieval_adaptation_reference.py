"""The reference of the per-role calibration (``engine/retrieval/adaptation.py``): its self-supervised
procedure run on the faq-val KBs of ``bench/retrieval_shapes.py``, where the global calibration is known to
hold on real messages.

For each shape's KB: ``adaptation.self_queries`` (perturbed questions, a keyword alone, an answer sentence),
searched answerable and with their own entry absent, in hybrid and sparse mode; the rows are cached under
``.medbot/eval-cache/adaptation-rows-<mode>-<shape>.json`` (query vectors in the embedding cache). The
reference pools the faq-val shapes (``REFERENCE_SHAPES``) and is written to
``engine/retrieval/adaptation_reference.json``; the script then prints, per shape, what the role's adjustment
relative to that reference would be.

    python -m bench.research.retrieval_adaptation_reference            # collect (cached) + write the reference
    python -m bench.research.retrieval_adaptation_reference --recollect  # after a ranking change
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from bench.memory_store import MemoryKBStore
from bench.retrieval_shapes import CACHE, ROLE, SHAPES, DiskCachedEmbedder, Shape, build_shapes
from engine.embedding import passage_text
from engine.retrieval import adaptation
from engine.retrieval.adaptation import SelfRow
from engine.retrieval.search import KBSearch
from engine.text import clean_query, has_diacritics

# The faq-val KBs (the `mix` and `self` shapes hold the sample KB, which the reference must not include).
REFERENCE_SHAPES = ("questions", "questions_kw", "noisy_kw", "answers_only", "full")
MODES = ("hybrid", "sparse")
# Shapes sharing one KB's questions: "the reference without this KB" leaves the whole family out.
QUESTION_FAMILY = ("questions", "questions_kw", "noisy_kw")
FAMILY = {name: QUESTION_FAMILY for name in QUESTION_FAMILY}


async def searcher(shape: Shape, embedder: DiskCachedEmbedder) -> KBSearch:
    vectors = embedder.passage_vectors([passage_text(e.question, e.answer) for e in shape.entries])
    search = KBSearch(MemoryKBStore(shape.entries, vectors), embedder)
    await search.ready(ROLE)
    return search


async def shape_rows(
    shape: Shape, embedder: DiskCachedEmbedder, *, recollect: bool = False
) -> dict[str, list[SelfRow]]:
    """The self rows of one shape's KB per mode (cached)."""
    out: dict[str, list[SelfRow]] = {}
    missing = []
    for mode in MODES:
        path = CACHE / f"adaptation-rows-{mode}-{shape.name}.json"
        if path.is_file() and not recollect:
            data = json.loads(path.read_text())
            out[mode] = [SelfRow.from_list(v, data["features"]) for v in data["rows"]]
        else:
            missing.append(mode)
    if not missing:
        return out
    search = await searcher(shape, embedder)
    queries = adaptation.self_queries(shape.entries)
    # Embed the queries in one batch, spelled as the search embeds them (unmarked ones restored).
    index = await search.index(ROLE)
    restorer = index.restorer
    texts = [clean_query(q.text) for q in queries]
    embedder.query_vectors(
        sorted({t if has_diacritics(t) or restorer is None else restorer.restore(t) for t in texts})
    )
    for mode in missing:
        _, rows = await adaptation.collect(search, ROLE, queries, mode)
        out[mode] = rows
        path = CACHE / f"adaptation-rows-{mode}-{shape.name}.json"
        path.write_text(
            json.dumps({"features": list(adaptation.FEATURES), "rows": [r.to_list() for r in rows]})
        )
        print(f"{shape.name}/{mode}: {len(queries)} queries, {len(rows)} rows", file=sys.stderr, flush=True)
    return out


async def all_rows(
    shapes: tuple[str, ...] = SHAPES, recollect: bool = False
) -> dict[str, dict[str, list[SelfRow]]]:
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    rows: dict[str, dict[str, list[SelfRow]]] = {}
    for name in shapes:
        kb = built["mix"] if name == "self" else built[name]  # `self` queries the mix KB
        rows[name] = (
            rows["mix"]
            if name == "self" and "mix" in rows
            else await shape_rows(kb, embedder, recollect=recollect)
        )
    return rows


def pooled_reference(rows: dict[str, dict[str, list[SelfRow]]]) -> dict[str, list[SelfRow]]:
    """The reference shapes' rows per mode, pooled (each KB gives its ~200 sampled entries' queries)."""
    out: dict[str, list[SelfRow]] = {}
    for mode in MODES:
        parts = [rows[name][mode] for name in REFERENCE_SHAPES if name in rows]
        out[mode] = [r for part in parts for r in part]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recollect", action="store_true")
    ap.add_argument("--prior", type=float, default=adaptation.PRIOR_WEIGHT)
    ap.add_argument("--no-write", action="store_true", help="report only; leave the reference file as it is")
    args = ap.parse_args()
    rows = asyncio.run(all_rows(recollect=args.recollect))
    reference = pooled_reference(rows)
    if not args.no_write:
        adaptation.write_reference(
            reference,
            "faq-val KBs "
            + ", ".join(REFERENCE_SHAPES)
            + " (bench/research/retrieval_adaptation_reference.py)",
        )
    for mode in MODES:
        ref = adaptation.reference_fit(reference[mode], mode)
        kinds = ", ".join(f"{k} a0={a:.3f} b0={b:.3f}" for k, (a, b) in ref.items())
        print(f"{mode} reference ({len(reference[mode])} rows): {kinds}")
        for name, by_mode in rows.items():
            adj = adaptation.relative_adjustment(by_mode[mode], mode, ref, args.prior)
            others = pooled_reference(
                {
                    k: v
                    for k, v in rows.items()
                    if k in REFERENCE_SHAPES and k not in FAMILY.get(name, (name,))
                }
            )
            loo = adaptation.relative_adjustment(
                by_mode[mode], mode, adaptation.reference_fit(others[mode], mode), args.prior
            )
            print(
                f"  {name:<13} adjustment a={adj.a:.3f} b={adj.b:+.3f} (reference without its KB: a={loo.a:.3f} "
                f"b={loo.b:+.3f}); self global {adaptation.decision_figures(by_mode[mode], mode)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
