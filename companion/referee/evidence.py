"""Evidence maths the referee applies to a reading before reconciling it.

Pure functions over per-square count distributions: pin the squares the
camera says did not change, read a big stone already captured as a pebble,
rescale by the counter's bias learnt on this scene, and add up a spread-out
pile for a tally with an honest interval.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from companion.referee.reconcile import Board, Evidence, SquareEvidence
from engine.ring import SIDE


def pin_unchanged(
    reading: Sequence[SquareEvidence],
    changed: Sequence[bool],
    board: Board,
    sure: float = 0.99,
    moved_same: float = 1.0,
    free: Collection[int] = (),
) -> list[SquareEvidence]:
    """Squares that did not change keep their known count, whatever the counter says.

    The counter's own distribution keeps the remaining 1 %, so a square that
    changed without it showing (a pebble hidden under a pile) can still win
    when every other square insists. Squares in ``free`` are left to the
    counter: vision's reference shows them as they were before moves the
    players entered since, so their flags say nothing about ``board``.
    """
    counts, big = board
    out: list[SquareEvidence] = []
    for sq, evidence in enumerate(reading):
        if sq in free:
            out.append(evidence)
            continue
        if changed[sq]:
            out.append(moved(evidence, counts[sq], moved_same))
            continue
        n = counts[sq]
        probs = [(1 - sure) * p for p in evidence.probs] + [0.0] * max(
            0, n + 1 - len(evidence.probs)
        )
        probs[n] += sure
        stone = big[sq // SIDE] if sq % SIDE == 0 else 0
        big_prob = (
            sure + (1 - sure) * evidence.big_prob if stone else (1 - sure) * evidence.big_prob
        )
        out.append(Evidence(tuple(probs), big_prob))
    return out


def stones_gone(reading: Sequence[SquareEvidence], board: Board) -> list[SquareEvidence]:
    """In a mandarin square whose big stone is gone, what vision took for one is a pebble.

    A big stone captured never comes back (nor is there one with the ``small`` mandarin
    setup), so every board the referee may be shown has none there. Vision cannot know
    that: a lone pebble, or two touching, can read as a stone, and it then counts the
    pebbles without it. Its big-stone belief is folded into the count instead, as one
    pebble more, and the stone's own belief set to nothing.
    """
    _, big = board
    out: list[SquareEvidence] = []
    for sq, evidence in enumerate(reading):
        b = evidence.big_prob
        if sq % SIDE or big[sq // SIDE] or b <= 0.0:
            out.append(evidence)
            continue
        probs = [*evidence.probs, 0.0]
        folded = [(1.0 - b) * p + b * (probs[n - 1] if n else 0.0) for n, p in enumerate(probs)]
        out.append(Evidence(tuple(folded), 0.0))
    return out


#: Pebbles of prior belief that the counter is unbiased (see Referee.count_gain).
COUNT_PRIOR = 20.0


def mean_count(evidence: SquareEvidence) -> float:
    return sum(n * p for n, p in enumerate(evidence.probs))


def rescaled(evidence: SquareEvidence, gain: float) -> SquareEvidence:
    """The distribution of ``gain`` times the count (a counter that reads 4 for 5 gets 1.25)."""
    probs = evidence.probs
    top = len(probs) - 1
    out = []
    for n in range(len(probs)):
        x = n / gain
        i = min(int(x), top)
        frac = x - i
        out.append(probs[i] * (1 - frac) + (probs[i + 1] * frac if i < top else 0.0))
    total = sum(out)
    if total <= 0:
        return evidence
    return Evidence(tuple(p / total for p in out), evidence.big_prob)


def shifted(evidence: SquareEvidence, offset: float) -> SquareEvidence:
    """The distribution of the count plus ``offset`` (a pile read 2 low gets +2)."""
    if abs(offset) < 1e-9:
        return evidence
    probs = evidence.probs
    size = len(probs) + max(0, math.ceil(offset))
    out = []
    for n in range(size):
        x = n - offset
        i = math.floor(x)
        frac = x - i
        a = probs[i] if 0 <= i < len(probs) else 0.0
        b = probs[i + 1] if 0 <= i + 1 < len(probs) else 0.0
        out.append(a * (1 - frac) + b * frac)
    total = sum(out)
    if total <= 0:
        return evidence
    return Evidence(tuple(p / total for p in out), evidence.big_prob)


#: How much the counter's distributions may be sharpened (> 1) or widened (< 1) here.
SHARPNESS = (0.5, 0.7, 1.0, 1.4, 2.0)
#: Nats a sharpness must gain over 1 on this scene's trusted boards before it is used.
SHARPNESS_EVIDENCE = 3.0


def sharpened(evidence: SquareEvidence, power: float) -> SquareEvidence:
    """The distribution raised to ``power`` and renormalised (temperature scaling)."""
    if power == 1.0:
        return evidence
    out = [p**power if p > 0 else 0.0 for p in evidence.probs]
    total = sum(out)
    if total <= 0:
        return evidence
    return Evidence(tuple(p / total for p in out), evidence.big_prob)


def sharpness_scores(
    reading: Sequence[SquareEvidence],
    counts: Sequence[int],
    hidden: Sequence[bool] | None = None,
    floor: float = 1e-4,
) -> tuple[float, ...]:
    """Log-likelihood of a trusted board's counts under each :data:`SHARPNESS` (per board).

    Summed over the boards of a game, the best one is what this scene's
    counter is worth: a proper score, so it widens an overconfident counter
    as readily as it sharpens a timid one. A wrongly trusted board scores low
    under sharp distributions, so it can only push towards caution.
    """
    out = []
    for power in SHARPNESS:
        total = 0.0
        for sq, e in enumerate(reading):
            if hidden is not None and hidden[sq]:
                continue
            probs = sharpened(e, power).probs
            n = counts[sq]
            total += math.log(max(probs[n] if n < len(probs) else 0.0, floor))
        out.append(total)
    return tuple(out)


def best_sharpness(scores: Sequence[float]) -> float:
    """The sharpness the summed scores support, 1 unless another wins by SHARPNESS_EVIDENCE."""
    plain = scores[SHARPNESS.index(1.0)]
    best = max(range(len(SHARPNESS)), key=lambda i: scores[i])
    return SHARPNESS[best] if scores[best] - plain >= SHARPNESS_EVIDENCE else 1.0


def pile_offsets(
    reading: Sequence[SquareEvidence],
    counts: Sequence[int],
    hidden: Sequence[bool] | None = None,
) -> tuple[float, ...]:
    """How far the counter read each square's pile from its known count (trusted board).

    The same pile is read the same way next time in the same light, so a
    square that only gains a pebble or two keeps this offset. Shrunk (a pile
    of n counts n / (n + 2)) and bounded to a third of the pile and at least
    one pebble, so one wrongly trusted board cannot throw a square far off.
    """
    out = []
    for sq, e in enumerate(reading):
        n = counts[sq]
        if hidden is not None and hidden[sq]:
            out.append(0.0)
            continue
        raw = (n - mean_count(e)) * n / (n + 2.0)
        bound = max(1.0, n / 3.0)
        out.append(min(bound, max(-bound, raw)))
    return tuple(out)


def moved(evidence: SquareEvidence, before: int, ratio: float) -> SquareEvidence:
    """A square that looks different probably no longer holds what it held."""
    probs = list(evidence.probs)
    if ratio >= 1.0 or not 0 <= before < len(probs):
        return evidence
    probs[before] *= ratio
    total = sum(probs)
    if total <= 0:
        return evidence
    return Evidence(tuple(p / total for p in probs), evidence.big_prob)


def tally(reading: Sequence[SquareEvidence], squares: Sequence[int]) -> tuple[int, int, int]:
    """Players spread a pile over chosen squares: (best total, low, high) at 90%.

    The distributions of the chosen squares are convolved, so the interval is
    honest about how sure the camera is, which is what a dispute needs.
    """
    total = [1.0]
    for sq in squares:
        probs = list(reading[sq].probs) or [1.0]
        out = [0.0] * (len(total) + len(probs) - 1)
        for i, a in enumerate(total):
            if a:
                for j, b in enumerate(probs):
                    out[i + j] += a * b
        total = out
    mass = sum(total) or 1.0
    dist = [p / mass for p in total]
    best = max(range(len(dist)), key=lambda n: dist[n])
    cumulative = 0.0
    low = high = best
    for n, p in enumerate(dist):
        cumulative += p
        if cumulative >= 0.05 and low == best and n < best:
            low = n
        if cumulative >= 0.95:
            high = max(n, best)
            break
    return best, min(low, best), high
