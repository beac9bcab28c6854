"""Does the learned fusion still weigh the legs right now that the dense leg of long messages is moved by the
query adapter? (issue 21, eighth round; research, not the product.)

``fusion.LEARNED_*`` were fitted (``retrieval_fusion_research``) on the raw dense leg, before the adapter
existed; the adapter makes that leg much stronger on long messages (dense P@1 alone on ``questions``, dev:
0.537 without it). Here the dense matrix of every dev message of 20+ words is the adapted one, cross-fitted
within dev as ``query_adapter_ablation`` does (ridge on the move, lambda 10, scale 1; per fold a map fitted on
the other folds; the unmarked map, fitted on restored messages, for ``questions~nodiac``), and the learned
fusion's dense weight, first-in-leg bonuses and title-coverage weight are varied (messages under 20 words keep
the score fusion, as ``KBSearch``). Cells: P@1 / hit@10 per shape, dev; last column the no-diacritics loss.

    PYTHONPATH=$PWD python -m bench.research.fusion_after_adapter
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench.research.query_adapter_ablation import (
    FOLDS,
    SHAPES,
    Set,
    _rows,
    _with_dense,
    adapted_dense,
    build,
    cross_fitted,
    ridge,
)
from bench.research.query_adapter_fit import LAMBDA, SCALE
from bench.research.retrieval_ranking_ablation import Data, fuse_learned, fuse_minmax, metrics
from bench.retrieval_shapes import DiskCachedEmbedder


def adapted(s: Set, ws: list[np.ndarray]) -> Data:
    dense = s.d.dense.copy()
    for k in range(FOLDS):
        rows = s.folds == k
        if not rows.any():
            continue
        sub = Set(_rows(s.d, rows), s.x, s.qv[rows], s.pv, s.folds[rows], s.long[rows])
        dense[rows] = adapted_dense(sub, ws[k], SCALE, gate=True)
    return _with_dense(s.d, dense)


def fused(d: Data, s: Set, **learned: float) -> np.ndarray:
    long = s.long[:, None]
    return np.where(
        long,
        fuse_learned(d, d.sparse, s.x.cov_strict, ratio=1.0, **learned),
        fuse_minmax(d, d.sparse, 0.5, 0.4, 50),
    )


def main() -> int:
    t = time.perf_counter()
    sets = build(list(SHAPES), DiskCachedEmbedder(offline=True))
    print(f"loaded in {time.perf_counter() - t:.0f}s", file=sys.stderr, flush=True)
    typed = cross_fitted(sets, ridge(LAMBDA, residual=True))
    bare = cross_fitted(sets, ridge(LAMBDA, residual=True), train_on="questions~nodiac")
    data = {n: adapted(s, bare if n.endswith("~nodiac") else typed) for n, s in sets.items()}
    print(f"{'variant':<46}" + "".join(f"{n:>18}" for n in sets) + "  nodiac.loss")

    def show(label: str, **learned: float) -> None:
        res = {n: metrics(data[n], fused(data[n], s, **learned)) for n, s in sets.items()}
        loss = res["questions"][0] - res["questions~nodiac"][0]
        cells = "".join(f"{p1:>11.3f}/{hit:.3f}" for p1, hit in res.values())
        print(f"{label:<46}{cells}  {loss:.4f}", flush=True)

    show("production (w 0.447, bonuses .046/.069, cov .302)")
    for w in (0.35, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7):
        show(f"dense weight {w}", w=w)
    for cov in (0.15, 0.2, 0.4):
        show(f"coverage {cov}", cov_w=cov)
    for bs, bd in ((0.0, 0.0), (0.046, 0.12), (0.0, 0.069), (0.046, 0.0)):
        show(f"bonuses {bs}/{bd}", bonus_s=bs, bonus_d=bd)
    for w, cov in ((0.55, 0.2), (0.55, 0.4), (0.6, 0.4)):
        show(f"dense weight {w}, coverage {cov}", w=w, cov_w=cov)
    return 0


if __name__ == "__main__":
    sys.exit(main())
