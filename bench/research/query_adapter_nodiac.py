"""The query adapter and messages without diacritics (issue 21, fifth round; research, not the product).

The adapter shipped by ``query_adapter_fit`` was fitted on dev messages as typed; on the test half it widened the
no-diacritics loss (P@1 as typed - P@1 with every mark removed) from 0.006 to 0.016: an unmarked message reaches
the dense leg as the product sees it (marks removed, then restored from the KB's own spelling by
``DiacriticRestorer``), a vector the map was not fitted on. Variants, all 5-fold within DEV as
``query_adapter_ablation`` (the same folds, the same production fusion; only the dense matrix recomputed):

- ``typed``: the shipped fit (dev pairs as typed; a message typed without marks restored, as search does);
- ``both``: one map fitted on every dev pair twice, as typed and stripped-then-restored (1,404 rows);
- ``split``: the typed map for messages with marks, a map fitted on the stripped-then-restored pairs only for
  messages without;
- ``split-both``: the typed map for messages with marks, the ``both`` map for messages without;
- ``unmarked a``: the typed map, but a scale ``a`` for messages without marks.

    PYTHONPATH=$PWD MEDBOT_EVAL_DIR=/work/main/.medbot python -m bench.research.query_adapter_nodiac

Prints P@1 / hit@10 per shape and the no-diacritics loss. Results: ``bench/retrieval_shapes_results.md``
("The adapter and unmarked messages").
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench.research.query_adapter_ablation import FOLDS, LONG, SHAPES, Set, build, ridge, show
from bench.research.retrieval_ranking_ablation import Data, final, metrics
from bench.retrieval_shapes import DiskCachedEmbedder

Maps = list[tuple[np.ndarray, np.ndarray]]  # per fold: (map for marked messages, map for unmarked ones)


def fold_maps(sets: dict[str, Set], lam: float, variant: str) -> Maps:
    """Per fold, the two maps of ``variant`` fitted on the other folds' dev pairs."""
    typed, bare = sets["questions"], sets["questions~nodiac"]
    fit = ridge(lam, residual=True)
    out = []
    for k in range(FOLDS):
        tr = typed.folds != k
        p = typed.pv[typed.d.gold[tr]]
        w_typed = fit(typed.qv[tr], p, typed.pv, typed.d.gold[tr])
        w_bare = fit(bare.qv[tr], p, bare.pv, bare.d.gold[tr]) if variant == "split" else None
        w_both = (
            fit(np.vstack([typed.qv[tr], bare.qv[tr]]), np.vstack([p, p]), typed.pv, typed.d.gold[tr])
            if variant in ("both", "split-both")
            else None
        )
        if variant == "both":
            out.append((w_both, w_both))
        elif variant == "split":
            out.append((w_typed, w_bare))
        elif variant == "split-both":
            out.append((w_typed, w_both))
        else:
            out.append((w_typed, w_typed))
    return out


def run(sets: dict[str, Set], maps: Maps, a: float, a_bare: float) -> dict[str, tuple[float, float]]:
    res = {}
    for name, s in sets.items():
        dense = s.d.dense.copy()
        for k in range(FOLDS):
            for marked, w, scale in ((True, maps[k][0], a), (False, maps[k][1], a_bare)):
                rows = (s.folds == k) & (s.d.marked == marked) & (s.x.words >= LONG)
                if not rows.any() or scale == 0:
                    continue
                z = s.qv[rows] + scale * (s.qv[rows] @ w)
                z = z / np.linalg.norm(z, axis=1, keepdims=True)
                dense[rows] = z @ s.pv.T
        d2 = Data(s.d.name, s.d.shape, s.d.sparse, dense.astype(np.float32), s.d.gold, s.d.marked, s.d.texts)
        res[name] = metrics(d2, final(d2, s.x))
    return res


def main() -> int:
    t = time.perf_counter()
    sets = build(list(SHAPES), DiskCachedEmbedder(offline=True))
    print(f"loaded in {time.perf_counter() - t:.0f}s", file=sys.stderr, flush=True)
    typed = sets["questions"]
    print(
        f"dev questions: {len(typed.folds)} messages, {int((~typed.d.marked).sum())} typed without marks, "
        f"{int(typed.long.sum())} of 20+ words",
        flush=True,
    )
    print(f"{'variant':<44}" + "".join(f"{n:>18}" for n in sets) + "  nodiac.loss")
    show("production, no adapter", {n: metrics(s.d, final(s.d, s.x)) for n, s in sets.items()})
    for lam in (10.0, 30.0):
        for variant in ("typed", "both", "split", "split-both"):
            maps = fold_maps(sets, lam, variant)
            for a in (1.0,) if variant != "typed" else (1.0, 1.5):
                show(f"{variant} lam {lam:g}, a {a:g}", run(sets, maps, a, a))
            if variant == "typed":
                for a_bare in (0.0, 0.5):
                    show(f"typed lam {lam:g}, a 1, unmarked a {a_bare:g}", run(sets, maps, 1.0, a_bare))
            if variant in ("both", "split-both"):
                show(f"{variant} lam {lam:g}, a 1, unmarked a 1.5", run(sets, maps, 1.0, 1.5))
    return 0


if __name__ == "__main__":
    sys.exit(main())
