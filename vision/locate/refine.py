"""Stage 7, refine: greedy search on the four corners and the arc depth."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from vision.geometry import FloatArray
from vision.locate.quads import board_homographies
from vision.locate.scoring import scores

_MOVES = np.concatenate(
    [
        np.zeros((1, 8)),
        np.repeat(np.eye(8), 2, axis=0) * np.tile([-1.0, 1.0], 8)[:, None],
        np.zeros((2, 8)),
    ]
)


def refine_corners(
    sat: NDArray[np.float32],
    starts: list[tuple[FloatArray, float]],
    step0: float,
    rounds: int,
) -> list[tuple[FloatArray, float, float]]:
    """Greedy coordinate search on the 4 corners and the arc depth, for several
    starting fits in lockstep: each round scores every candidate's moves with
    one sampling call per arc depth (call overhead dominates these batches).
    Returns (corners, depth, score) per start."""
    cs = [np.asarray(c, np.float64).copy() for c, _ in starts]
    dep = [float(d) for _, d in starts]
    steps = [step0] * len(starts)
    bests = [-np.inf] * len(starts)
    active = list(range(len(starts)))
    for _ in range(rounds):
        if not active:
            break
        # per candidate: current corners, +-step on each of the 8 coordinates,
        # then the current corners at the two neighbouring arc depths
        cv = np.concatenate(
            [(cs[i].reshape(-1) + steps[i] * _MOVES).reshape(-1, 4, 2) for i in active]
        )
        depths = np.array(
            [
                d
                for i in active
                for d in [dep[i]] * 17
                + [float(np.clip(dep[i] + dd, 0.6, 1.3)) for dd in (-0.05, 0.05)]
            ]
        )
        hs = board_homographies(cv)
        sc = np.full(len(cv), -np.inf)
        finite = np.all(np.isfinite(hs), axis=(1, 2))
        for dval in np.unique(depths):
            rows = (depths == dval) & finite
            if rows.any():
                sc[rows] = scores(sat, hs[rows], 0.1, float(dval))
        still = []
        for n, i in enumerate(active):
            sci = sc[19 * n : 19 * n + 19]
            k = int(np.argmax(sci))
            if sci[k] > bests[i] + 1e-6 and k != 0:
                bests[i] = float(sci[k])
                cs[i] = cv[19 * n + k]
                dep[i] = float(depths[19 * n + k])
                still.append(i)
            else:
                bests[i] = max(bests[i], float(sci[0]))
                steps[i] *= 0.5
                if steps[i] >= 0.2:
                    still.append(i)
        active = still
    return list(zip(cs, dep, bests, strict=True))
