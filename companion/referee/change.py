"""What the camera's changed areas say about each board a move may have left.

Between the last trusted board and a settled frame, vision measures how much
of each square changed, in pebble areas (the ``area`` of ``vision.change.square_changes``).
Every candidate move predicts it exactly in kind: a square the move did not
touch stays as it was (about 0), one that only gained pieces keeps its pile
and shows the new ones (about ``added`` pebbles, a little more where they
nudged the pile), and one picked up or captured loses its whole pile and
shows whatever was sown into it afterwards. Two moves whose boards differ by
a pebble one square off (which the counter cannot tell apart) pick up
different squares, so their predicted areas differ by whole piles.

How large a pebble looks here (its size, its shadow, its contrast with this
ground) is one unknown shared by every square of a frame: each candidate is
scored with that scale integrated out, under a prior learnt from every
trusted board (:class:`AreaScale`). So a scene whose pebbles show half the
nominal area is never read as "untouched" on the first move, and a candidate
must explain the squares' areas in proportion to one another.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

Board = tuple[tuple[int, ...], tuple[int, ...]]  # (square counts, big stones per mandarin)

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True, slots=True)
class ChangeModel:
    """How a square's changed area follows what happened to it (pebble areas).

    Fitted by ``bench/fit_change.py`` on generated sequences only (never on
    render-public): ``added`` per piece dropped (a new piece plus the part of
    the pile it nudged), a removed pile of n pieces shows n / (1 + n / pile)
    times ``removed`` (pieces of a pile hide one another), a big stone
    ``big``. The spread is ``sigma_base`` plus ``sigma_rel`` of the expected
    area, with a ``tail_weight`` share ``tail_scale`` times wider (a shadow
    that moved, a pebble that rolled across a line).
    """

    added: float = 1.3
    removed: float = 1.0
    pile: float = 30.0
    big: float = 4.2
    sigma_base: float = 0.15
    sigma_rel: float = 0.23
    tail_weight: float = 0.05
    tail_scale: float = 4.0
    #: the tail's share where pieces were dropped on a pile that stayed: a drop nudges
    #: the pile, so the area runs high far more often than on an empty square (one piece
    #: on a pile of five or more: 2.1 times its expected area at the 95th percentile,
    #: 1.5 into an empty square; ``bench/fit_change.py`` on seeds 7 and 8, the rest of
    #: the model held, likeliest at 0.15-0.2)
    pile_tail: float = 0.2
    #: share of changes the camera does not see at all (a pebble dropped into a pile's
    #: shadow, the same colour as the ground): the area is then that of an untouched square
    missed: float = 0.05
    #: share of squares whose area is anything up to ``wild_area`` (a moving shadow, a
    #: pebble that rolled across a line): no area is less likely than that
    wild: float = 0.02
    wild_area: float = 20.0
    #: nothing is likelier than this density (per pebble area)
    floor: float = 1e-4
    #: the share of a square's pebbles still in place (``kept``): all of them where the
    #: square was untouched, ``kept_dropped`` where pieces were dropped on the pile (they
    #: cover some), and where the pile was taken away, only what the camera missed of
    #: its going: 1 - ``sensed`` x scale (a scene whose pebbles register weakly misses more)
    kept_dropped: float = 0.99
    sensed: float = 0.62
    kept_sd: float = 0.08
    #: share of squares whose kept share is anything at all
    kept_wild: float = 0.1
    #: and more where pieces were dropped on a pile, this much for each piece dropped
    #: per piece it held: drops nudge a small pile away from where it lay (a lone pebble
    #: with one dropped on it keeps under half its place one time in nine, with three
    #: dropped half the time; ``bench/fit_change.py`` on seeds 7 and 8, the rest of the
    #: model held: 0.2-0.3 likeliest)
    kept_nudge: float = 0.2
    #: a square whose area is under this is taken as untouched where counts are pinned
    untouched_below: float = 0.25

    def units(self, cleared: bool, old: int, now: int, big_gone: bool) -> float:
        """Expected area, in units of this scene's pebble area, of one square's fate.

        ``old``: pieces on the trusted board; ``now``: on the candidate board;
        ``cleared``: the square was picked up or captured in between.
        """
        if not cleared:
            return self.added * max(0, now - old)
        gone = self.removed * old / (1.0 + old / self.pile)
        return gone + self.added * now + (self.big if big_gone else 0.0)

    def _seen(self, area: float, mean: float, onto_pile: bool = False) -> float:
        """Density of ``area`` around ``mean`` pebble areas: a core and a wider tail
        (``pile_tail`` of it where pieces were dropped on a pile)."""
        sd = math.sqrt(self.sigma_base**2 + (self.sigma_rel * mean) ** 2)
        tail = self.pile_tail if onto_pile else self.tail_weight
        total = 0.0
        for weight, width in ((1.0 - tail, sd), (tail, sd * self.tail_scale)):
            z = (area - mean) / width
            # areas are never negative: each Gaussian is cut at 0 and renormalised
            kept = 0.5 * (1.0 + math.erf(mean / (width * _SQRT2)))
            total += weight * math.exp(-0.5 * z * z - _LOG_SQRT_2PI) / (width * max(kept, 1e-6))
        return total

    def kept_loglik(
        self, kept: float, cleared: bool, dropped: int, scale: float, old: int = 0
    ) -> float:
        """log p(kept share | the square's fate), at ``scale``; ``old``: the pieces the
        pile held (those dropped on a small pile nudge it most)."""
        wild = self.kept_wild
        if cleared:
            mean = 1.0 - min(0.9, self.sensed * scale)
        else:
            mean = self.kept_dropped if dropped > 0 else 1.0
            if dropped > 0 and old > 0:
                wild = min(0.9, wild + self.kept_nudge * dropped / old)
        sd = self.kept_sd
        inside = 0.5 * (math.erf((1.0 - mean) / (sd * _SQRT2)) - math.erf(-mean / (sd * _SQRT2)))
        return self._kept_mixture(kept, mean, sd, inside, wild)

    def _kept_mixture(
        self, kept: float, mean: float, sd: float, inside: float, wild: float
    ) -> float:
        """log of a kept share's density: a Gaussian (``inside`` of it within 0-1) or,
        for ``wild`` of squares, anything."""
        z = (kept - mean) / sd
        seen = math.exp(-0.5 * z * z - _LOG_SQRT_2PI) / (sd * max(inside, 1e-6))
        return math.log((1.0 - wild) * seen + wild)

    def loglik_again(self, area: float, mean: float, later: float | None = None) -> float:
        """log p(area | the same pile's area in a later photo, less what was dropped on
        it since: ``mean``). Either photo may be wild; and where pieces were dropped
        since (``later``: the later photo's own area), they may have fallen where that
        photo shows nothing of them (onto a pebble, into its shadow), ``missed`` of the
        time as anywhere: this photo then looks like the later one."""
        seen = self._seen(area, mean)
        if later is not None and later != mean:
            seen = (1.0 - self.missed) * seen + self.missed * self._seen(area, later)
        total = (1.0 - self.wild) * seen + self.wild / self.wild_area
        return math.log(max(total, self.floor))

    def kept_again(self, kept: float, later: float) -> float:
        """log p(kept share | the same pile's in a later photo): about the same, with
        both photos' spread."""
        return self._kept_mixture(kept, min(1.0, later), 2.0 * self.kept_sd, 1.0, self.kept_wild)

    def loglik(self, area: float, expected: float, scale: float, onto_pile: bool = False) -> float:
        """log p(area | expected units), at ``scale`` pebble areas per unit.

        A mixture: the change seen as predicted, a change not seen at all
        (``missed``), or any area at all (``wild``); so one square cannot
        outweigh the rest of the board by more than a few nats.
        """
        return self.logliks(area, expected, (scale,), onto_pile)[0]

    def logliks(
        self, area: float, expected: float, scales: Sequence[float], onto_pile: bool = False
    ) -> list[float]:
        """:meth:`loglik` at each of ``scales``: the untouched square's density is
        the same at every scale, so it is worked out once (reconcile's inner loop).
        ``onto_pile``: the pieces expected were dropped on a pile that stayed."""
        quiet = self._seen(area, 0.0)
        wild = self.wild / self.wild_area
        out = []
        for scale in scales:
            mean = scale * expected
            seen = self._seen(area, mean, onto_pile) if mean > 0 else quiet
            missed = self.missed if mean > 0 else 0.0
            total = (1.0 - missed - self.wild) * seen + missed * quiet + wild
            out.append(math.log(max(total, self.floor)))
        return out


def dropped_on_pile(cleared: bool, old: int, now: int) -> bool:
    """Whether a square's fate put pieces on a pile that stayed (``ChangeModel``'s
    ``pile_tail``): not picked up, held ``old`` pieces, holds more ``now``."""
    return not cleared and 0 < old < now


@dataclass(frozen=True, slots=True)
class AreaScale:
    """This scene's pebble area (in nominal pebble areas), learnt from trusted boards.

    A least-squares fit of observed areas to the predicted units through the
    origin, starting from a prior of ``prior_weight`` units² at 1; each board
    adds only squares that fit it within ``guard`` spreads, so a wrongly
    trusted board (or a shadow) cannot drag the scale. :attr:`spread` is the
    uncertainty of its logarithm: wide at first (pebbles from a quarter to
    four times the nominal area), never below ``least_spread`` (the light
    changes a little between frames).
    """

    sum_au: float = 0.0
    sum_uu: float = 0.0
    #: squared areas of squares the trusted boards left untouched, and how many
    sum_quiet: float = 0.0
    quiet: int = 0
    prior_weight: float = 4.0
    prior_spread: float = 0.7
    least_spread: float = 0.1
    guard: float = 3.0
    #: untouched squares the model's ``sigma_base`` is worth as a prior
    noise_weight: float = 12.0
    #: the learnt spread never goes below this (pebble areas): where the ground is quiet
    #: and the pieces far smaller than the nominal pebble, their changes stand out of it
    least_noise: float = 0.05

    @property
    def scale(self) -> float:
        return (self.sum_au + self.prior_weight) / (self.sum_uu + self.prior_weight)

    @property
    def spread(self) -> float:
        """Standard deviation of log(:attr:`scale`)."""
        narrowed = self.prior_spread * math.sqrt(
            self.prior_weight / (self.prior_weight + self.sum_uu)
        )
        return max(self.least_spread, narrowed)

    def noise(self, model: ChangeModel) -> float:
        """The spread of an untouched square's area here (``sigma_base`` at first).

        This scene's light drift, shadows and sensor noise, learnt from the
        squares trusted boards left untouched. It may fall below the model's
        spread (to ``least_noise``): on a quiet ground, pieces a twelfth of a
        square wide change a tenth of a nominal pebble's area, a signal the
        model's spread would drown.
        """
        w = self.noise_weight
        learnt = math.sqrt((w * model.sigma_base**2 + self.sum_quiet) / (w + self.quiet))
        return max(self.least_noise, learnt)

    def learn(self, pairs: Sequence[tuple[float, float]], model: ChangeModel) -> AreaScale:
        """The scale after one trusted board: ``pairs`` of (area, predicted units)."""
        s = self.scale
        au, uu = self.sum_au, self.sum_uu
        quiet, n = self.sum_quiet, self.quiet
        limit = self.guard * 1.5 * self.noise(model)
        for area, units in pairs:
            if units <= 0:
                if area <= limit:  # an untouched square far off is a shadow, not noise
                    quiet += area * area
                    n += 1
                continue
            mean = s * units
            sd = math.sqrt(model.sigma_base**2 + (model.sigma_rel**2 + self.spread**2) * mean**2)
            if abs(area - mean) > self.guard * sd:
                continue
            au += area * units
            uu += units * units
        return replace(self, sum_au=au, sum_uu=uu, sum_quiet=quiet, quiet=n)


#: where the scale is tried (standard deviations of its logarithm) and each point's weight
_GRID = (-2.25, -1.5, -0.75, 0.0, 0.75, 1.5, 2.25)
SCALE_LOG_WEIGHTS = tuple(
    -0.5 * z * z - math.log(sum(math.exp(-0.5 * y * y) for y in _GRID)) for z in _GRID
)


def log_sum_exp(values: Sequence[float]) -> float:
    """log(sum(exp(v))) without overflow: the scale summed out of per-scale totals."""
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def totals(rows: Sequence[tuple[float, ...] | None]) -> tuple[float, ...]:
    """Per scale, the prior's weight plus every square's term (``rows`` from
    :meth:`ChangeScorer.rows`, added in square order), before the scale is summed out."""
    present = [row for row in rows if row is not None]
    if not present:
        return tuple(SCALE_LOG_WEIGHTS)
    return tuple(
        sum(col, w) for w, col in zip(SCALE_LOG_WEIGHTS, zip(*present, strict=True), strict=True)
    )


@dataclass(frozen=True, slots=True)
class ChangeEvidence:
    """The areas of one frame (None: no evidence for that square) and how to weigh them:
    the scale's prior is log-normal around ``scale`` with log-spread ``spread``.

    ``reference``: the board vision compares with, where it is not the trusted
    board the candidates start from (squares a hand hid when that board was
    trusted keep an older reference); ``gone``: squares picked up since it.
    """

    areas: tuple[float | None, ...]
    model: ChangeModel = ChangeModel()
    scale: float = 1.0
    spread: float = 0.7
    reference: Board | None = None
    gone: frozenset[int] = frozenset()
    #: the spread of an untouched square's area learnt here (None: the model's)
    noise: float | None = None
    #: per square, the share of the reference's pebbles still in place (None: unknown)
    kept: tuple[float | None, ...] | None = None


def square_units(
    before: Board, after: Board, cleared: frozenset[int], model: ChangeModel
) -> list[float]:
    """Expected area units of every square going from ``before`` to ``after``."""
    counts0, big0 = before
    counts1, big1 = after
    n = len(counts0)
    side = n // len(big0) if big0 else n
    out = []
    for sq in range(n):
        gone = sq % side == 0 and big0[sq // side] > big1[sq // side]
        was_cleared = sq in cleared or counts1[sq] < counts0[sq] or gone
        out.append(model.units(was_cleared, counts0[sq], counts1[sq], gone))
    return out


class ChangeScorer:
    """Log-likelihood of the areas for candidate boards, the scale integrated out.

    Each square's log-likelihood at every scale of the grid is cached per
    fate, so a candidate costs a few additions per square.
    """

    def __init__(
        self, evidence: ChangeEvidence, before: Board, gone: frozenset[int] = frozenset()
    ) -> None:
        """``before``: the board vision's reference shows; ``gone``: squares picked up
        since then by moves already known (the reference under a hand is older)."""
        self.evidence = evidence
        self.before = before
        self.gone = gone
        self.scales = tuple(evidence.scale * math.exp(evidence.spread * z) for z in _GRID)
        self.model = evidence.model
        if evidence.noise is not None:
            self.model = replace(self.model, sigma_base=evidence.noise)
        self._cache: dict[tuple[int, bool, int, bool], tuple[float, ...]] = {}
        # ``stayed``'s per-square terms: the best kept and taken fates do not depend on
        # the candidate, and a candidate's own count recurs across hundreds of them
        self._stay: dict[int, tuple[float, float]] = {}
        self._kept_fate: dict[tuple[int, int], float] = {}

    def quiet(self) -> frozenset[int]:
        """Squares whose area says "untouched" clearly (20 to 1 against one pebble added).

        Their counts may be held at the reference's where only the counts are
        weighed (reconcile's fit check), as a fixed camera allows.
        """
        ev = self.evidence
        out = set()
        for sq, area in enumerate(ev.areas):
            if area is None or sq in self.gone or area >= self.model.untouched_below:
                continue
            still = self.model.loglik(area, 0.0, ev.scale)
            one = self.model.loglik(area, self.model.added, ev.scale)
            if still - one > math.log(20.0):
                out.add(sq)
        return frozenset(out)

    def fate(
        self,
        area: float,
        share: float | None,
        cleared: bool,
        old: int,
        now: int,
        big_gone: bool,
        scale: float,
    ) -> float:
        """Log-likelihood of one square's area (and kept share) under one fate."""
        return self.fates(area, share, cleared, old, now, big_gone, (scale,))[0]

    def fates(
        self,
        area: float,
        share: float | None,
        cleared: bool,
        old: int,
        now: int,
        big_gone: bool,
        scales: Sequence[float],
    ) -> list[float]:
        """:meth:`fate` at each of ``scales``, sharing what does not depend on the scale."""
        model = self.model
        onto = dropped_on_pile(cleared, old, now)
        row = model.logliks(area, model.units(cleared, old, now, big_gone), scales, onto)
        if share is not None:
            dropped = max(0, now - old)
            if cleared:
                row = [
                    v + model.kept_loglik(share, True, dropped, s)
                    for v, s in zip(row, scales, strict=True)
                ]
            else:  # a pile left in place keeps its share whatever the scale
                kept = model.kept_loglik(share, False, dropped, 1.0, old)
                row = [v + kept for v in row]
        return row

    def stayed(self, board: Board, cleared: frozenset[int]) -> frozenset[int]:
        """Squares ``board`` leaves in place (with pieces dropped on them, or not) where the
        change evidence says so too: a kept fate explains them 20 to 1 better than any
        pile taken up, and this board's count there is about as likely as the best kept one.
        """
        ev = self.evidence
        counts0, big0 = self.before
        counts1, big1 = board
        side = len(counts0) // len(big0) if big0 else len(counts0)
        s = ev.scale
        out = set()
        for sq, area in enumerate(ev.areas):
            gone = sq % side == 0 and big0[sq // side] > big1[sq // side]
            if area is None or sq in cleared or sq in self.gone or gone:
                continue
            if counts1[sq] < counts0[sq]:
                continue
            share = ev.kept[sq] if ev.kept is not None else None
            old = counts0[sq]
            best = self._stay.get(sq)
            if best is None:
                kept = max(self.fate(area, share, False, old, old + k, False, s) for k in range(4))
                taken = max(self.fate(area, share, True, old, m, False, s) for m in range(4))
                best = self._stay[sq] = (kept, taken)
            mine = self._kept_fate.get((sq, counts1[sq]))
            if mine is None:
                mine = self.fate(area, share, False, old, counts1[sq], False, s)
                self._kept_fate[sq, counts1[sq]] = mine
            kept, taken = best
            if kept - taken >= math.log(20.0) and mine >= kept - math.log(20.0):
                out.add(sq)
        return frozenset(out)

    def given_later(
        self, sq: int, later: float, later_kept: float | None, added: int
    ) -> tuple[float, ...]:
        """Square ``sq``'s row (per scale) given a later photo of the same pile with
        ``added`` pieces dropped on it since: this photo's area is the later one's less
        what those pieces show, its kept share about the later one's."""
        area = self.evidence.areas[sq] or 0.0
        share = self.evidence.kept[sq] if self.evidence.kept is not None else None
        model = self.model
        kept = (
            model.kept_again(share, later_kept)
            if share is not None and later_kept is not None
            else 0.0
        )
        return tuple(
            model.loglik_again(area, max(0.0, later - s * model.added * added), later) + kept
            for s in self.scales
        )

    def __call__(
        self, board: Board, cleared: frozenset[int], skip: frozenset[int] = frozenset()
    ) -> float:
        """The areas' log-likelihood under ``board``, the squares in ``skip`` left out."""
        return log_sum_exp(totals(self.rows(board, cleared, skip)))

    def rows(
        self, board: Board, cleared: frozenset[int], skip: frozenset[int] = frozenset()
    ) -> tuple[tuple[float, ...] | None, ...]:
        """Per square, its log-likelihood at each scale under ``board`` (None where it
        has no area or is in ``skip``)."""
        ev = self.evidence
        counts0, big0 = self.before
        counts1, big1 = board
        side = len(counts0) // len(big0) if big0 else len(counts0)
        cache, before_gone = self._cache, self.gone
        out: list[tuple[float, ...] | None] = []
        for sq, area in enumerate(ev.areas):
            if area is None or sq in skip:
                out.append(None)
                continue
            gone = sq % side == 0 and big0[sq // side] > big1[sq // side]
            now = counts1[sq]
            was_cleared = sq in cleared or sq in before_gone or now < counts0[sq] or gone
            row = cache.get((sq, was_cleared, now, gone))
            out.append(row or self.row(sq, was_cleared, now, gone))
        return tuple(out)

    def rows_at(
        self,
        counts: NDArray[np.int64],
        big: NDArray[np.int64],
        cleared: NDArray[np.bool_],
        skip: NDArray[np.bool_],
    ) -> NDArray[np.float64]:
        """:meth:`rows` of many boards at once (one per row of ``counts`` and ``big``,
        ``cleared``: the squares picked up since the trusted board), zeros where a square
        has no area or is in ``skip``: one array (boards, squares, scales). The fates are
        those of :meth:`rows`, each distinct one worked out once."""
        before, big_before, side, emptied, measured = self._arrays
        stone = np.zeros_like(skip)
        stone[:, ::side] = big_before > big
        taken = cleared | emptied | (counts < before) | stone
        rows = np.zeros((*skip.shape, len(self.scales)))
        at = np.nonzero(~skip & measured)
        if at[0].size:
            # each distinct fate as one number: the square in the low 6 bits, then whether
            # its big stone was taken, whether it was taken up, and its count
            fates = ((counts[at] * 2 + taken[at]) * 2 + stone[at]) * 64 + at[1]
            kinds, which = np.unique(fates, return_inverse=True)
            table = [
                self.row(int(f % 64), bool(f // 128 % 2), int(f // 256), bool(f // 64 % 2))
                for f in kinds
            ]
            rows[at] = np.array(table)[which]
        return rows

    @functools.cached_property
    def _arrays(
        self,
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], int, NDArray[np.bool_], NDArray[np.bool_]]:
        """What :meth:`rows_at` needs of the reference, worked out once per scorer (it
        is called for every point of every run a frame weighs): the counts and big
        stones before, squares per side, the squares ``gone`` and those with an area."""
        before, big_before = self.before
        side = len(before) // len(big_before) if big_before else len(before)
        emptied = np.zeros(len(before), np.bool_)
        emptied[list(self.gone)] = True
        measured = np.array([a is not None for a in self.evidence.areas], np.bool_)
        return np.array(before), np.array(big_before), side, emptied, measured

    def row(self, sq: int, cleared: bool, now: int, big_gone: bool) -> tuple[float, ...]:
        """Square ``sq``'s log-likelihood at each scale where it now holds ``now`` pieces
        (``cleared``: taken up since the reference, or fewer than it held; ``big_gone``:
        its big stone taken), cached; the square must have an area."""
        key = (sq, cleared, now, big_gone)
        row = self._cache.get(key)
        if row is None:
            ev = self.evidence
            area = ev.areas[sq]
            assert area is not None  # (callers skip squares without an area)
            share = ev.kept[sq] if ev.kept is not None else None
            old = self.before[0][sq]
            row = tuple(self.fates(area, share, cleared, old, now, big_gone, self.scales))
            self._cache[key] = row
        return row
