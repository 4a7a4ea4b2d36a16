"""Figures from ``bench/vision.py --dump`` rows: per condition, calibration, board-finder ROC.

    python bench/vision_report.py DUMP.jsonl [--set SUBSTR] [--by ground,piece,light,tilt,hand,lens]

Per group: exact count per true-count bucket (0 / 1-3 / 4-7 / 8-15, with within one for
8-15), big-stone accuracy and images with all 12 squares exact. Then the reliability of the
counter's stated probabilities (the probability of the count it reports, binned, against
how often that count was right; and the mean log-probability of the true count), and how
well the board finder's quality score separates right boards (corners within 3% of the
diagonal) from wrong or missing ones (ROC AUC, and the threshold table). Last, where the
big-stone call errs: mandarins with and without their stone, by the small pieces beside.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.board import MANDARINS

BUCKETS = [("0", 0, 0), ("1-3", 1, 3), ("4-7", 4, 7), ("8-15", 8, 15)]
RIGHT_BOARD = 0.03  # corner error / diagonal under which a board counts as found right


def load(paths: list[Path], subset: str | None) -> list[dict[str, Any]]:
    rows = []
    for p in paths:
        for line in p.read_text("utf-8").splitlines():
            r = json.loads(line)
            if subset is None or subset in r["set"] or subset in r["image"]:
                rows.append(r)
    return rows


def figures(rows: list[dict[str, Any]]) -> str:
    """One line: n, found, buckets, big stone, all 12."""
    counted = [r for r in rows if "true" in r]
    t = np.array([r["true"] for r in counted]).reshape(-1, 12)
    p = np.array([r["pred"] for r in counted]).reshape(-1, 12)
    parts = [f"n={len(rows):3d} found {100 * len(counted) / max(len(rows), 1):5.1f}%"]
    for label, lo, hi in BUCKETS:
        m = (t >= lo) & (t <= hi)
        if not m.any():
            parts.append(f"{label}: -")
            continue
        e = np.abs(p[m] - t[m])
        s = f"{label}: {100 * np.mean(e == 0):5.1f}%"
        if lo == 8:
            s += f" ({100 * np.mean(e <= 1):4.1f}%)"
        parts.append(s + f" n={int(m.sum())}")
    if counted:
        b = np.array([r["big"] for r in counted])[:, [0, 6]]
        pb = np.array([r["pred_big"] for r in counted])[:, [0, 6]]
        parts.append(f"big {100 * np.mean(b == pb):5.1f}%")
        parts.append(f"all12 {100 * np.mean(np.all(t == p, axis=1)):5.1f}%")
    return "  ".join(parts)


def reliability(rows: list[dict[str, Any]]) -> list[str]:
    counted = [r for r in rows if "conf" in r]
    conf = np.array([c for r in counted for c in r["conf"]])
    ok = np.array([p == t for r in counted for p, t in zip(r["pred"], r["true"], strict=True)])
    pt = np.array([c for r in counted for c in r["p_true"]])
    if conf.size == 0:
        return []
    out = [f"-- reliability of the stated count probability ({conf.size} squares)"]
    edges = [0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.01]
    ece = 0.0
    for lo, hi in itertools.pairwise(edges):
        m = (conf >= lo) & (conf < hi)
        if not m.any():
            continue
        ece += m.sum() / conf.size * abs(conf[m].mean() - ok[m].mean())
        out.append(
            f"stated {lo:.2f}-{min(hi, 1.0):.2f}: n={int(m.sum()):5d} mean stated "
            f"{conf[m].mean():.3f}  right {ok[m].mean():.3f}"
        )
    out.append(
        f"expected calibration error {ece:.3f}; mean log p(true count) "
        f"{np.mean(np.log(np.maximum(pt, 1e-6))):.3f}; p(true) < 0.01 in "
        f"{100 * np.mean(pt < 0.01):.1f}% of squares"
    )
    return out


#: small pieces in a mandarin square, for the big-stone table
PILES = (("0-2", 0, 2), ("3-5", 3, 5), ("6+", 6, 10**6))


def big_stones(rows: list[dict[str, Any]]) -> list[str]:
    """How often the big-stone call is wrong, for mandarins with a stone and without,
    by the small pieces lying there: a pile where the stone was taken is what the call
    mistakes for a stone, so a single accuracy hides where it fails."""
    counted = [r for r in rows if "big_prob" in r]
    if not counted:
        return []
    n = len(MANDARINS) * len(counted)
    out = [f"-- big-stone call by the small pieces in the mandarin ({n} mandarins)"]
    for has, name in ((1, "stone"), (0, "no stone")):
        cells = []
        for label, lo, hi in PILES:
            wrong = [
                r["pred_big"][m] != r["big"][m]
                for r in counted
                for m in MANDARINS
                if (r["big"][m] > 0) == bool(has) and lo <= r["true"][m] <= hi
            ]
            cells.append(
                f"{label}: {100 * np.mean(wrong):5.1f}% wrong of {len(wrong)}"
                if wrong
                else f"{label}: -"
            )
        out.append(f"  {name:>8}: " + "  ".join(cells))
    return out


def auc(score: np.ndarray, pos: np.ndarray) -> float:
    """Probability that a right board scores above a wrong one (ties count half)."""
    a, b = score[pos], score[~pos]
    if a.size == 0 or b.size == 0:
        return float("nan")
    gt = (a[:, None] > b[None, :]).mean()
    eq = (a[:, None] == b[None, :]).mean()
    return float(gt + 0.5 * eq)


def finder(rows: list[dict[str, Any]]) -> list[str]:
    q = np.array([r.get("quality", 0.0) for r in rows], dtype=np.float64)
    frac = np.array([r.get("corner_frac", np.inf) for r in rows], dtype=np.float64)
    found = np.array([bool(r.get("found")) for r in rows])
    right = found & (frac < RIGHT_BOARD)
    out = [
        f"-- board finder ({len(rows)} images): found {100 * found.mean():.1f}%, "
        f"within 3% {100 * right.mean():.1f}%, within 5% {100 * np.mean(found & (frac < 0.05)):.1f}%",
        f"quality score: ROC AUC right vs wrong/missing {auc(q, right):.3f} "
        f"({int(right.sum())} right, {int((~right).sum())} wrong or missing)",
    ]
    share = np.array([r.get("inside_share", 0.0) for r in rows], dtype=np.float64)
    both = q * share
    out.append(
        f"density inside the regions: AUC {auc(share, right):.3f}; quality x inside share: "
        f"AUC {auc(both, right):.3f}"
    )
    f = found
    out.append(
        f"found boards only ({int(f.sum())}, {int((f & ~right).sum())} wrong): AUC quality "
        f"{auc(q[f], right[f]):.3f}, inside share {auc(share[f], right[f]):.3f}, "
        f"product {auc(both[f], right[f]):.3f}"
    )
    for th in (0.22, 0.3, 0.4, 0.5, 0.6, 0.7):
        keep = q >= th
        out.append(
            f"  accept quality >= {th:.2f}: keeps {100 * np.mean(keep[right]):5.1f}% of right "
            f"boards, {100 * np.mean(keep[~right]) if (~right).any() else 0:5.1f}% of wrong"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dumps", type=Path, nargs="+")
    ap.add_argument("--set", help="only rows whose set title or image contains this")
    ap.add_argument("--by", default="ground,piece,light,tilt,hand")
    ap.add_argument("--finder", action="store_true", help="board-finder figures (full runs)")
    args = ap.parse_args(argv)
    for p in args.dumps:
        if not p.is_file():
            print(f"no such dump: {p}", file=sys.stderr)
            return 2
    rows = load(args.dumps, args.set)
    if not rows:
        print("no rows match", file=sys.stderr)
        return 2
    print(f"== all: {figures(rows)}")
    for key in [k for k in args.by.split(",") if k]:
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            groups[str(r.get(key))].append(r)
        print(f"-- by {key}")
        for name, g in sorted(groups.items()):
            print(f"  {name:>20}: {figures(g)}")
    print("\n".join(reliability(rows)))
    print("\n".join(big_stones(rows)))
    if args.finder:
        print("\n".join(finder(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
