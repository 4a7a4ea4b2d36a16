"""Count accuracy by true-count bucket, printed the same way by every bench script."""

from __future__ import annotations

import numpy as np

#: The issue's buckets: (label, lowest, highest true count).
BUCKETS = [("0", 0, 0), ("1-3", 1, 3), ("4-7", 4, 7), ("8-15", 8, 15), ("16+", 16, 10**6)]


def bucket_lines(t: np.ndarray, p: np.ndarray, *, empty: bool = False) -> list[str]:
    """One line per bucket: exact, within one, MAE, bias (and relative MAE for piles).

    ``empty`` also prints a line for buckets with no squares.
    """
    lines = []
    for label, lo, hi in BUCKETS:
        m = (t >= lo) & (t <= hi)
        if not m.any():
            if empty:
                lines.append(f"count {label:>5}: no squares")
            continue
        err = np.abs(p[m] - t[m])
        line = (
            f"count {label:>5}: n={int(m.sum()):4d} exact {100 * np.mean(err == 0):5.1f}%"
            f"  within1 {100 * np.mean(err <= 1):5.1f}%  MAE {err.mean():.2f}"
            f"  bias {np.mean(p[m] - t[m]):+.2f}"
        )
        if lo >= 16:
            line += f"  relMAE {100 * np.mean(err / t[m]):.1f}%"
        lines.append(line)
    return lines
