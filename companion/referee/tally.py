"""Tally maths: count a spread of pieces with an honest interval, then the final count.

A scoring dispute is settled by spreading one player's pieces over the ten
citizen squares in a single layer. Separate pebbles are counted best as
separate blobs (the counter's density peaks); where the peaks and the
counter's density mass disagree, pebbles probably touch or a shadow reads as
one, and that square is uncertain. :class:`SpreadModel` turns this per-square
evidence into a distribution over the true count (its table is fitted on
generated scenes by ``bench/tally.py --fit``); the distributions are
convolved, so the interval on the total says how sure the camera is, and the
least certain squares are named so the players can spread them more.

:func:`final_count` then scores both sides by rules.md R14 with the pieces
counted (store plus swept row), the big stones at the rule set's value and
the debts settled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from companion.referee.reconcile import SquareEvidence
from companion.referee.records import CountedBy
from engine.board import CITIZENS, NUM_SQUARES

#: Lower edges of the candidate-height bins: a candidate's height is the detector's peak.
SCORE_BINS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: A candidate at least this high is a piece for ``SpreadSquare.peaks``.
SURE = 0.5
#: The sure candidates of a clear scene stand this high on average: a scene whose
#: pieces rise less high is faint, and the detector misses more of it.
FAINT_REF = 0.9


#: Scene clarity classes: the median height of a scene's sure candidates below 0.7,
#: 0.7-0.8, 0.8-0.88, from 0.88 (none sure: the faintest class). A peak of 0.3 is
#: mostly a piece where every piece rises to 0.6, mostly a shadow where they reach 0.9.
CLARITY_EDGES = (0.7, 0.8, 0.88)


def _bin(score: float) -> int:
    return max(0, min(len(SCORE_BINS) - 1, int(score * 10.0) - 1))


def clarity(squares: Sequence[SpreadSquare]) -> int:
    """The scene's clarity class (0 faintest .. len(CLARITY_EDGES))."""
    sure = sorted(v for sq in squares for v in sq.candidates if v >= SURE)
    if not sure:
        return 0
    median = sure[len(sure) // 2]
    return sum(median >= edge for edge in CLARITY_EDGES)


#: ``SpreadModel.tables``' rows: real per clarity class, then real_quan, real_changed per
#: class, real_still and real_near (the count and its fit both number them so).
CLASSES = len(CLARITY_EDGES) + 1
ROW_QUAN = CLASSES
ROW_CHANGED = CLASSES + 1
ROW_STILL = 2 * CLASSES + 1
ROW_NEAR = 2 * CLASSES + 2


@dataclass(frozen=True, slots=True)
class SpreadSquare:
    """What the camera saw of one square of a spread.

    ``peaks``: candidates the piece detector is sure of; ``mass``: the pile
    counter's density sum, a second opinion; ``big_prob``: a big stone is
    there; ``scores``: every candidate's height (empty: a square read without
    the detector, whose ``peaks`` then stand as sure candidates). Against a
    photo of the empty board (``vision.spread.change_cover``): ``changed``, per
    candidate, whether the ground changed under it, and ``extra``, the pieces'
    worth of changed blobs holding no candidate (None: no such photo); ``alone``,
    the candidates of the spread's own detector where another read the two photos
    together (None: ``scores`` are that detector's); ``near``, per candidate, whether
    a higher one lies within ``vision.spread.NEAR`` of the scene's piece width (empty:
    not known).
    """

    peaks: int
    mass: float
    big_prob: float = 0.0
    scores: tuple[float, ...] = ()
    changed: tuple[bool, ...] = ()
    extra: float | None = None
    alone: tuple[float, ...] | None = None
    near: tuple[bool, ...] = ()

    @property
    def referenced(self) -> bool:
        """Read against the empty board: each candidate has its ``changed`` flag."""
        return self.extra is not None and len(self.changed) == len(self.scores)

    @property
    def candidates(self) -> tuple[float, ...]:
        return self.scores if self.scores else (1.0,) * self.peaks

    @classmethod
    def from_evidence(cls, evidence: SquareEvidence) -> SpreadSquare:
        """From a plain count distribution: its mode as peaks, its mean as mass."""
        probs = list(evidence.probs) or [1.0]
        mode = max(range(len(probs)), key=probs.__getitem__)
        total = sum(probs) or 1.0
        mean = sum(n * p for n, p in enumerate(probs)) / total
        return cls(mode, mean, float(evidence.big_prob))


#: ``bench/tally.py --fit`` (seeds 0..599 of ``vision.synth_spread``, never the measured
#: seeds 10000..): per clarity class, how often a candidate of each height bin was a
#: piece on a citizen square; the same on quan squares (one row: the guide asks for none
#: there, so a peak there is mostly a big stone's rim); missed pieces per clarity class.
FITTED_REAL: tuple[tuple[float, ...], ...] = (
    (0.0233, 0.3321, 0.696, 0.9019, 0.9702, 0.9952, 0.9917, 0.9574, 0.5018),
    (0.0002, 0.2111, 0.6431, 0.8765, 0.9819, 0.9895, 0.9995, 0.9985, 0.9801),
    (0.0164, 0.1069, 0.4161, 0.6092, 0.8218, 0.9552, 0.9934, 0.9994, 0.9955),
    (0.0031, 0.0352, 0.0735, 0.389, 0.5816, 0.8754, 0.9921, 0.9998, 0.9991),
)
FITTED_REAL_QUAN = (0.0001,) * 9
FITTED_MISS: tuple[tuple[float, float], ...] = (
    (0.24801, 0.07648),
    (0.03636, 0.02673),
    (0.00071, 0.00246),
    (0.00117, 0.00033),
)
#: scene-level spread of the total: a + b x the squares' variance + c x faintness x total
FITTED_SCENE = (1.0, 1.0, 0.0)
#: ``bench/tally.py --fit --empty`` (the same seeds, each with a photo of the empty board,
#: the candidates those of the pair detector, ``[vision.count] spread_pair_model``): per
#: clarity class, how often a candidate of each height bin on a change was a piece; one
#: row for candidates on ground the change mask calls unchanged (below 0.5 almost never
#: a piece; the few higher ones, a handful in 1,200 spreads, were pieces too faint for
#: the mask); misses as a + b x the change no candidate explains. Read at the scale the
#: scene's pieces ask for (``vision.spread.scale_for``).
FITTED_REAL_CHANGED: tuple[tuple[float, ...], ...] = (
    (0.1084, 0.168, 0.6789, 0.9526, 0.9526, 0.9999, 0.9999, 0.9999, 0.9999),
    (0.1196, 0.5784, 0.9045, 0.9606, 0.9886, 0.9973, 0.9973, 0.9999, 0.9999),
    (0.2096, 0.7572, 0.9963, 0.9963, 0.9963, 0.9963, 0.9976, 0.9991, 0.9999),
    (0.0577, 0.9991, 0.9991, 0.9991, 0.9991, 0.9991, 0.9991, 0.9997, 0.9997),
)
FITTED_REAL_STILL = (0.0011, 0.0011, 0.0011, 0.0011, 0.9999, 0.9999, 0.9999, 0.9999, 0.9999)
#: the same for candidates on a change with a higher one near (``SpreadSquare.near``):
#: one row for every clarity class (a few hundred such candidates in 600 spreads); the
#: rows above were fitted on the other candidates on a change
FITTED_REAL_NEAR = (0.0551, 0.3436, 0.4729, 0.7899, 0.944, 0.9763, 0.9969, 0.9999, 0.9999)
FITTED_MISS_EMPTY = (0.02727, 0.0135)
FITTED_SCENE_EMPTY = (0.0, 1.0, 0.35)
#: ``bench/tally.py --empty --fit`` (``fit_doubt``): logistic weights of a citizen square's
#: count read against the empty board being wrong, on ``doubt_features``.
FITTED_DOUBT = (-0.3607, 1.2708, 2.0644, 0.1812, 7.1887)
DOUBT_FEATURES = len(FITTED_DOUBT)


@dataclass(frozen=True, slots=True)
class SpreadModel:
    """How far the camera's evidence is from the truth, fitted on generated spreads.

    Each candidate is a piece with the probability ``real[clarity]`` of its
    height bin (``real_quan`` on a quan square, where a big stone's rim can
    raise a peak); a citizen square also hides Poisson(``miss[clarity][0] +
    miss[clarity][1] x expected pieces``) pieces the detector missed. Squares are independent given the evidence,
    but a scene is not (one ground fools the detector everywhere), so the
    total's distribution is widened by a scene-level spread of ``scene[0] +
    scene[1] x`` the squares' variance ``+ scene[2] x`` faintness x the
    expected total, in pieces: a scene whose candidates are doubtful, or whose
    pieces stand out faintly (their peaks low), is doubtful as a whole. ``disagree``:
    the pile counter's mass further than this from a square's best count
    makes that square unsure (on the fitting scenes the counter, made for
    piles, widened the interval twice as much as it helped it hold the truth,
    so it only names squares).
    ``outside``: pieces seen around the board but in no square (the board
    may be located wrong) widen the interval by ``outside_widen`` each.
    ``coverage``: the share of true totals the interval is meant to hold;
    ``unsure_below``: the probability of its best count under which a square
    is named unsure; read against the empty board, a citizen square is named
    unsure where ``doubt``, the fitted chance that its count is wrong
    (``unsure_squares``), exceeds ``light_at`` instead.
    ``blind_sure``: a scene with fewer sure candidates on the citizen squares
    than this, and more doubtful ones than sure ones, is one the detector
    cannot see (a ground or piece kind it never learnt, dark light): its
    interval runs up to ``most`` and every citizen square is unsure. On the
    bench's unseen kinds most intervals that missed the truth were such
    scenes, the detector sure of none of 38-67 pieces; no width fitted on
    the scenes it can see covers them.
    """

    real: tuple[tuple[float, ...], ...] = FITTED_REAL
    real_quan: tuple[float, ...] = FITTED_REAL_QUAN
    miss: tuple[tuple[float, float], ...] = FITTED_MISS
    scene: tuple[float, float, float] = FITTED_SCENE
    real_changed: tuple[tuple[float, ...], ...] = FITTED_REAL_CHANGED
    real_still: tuple[float, ...] = FITTED_REAL_STILL
    real_near: tuple[float, ...] = FITTED_REAL_NEAR
    miss_empty: tuple[float, float] = FITTED_MISS_EMPTY
    scene_empty: tuple[float, float, float] = FITTED_SCENE_EMPTY
    disagree: float = 2.5
    outside_widen: float = 2.0
    coverage: float = 0.99
    unsure_below: float = 0.9
    doubt: tuple[float, ...] = FITTED_DOUBT
    # (where laying out more stops paying: on the tally bench's seeds 10,000.., board
    # known, the totals exact after the respread rise from 260 of 300 at 0.03 to 267
    # at 0.02, and stay 267 at 0.015, 0.01 and 0.006, which lay out 6.3, 8.4 and all
    # 10 squares a scene against 4.1)
    light_at: float = 0.02
    blind_sure: int = 6
    most: int = 70

    def __post_init__(self) -> None:
        if {len(self.real), len(self.miss), len(self.real_changed)} != {CLASSES}:
            raise ValueError(
                f"spread model real, miss and real_changed need {CLASSES} clarity classes"
            )
        for row in self.tables:
            if len(row) != len(SCORE_BINS) or not all(0.0 <= p <= 1.0 for p in row):
                raise ValueError(f"spread model rows must be {len(SCORE_BINS)} probabilities")
        if len(self.doubt) != DOUBT_FEATURES:
            raise ValueError(f"spread model doubt needs {DOUBT_FEATURES} weights")
        if not 0.0 < self.light_at < 1.0:
            raise ValueError(f"light_at must be in (0, 1), got {self.light_at!r}")
        if not 0.5 < self.coverage < 1.0:
            raise ValueError(f"coverage must be in (0.5, 1), got {self.coverage!r}")

    @property
    def tables(self) -> tuple[tuple[float, ...], ...]:
        """Every row of height-bin probabilities: real per clarity class (rows 0..),
        then the rows ``ROW_QUAN``, ``ROW_CHANGED`` (per class), ``ROW_STILL``,
        ``ROW_NEAR`` name."""
        return (*self.real, self.real_quan, *self.real_changed, self.real_still, self.real_near)

    @staticmethod
    def rows_of(square: int, sq: SpreadSquare, scene: int) -> list[int]:
        """Which of :attr:`tables` weighs each of ``sq``'s candidates (one choice, shared
        by the count and its fit)."""
        if square % 6 == 0:
            return [ROW_QUAN] * len(sq.candidates)
        if not sq.referenced:
            return [scene] * len(sq.candidates)
        crowd = sq.near if len(sq.near) == len(sq.scores) else (False,) * len(sq.scores)
        return [
            (ROW_NEAR if close else ROW_CHANGED + scene) if on else ROW_STILL
            for on, close in zip(sq.changed, crowd, strict=True)
        ]

    def piece_probs(self, square: int, sq: SpreadSquare, scene: int) -> list[float]:
        tables = self.tables
        return [
            tables[row][_bin(v)]
            for v, row in zip(sq.candidates, self.rows_of(square, sq, scene), strict=True)
        ]

    def square(self, square: int, sq: SpreadSquare, scene: int) -> list[float]:
        """The distribution of the true count of ``square`` (index = count) in a scene
        of clarity class ``scene``."""
        probs = self.piece_probs(square, sq, scene)
        if square % 6 == 0:  # misses are fitted on the citizen squares the pieces go to
            return _poisson_binomial(probs)
        return _convolve(_poisson_binomial(probs), _poisson(self.square_miss(sq, probs, scene)))

    def miss_mean(self, expected: float, scene: int) -> float:
        a, b = self.miss[scene]
        return a + b * expected

    def square_miss(self, sq: SpreadSquare, probs: Sequence[float], scene: int) -> float:
        """Pieces the detector missed in a citizen square: against the empty board, in
        proportion to the change it leaves unexplained; else to the pieces it saw."""
        if sq.referenced:
            a, b = self.miss_empty
            return a + b * (sq.extra or 0.0)
        return self.miss_mean(sum(probs), scene)


def _poisson_binomial(probs: Sequence[float]) -> list[float]:
    out = [1.0]
    for p in probs:
        nxt = [0.0] * (len(out) + 1)
        for n, share in enumerate(out):
            nxt[n] += share * (1.0 - p)
            nxt[n + 1] += share * p
        out = nxt
    return out


def _poisson(mean: float, tail: float = 1e-7) -> list[float]:
    out = [math.exp(-mean)]
    while sum(out) < 1.0 - tail and len(out) < 60:
        out.append(out[-1] * mean / len(out))
    return out


@dataclass(frozen=True, slots=True)
class Tally:
    """One side's spread as counted: total small pieces with an interval, big stones."""

    counts: tuple[int, ...]  # best count per ring square
    bigs: tuple[int, ...]  # 1 where a big stone was seen
    total: int
    low: int
    high: int
    unsure: tuple[int, ...]  # least certain squares first
    hand: tuple[int, ...] = ()  # squares the players counted by hand (``count_spread(known=)``)

    @property
    def big(self) -> int:
        return sum(self.bigs)

    @property
    def exact(self) -> bool:
        return self.low == self.high


def _convolve(a: list[float], b: list[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _quantiles(dist: Sequence[float], tail: float, sigma: float = 0.0) -> tuple[int, int]:
    """The counts cutting ``tail`` off each end of ``dist`` (index = count) plus a normal
    noise of spread ``sigma`` rounded to whole pieces.

    The noisy distribution's CDF is a sum of normal CDFs, searched by bisection: a
    fit tries hundreds of spreads on a thousand scenes, and convolving with the
    normal (length 10 sigma) made that minutes of pure Python.
    """
    mass = sum(dist) or 1.0
    pts = [(n, p / mass) for n, p in enumerate(dist) if p / mass > 1e-9]
    sigma = max(sigma, 1e-9)

    def cdf(k: int) -> float:  # P(count + rounded noise <= k)
        return sum(p * 0.5 * math.erfc((n - k - 0.5) / (sigma * math.sqrt(2.0))) for n, p in pts)

    def first(level: float, strict: bool) -> int:
        lo = pts[0][0] - math.ceil(8.0 * sigma) - 1
        hi = pts[-1][0] + math.ceil(8.0 * sigma) + 1
        while lo < hi:  # the smallest k whose cdf passes level
            mid = (lo + hi) // 2
            c = cdf(mid)
            if c > level or (not strict and c >= level):
                hi = mid
            else:
                lo = mid + 1
        return lo

    return first(tail, strict=True), first(1.0 - tail, strict=False)


@dataclass(frozen=True, slots=True)
class _Reading:
    """A spread through the model, before the interval: what the fit reuses."""

    spread: tuple[SpreadSquare, ...]
    dists: tuple[tuple[float, ...], ...]  # per square, index = count
    best: tuple[int, ...]
    total_dist: tuple[float, ...]
    expected: float
    variance: float
    faintness: float  # how far the sure candidates' mean height is below FAINT_REF
    torn: tuple[int, ...]  # squares where the pile counter disagrees
    blind: bool  # the detector sees too little of this scene to bound it (``blind_sure``)
    referenced: bool  # read against a photo of the empty board (every citizen square)
    known: tuple[tuple[int, int], ...] = ()  # (square, count) counted by hand

    @classmethod
    def of(
        cls,
        squares: Sequence[SpreadSquare | SquareEvidence],
        model: SpreadModel,
        known: Mapping[int, int] | None = None,
    ) -> _Reading:
        if len(squares) != NUM_SQUARES:
            raise ValueError(f"a tally needs {NUM_SQUARES} squares, got {len(squares)}")
        hand = _checked_known(known or {})
        spread = tuple(
            s if isinstance(s, SpreadSquare) else SpreadSquare.from_evidence(s) for s in squares
        )
        scene = clarity(spread)
        dists = [
            [0.0] * hand[i] + [1.0] if i in hand else model.square(i, s, scene)
            for i, s in enumerate(spread)
        ]
        best = tuple(max(range(len(p)), key=p.__getitem__) for p in dists)
        total_dist = [1.0]
        for p in dists:
            total_dist = _convolve(total_dist, p)
        mass = sum(total_dist) or 1.0
        mean = sum(n * p for n, p in enumerate(total_dist)) / mass
        variance = sum((n - mean) ** 2 * p for n, p in enumerate(total_dist)) / mass
        torn = tuple(
            sq
            for sq in range(NUM_SQUARES)
            if sq not in hand and abs(spread[sq].mass - best[sq]) > model.disagree
        )
        sure = [v for sq in spread for v in sq.candidates if v >= SURE]
        faint = max(0.0, FAINT_REF - sum(sure) / len(sure)) if sure else 0.0
        seen = [v for i in CITIZENS for v in spread[i].candidates]
        n_sure = sum(v >= SURE for v in seen)
        referenced = all(spread[i].referenced for i in CITIZENS)
        # (against the empty board too: where the detector sees nothing, the change
        # alone does not bound the count)
        blind = n_sure < model.blind_sure and len(seen) - n_sure > n_sure
        blind = blind and not set(CITIZENS) <= hand.keys()  # (all counted by hand: none blind)
        return cls(
            spread,
            tuple(tuple(d) for d in dists),
            best,
            tuple(total_dist),
            mean,
            variance,
            faint,
            torn,
            blind,
            referenced,
            tuple(sorted(hand.items())),
        )

    def best_prob(self, sq: int) -> float:
        """The probability of square ``sq``'s best count."""
        dist = self.dists[sq]
        return dist[self.best[sq]] / (sum(dist) or 1.0)

    def interval(
        self,
        model: SpreadModel,
        outside: float,
        scene: tuple[float, float, float] | None = None,
    ) -> tuple[int, int]:
        """``[low, high]`` around the total: the squares' convolution widened by the
        scene-level spread (``scene``, default the model's) and by the pieces outside."""
        a, b, c = scene or (model.scene_empty if self.referenced else model.scene)
        seen = self.expected - sum(n for _, n in self.known)  # (hand counts are not faint)
        sigma = a + b * self.variance + c * self.faintness * seen
        low, high = _quantiles(self.total_dist, (1.0 - model.coverage) / 2, sigma)
        total = sum(self.best)
        if outside > 0:
            high += math.ceil(model.outside_widen * outside)
        if self.blind:
            high = max(high, model.most)
        return max(0, min(low, total)), max(high, total)


#: How far inside the interval read against the empty board the spread's own
#: detector's total must fall for the two readings to agree (``count_spread``).
AGREE = 1


#: The most small pieces one square can be counted by hand to hold (two digits on the board).
HAND_MOST = 99


def _checked_known(known: Mapping[int, int]) -> dict[int, int]:
    """``known`` as a dict, or a ValueError naming the first square or count that cannot be.
    A mandarin square's count is of its small pieces (its big stone is called apart)."""
    for sq, n in known.items():
        if not 0 <= sq < NUM_SQUARES:
            raise ValueError(f"a hand count must be of a square 0-11, got square {sq}")
        if not 0 <= n <= HAND_MOST:
            raise ValueError(f"a hand count must be 0-{HAND_MOST} pieces, got {n} in square {sq}")
    return dict(known)


def count_spread(
    squares: Sequence[SpreadSquare | SquareEvidence],
    model: SpreadModel | None = None,
    *,
    outside: float = 0.0,
    known: Mapping[int, int] | None = None,
) -> Tally:
    """The total of a spread, an interval holding the truth ``model.coverage`` of the
    time, and the squares to spread more.

    ``total`` is the sum of the per-square best counts (so the squares add
    up to it); the interval is cut from the convolution of the per-square
    distributions, widened by the scene-level spread, and always contains
    ``total``. ``outside``: pieces seen around the board but in no square; a
    board located wrong shows them, and the interval then widens to say so.
    ``known``: squares the players counted by hand (square -> small pieces), taken
    as certain: where the camera stays unsure after a respread, a person counting
    the few pieces of one or two lit squares makes the total exact far sooner than
    counting the whole heap again.
    """
    model = model or SpreadModel()
    read = _Reading.of(squares, model, known)
    low, high = read.interval(model, outside)
    if read.referenced:
        # Against the empty board the count is surer, but that model's interval is fitted
        # on generated photo pairs only, and real light drifts in more ways between two
        # photos. The spread's own detector, which never sees the empty board, checks it:
        # where its total is not at least one piece inside this interval the readings
        # disagree, and the interval also holds that reading's (twice as wide, it adds
        # only width where they agree). On the tally bench's fitting seeds, tables fitted
        # on one half and counted on the other, this interval alone held the truth in
        # 98.8 % of spreads, always joined 100 % (median width 11 pieces), joined where
        # the total is not inside 99.2 %, not one inside 99.3 % (median 6), two 99.5 %.
        # Whether the two readings agree is a question about the photos, asked of the
        # camera's counts alone: squares counted by hand narrow the interval to a few
        # pieces, which a reading one piece off would then fall outside of every time.
        alone = [_alone(s) for s in read.spread]
        photo_low, photo_high = (
            _Reading.of(read.spread, model).interval(model, outside) if known else (low, high)
        )
        if not photo_low + AGREE <= sum(_Reading.of(alone, model).best) <= photo_high - AGREE:
            plain_low, plain_high = _Reading.of(alone, model, known).interval(model, outside)
            low, high = min(low, plain_low), max(high, plain_high)
    return Tally(
        counts=read.best,
        bigs=tuple(int(s.big_prob >= 0.5) for s in read.spread),
        total=sum(read.best),
        low=low,
        high=high,
        unsure=unsure_squares(read, model),
        hand=tuple(sq for sq, _ in read.known),
    )


def unsure_squares(read: _Reading, model: SpreadModel) -> tuple[int, ...]:
    """The squares lit for the players, likeliest wrong first.

    A square's doubt is 1 less its best count's probability, lit above 1 less
    ``unsure_below``; capped below at half that probability where the pile counter
    disagrees or the scene is blind. A citizen square of a spread read against the
    empty board takes its doubt from ``model.doubt`` instead, a logistic fit
    (``fit_doubt``) of the count being wrong on the fitting scenes, lit above
    ``light_at``: the best count's own probability ranks the wrong squares worse than
    it could, and what the spread's own detector sees there tells more. On the tally
    bench's seeds 10,000.. (board known) the fit lit 131 of the 151 wrong squares
    with 696 lit at 0.03, where that probability under 0.9 lit 108 with 684; at 0.02
    it lights 144 with 1,129.
    """
    sure = [read.best_prob(sq) for sq in range(NUM_SQUARES)]
    if not read.referenced:
        for sq in read.torn:
            sure[sq] = min(sure[sq], model.unsure_below / 2)
        if read.blind:  # nothing here is known: every square the pieces go to is unsure
            for sq in CITIZENS:
                sure[sq] = min(sure[sq], model.unsure_below / 2)
    doubt = [1.0 - p for p in sure]
    lit_at = [1.0 - model.unsure_below] * NUM_SQUARES
    if read.referenced:
        for sq in CITIZENS:
            doubt[sq] = _logistic(model.doubt, doubt_features(read, sq, sure[sq]))
            lit_at[sq] = model.light_at
    for sq, _ in read.known:
        doubt[sq] = 0.0  # (counted by hand)
    lit = (sq for sq in range(NUM_SQUARES) if doubt[sq] > lit_at[sq])
    return tuple(sorted(lit, key=lambda sq: -doubt[sq]))


def doubt_features(read: _Reading, sq: int, sure: float) -> tuple[float, ...]:
    """The features of ``model.doubt``: bias, log(1 - the best count's probability
    ``sure``), the sure candidates the spread's own detector sees beyond the count and
    short of it, and how faint the scene's pieces stand."""
    best, plain = read.best[sq], _plain_sure(read.spread[sq])
    return (
        1.0,
        math.log(max(1.0 - sure, 1e-4)),
        float(max(plain - best, 0)),
        float(max(best - plain, 0)),
        read.faintness,
    )


def fit_doubt(
    samples: Sequence[tuple[Sequence[SpreadSquare], Sequence[int], float]], model: SpreadModel
) -> tuple[float, ...]:
    """``model.doubt`` fitted on the samples read against the empty board (as
    ``fit_spread_model`` takes them): logistic regression of a citizen square's best
    count being wrong, under ``model``'s tables."""
    xs: list[tuple[float, ...]] = []
    wrong: list[bool] = []
    for sqs, truth, _ in samples:
        read = _Reading.of(sqs, model)
        if not read.referenced:
            continue
        for sq in CITIZENS:
            xs.append(doubt_features(read, sq, read.best_prob(sq)))
            wrong.append(read.best[sq] != truth[sq])
    return _fit_logistic(xs, wrong)


def _plain_sure(sq: SpreadSquare) -> int:
    """The sure candidates the spread's own detector reads in ``sq`` (0 unread)."""
    return sum(v >= SURE for v in sq.alone or ())


def _alone(sq: SpreadSquare) -> SpreadSquare:
    """``sq`` as the spread's own detector read it, without the empty board."""
    if sq.alone is None:
        return replace(sq, changed=(), extra=None, near=())
    return replace(
        sq, peaks=_plain_sure(sq), scores=sq.alone, changed=(), extra=None, alone=None, near=()
    )


def fit_spread_model(
    samples: Sequence[tuple[Sequence[SpreadSquare], Sequence[int], float]],
    base: SpreadModel | None = None,
    rounds: int = 40,
) -> SpreadModel:
    """The model from scenes with known counts: (squares, true count per square, outside).

    Which candidate was a piece is never known, only how many pieces each
    square held, so the height-bin probabilities and the miss rates are
    fitted by expectation-maximisation on the per-square counts; the
    scene-level spread is then the smallest that puts ``base.coverage`` of
    the samples' totals inside their intervals (never less than the base's
    ``scene[0]``).
    """
    base = base or SpreadModel()
    model = base
    squares = []
    for sqs, truth, _ in samples:
        scene = clarity(sqs)
        squares += [
            (i, sq, int(n), scene) for i, (sq, n) in enumerate(zip(sqs, truth, strict=True))
        ]
    width = len(SCORE_BINS)
    for _ in range(rounds):
        hits = [[0.0, 0.0] for _ in range(len(model.tables) * width)]  # (real, all) per bin
        miss_x: list[list[tuple[float, float]]] = [[] for _ in range(CLASSES)]
        miss_e: list[tuple[float, float]] = []
        for i, sq, n, scene in squares:
            probs = model.piece_probs(i, sq, scene)
            lam = model.square_miss(sq, probs, scene) if i % 6 else 0.0
            post = _posterior(probs, lam, n)
            which = model.rows_of(i, sq, scene)
            for v, p, row in zip(sq.candidates, post, which, strict=True):
                cell = hits[row * width + _bin(v)]
                cell[0] += p
                cell[1] += 1.0
            if i % 6 and sq.referenced:
                miss_e.append((sq.extra or 0.0, max(n - sum(post), 0.0)))
            elif i % 6:
                miss_x[scene].append((sum(probs), max(n - sum(post), 0.0)))
        priors = [p for row in model.tables for p in row]
        real = [
            round(min(max((h[0] + 0.5 * prior) / (h[1] + 0.5), 1e-4), 1 - 1e-4), 4)
            for h, prior in zip(hits, priors, strict=True)
        ]
        # a higher peak is never less likely a piece: a bin of a handful of candidates
        # (sure peaks where nothing changed: three in 1,200 spreads) otherwise swings to
        # 0 or 1 on its own and says the opposite of its neighbours
        rows = [
            _monotone(
                real[k * width : (k + 1) * width], [h[1] for h in hits[k * width : (k + 1) * width]]
            )
            for k in range(len(model.tables))
        ]
        model = replace(
            model,
            real=tuple(rows[:CLASSES]),
            real_quan=rows[ROW_QUAN],
            real_changed=tuple(rows[ROW_CHANGED:ROW_STILL]),
            real_still=rows[ROW_STILL],
            real_near=rows[ROW_NEAR],
            miss=tuple(_fit_miss(pts, model.miss[k]) for k, pts in enumerate(miss_x)),
            miss_empty=_fit_miss(miss_e, model.miss_empty),
        )
    return _fit_scene(model, samples)


def _monotone(values: Sequence[float], weights: Sequence[float]) -> tuple[float, ...]:
    """The nondecreasing sequence nearest ``values`` in weighted least squares (pool
    adjacent violators); a bin of no weight takes the value of the bin below it (the
    first ones, of the first bin with any)."""
    blocks: list[list[float]] = []  # [value, weight, bins]
    for v, w in zip(values, weights, strict=True):
        if w <= 0:
            continue
        blocks.append([v, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    fitted = [b[0] for b in blocks for _ in range(int(b[2]))]
    if not fitted:
        return tuple(values)
    out, k = [], 0
    for w in weights:
        if w > 0:
            k += 1
        out.append(round(float(fitted[max(k - 1, 0)]), 4))
    return tuple(out)


def _posterior(probs: Sequence[float], lam: float, n: int) -> list[float]:
    """P(candidate i is a piece | the square held n pieces), for each i."""
    miss = _poisson(lam)

    def likelihood(pb: Sequence[float], need: int) -> float:
        return sum(
            pb[j] * (miss[need - j] if 0 <= need - j < len(miss) else 0.0)
            for j in range(min(len(pb), need + 1))
        )

    whole_pb = _poisson_binomial(probs)
    whole = likelihood(whole_pb, n)
    if whole <= 0.0:
        return list(probs)
    if n < 1:
        return [0.0] * len(probs)
    return [p * likelihood(_without(whole_pb, p), n - 1) / whole for p in probs]


def _without(pb: Sequence[float], p: float) -> list[float]:
    """The Poisson-binomial ``pb`` with one candidate of probability ``p`` taken out
    (a fit's posteriors need it for every candidate; recomputing from the rest cost
    a power of the candidates more). Divided out from the end that keeps it stable:
    upwards for p <= 0.5, downwards above."""
    k = len(pb) - 1
    rest = [0.0] * k
    if k == 0:
        return rest
    if p <= 0.5:
        rest[0] = pb[0] / (1.0 - p)
        for j in range(1, k):
            rest[j] = (pb[j] - p * rest[j - 1]) / (1.0 - p)
    else:
        rest[k - 1] = pb[k] / p
        for j in range(k - 1, 0, -1):
            rest[j - 1] = (pb[j] - (1.0 - p) * rest[j]) / p
    return [max(v, 0.0) for v in rest]


def _fit_miss(
    points: Sequence[tuple[float, float]], prior: tuple[float, float]
) -> tuple[float, float]:
    """Least squares of misses = a + b x seen, both at least 1e-4 (``prior`` if no points)."""
    if not points:
        return prior
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / var if var > 0 else 0.0
    b = max(b, 1e-4)
    a = max(my - b * mx, 1e-4)
    return round(float(a), 5), round(float(b), 5)


#: Share of the misses ``coverage`` allows that the scene fit leaves out as a margin:
#: fitted to hold 99.5 % of the fitting scenes, intervals held 98.7 % of new ones.
FIT_MARGIN = 0.75
#: The scene-level spreads ``_fit_scene`` tries (``SpreadModel.scene``'s a, b, c).
SCENE_A = (0.0, 0.5, 1.0, 1.5)
SCENE_B = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 3.0)
SCENE_C = (0.0, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5)


def _fit_scene(
    model: SpreadModel, samples: Sequence[tuple[Sequence[SpreadSquare], Sequence[int], float]]
) -> SpreadModel:
    """The scene-level spread with the narrowest mean interval that still holds the true
    total in at least ``model.coverage`` of the samples plus ``FIT_MARGIN`` of the rest
    (a margin for a fit on a few hundred scenes); the widest tried if none does."""
    reads = [(_Reading.of(sqs, model), sum(truth), outside) for sqs, truth, outside in samples]
    # (the samples read against the empty board fit its spread; the rest the plain one)
    empty = [item for item in reads if item[0].referenced]
    if empty:
        model = replace(model, scene_empty=_scene_spread(model, empty))
    plain = [item for item in reads if not item[0].referenced]
    return replace(model, scene=_scene_spread(model, plain)) if plain else model


def _scene_spread(
    model: SpreadModel, reads: Sequence[tuple[_Reading, int, float]]
) -> tuple[float, float, float]:
    """``_fit_scene``'s choice on one kind of reading."""
    target = model.coverage + (1.0 - model.coverage) * FIT_MARGIN
    best: tuple[float, tuple[float, float, float]] | None = None
    for a in SCENE_A:
        for b in SCENE_B:
            for c in SCENE_C:
                inside, width = 0, 0
                for read, truth, outside in reads:
                    low, high = read.interval(model, outside, (a, b, c))
                    inside += low <= truth <= high
                    width += high - low
                if inside >= target * len(reads) and (best is None or width < best[0]):
                    best = (width, (a, b, c))
    widest = (SCENE_A[-1], SCENE_B[-1], SCENE_C[-1])
    return best[1] if best else widest


# -- is the board where the still says it is? ------------------------------------------


#: ``bench/tally.py --fit``: logistic weights of P(board located right) on the fitting
#: scenes' stills: bias, chalk fit quality, share of pieces on lines, pieces beside the
#: board, share of the pile counter's density outside the squares, log(1 + pieces in it).
FITTED_TRUST = (-6.7759, 13.2701, -7.2459, -0.8152, 3.3224, 0.3647)
#: Below this a still's board is not trusted (``oanquan tally`` answers no board).
TRUST_MIN = 0.5


@dataclass(frozen=True, slots=True)
class BoardEvidence:
    """What says a board found in a still is the real one (``read_spread``'s reading)."""

    quality: float  # chalk template fit, 0..1
    on_lines: float  # share of the sure pieces lying on a line of the outline
    outside: float  # pieces seen beside the board
    inside_share: float  # share of the pile counter's density inside the squares
    pieces: int  # sure pieces in the squares: a tally has some, a wrong board often none

    def features(self) -> tuple[float, ...]:
        return (
            1.0,
            self.quality,
            self.on_lines,
            self.outside,
            1.0 - self.inside_share,
            math.log1p(self.pieces),
        )


def board_trust(evidence: BoardEvidence, weights: Sequence[float] = FITTED_TRUST) -> float:
    """P(the board was located right), by the fitted logistic model."""
    return _logistic(weights, evidence.features())


def _logistic(weights: Sequence[float], features: Sequence[float]) -> float:
    """The logistic model's probability (clipped where exp would overflow)."""
    z = sum(w * f for w, f in zip(weights, features, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def fit_board_trust(
    samples: Sequence[tuple[BoardEvidence, bool]], ridge: float = 1e-2, rounds: int = 30
) -> tuple[float, ...]:
    """Logistic regression of located-right on the evidence."""
    return _fit_logistic([e.features() for e, _ in samples], [r for _, r in samples], ridge, rounds)


def _fit_logistic(
    xs: Sequence[Sequence[float]], labels: Sequence[bool], ridge: float = 1e-2, rounds: int = 30
) -> tuple[float, ...]:
    """Logistic regression weights by Newton's method with a little ridge (a few hundred
    to a few thousand samples of a handful of features: pure Python is fast enough)."""
    if not xs:
        raise ValueError("a logistic fit needs samples, got none")
    ys = [1.0 if y else 0.0 for y in labels]
    k = len(xs[0])
    w = [0.0] * k
    for _ in range(rounds):
        grad = [-ridge * v for v in w]
        hess = [[ridge * (i == j) for j in range(k)] for i in range(k)]
        for x, y in zip(xs, ys, strict=True):
            p = _logistic(w, x)
            for i in range(k):
                grad[i] += (y - p) * x[i]
                for j in range(k):
                    hess[i][j] += p * (1.0 - p) * x[i] * x[j]
        step = _solve(hess, grad)
        w = [a + b for a, b in zip(w, step, strict=True)]
    return tuple(round(v, 4) for v in w)


# -- does a quan square hold its big stone? ---------------------------------------------


#: ``bench/tally.py --fit``: logistic weights of P(big stone) in a quan square on the
#: fitting scenes (board known): bias, the square root of the piece detector's big-stone
#: peak, the logit of the mandarin crops' big-stone network (``mandarin_big_model``; with
#: it turned off the older ``big_model`` feeds these weights, unfitted for it).
FITTED_BIG = (-3.3, 10.2919, 0.7226)
#: ``bench/tally.py --empty --fit``: the same where the pair detector read the spread with
#: its empty board, whose stone peaks stand higher and surer than the spread's own
#: detector's (an empty quan square stays near 0): on the tally bench's measuring seeds,
#: board known, quan squares called right 99.3 -> 99.8% (10,000..), 99.7 -> 99.8%
#: (30,000..) and 97.3 -> 98.2% (unseen kinds) against ``FITTED_BIG``.
FITTED_BIG_EMPTY = (-5.8574, 23.6369, 0.9337)


def big_features(peak: float, net: float) -> tuple[float, float, float]:
    """The big-stone call's features: the peak's square root spreads its low values (a
    stone in glare or low light may peak at only 0.05-0.2, where an empty quan square
    stays near 0), the network's logit makes it additive (clipped: 0 and 1 are never
    certain)."""
    n = min(max(net, 1e-4), 1.0 - 1e-4)
    return 1.0, math.sqrt(max(peak, 0.0)), math.log(n / (1.0 - n))


def big_call(paired: bool) -> tuple[float, ...]:
    """The fitted weights of the big-stone call: ``FITTED_BIG_EMPTY`` where the pair
    detector read the spread with its empty board (``paired``), else ``FITTED_BIG``."""
    return FITTED_BIG_EMPTY if paired else FITTED_BIG


def big_stone_probability(peak: float, net: float, weights: Sequence[float] = FITTED_BIG) -> float:
    """P(a quan square holds a big stone) from the detector's peak and the network."""
    return _logistic(weights, big_features(peak, net))


def fit_big_call(
    samples: Sequence[tuple[float, float, bool]], ridge: float = 1e-2
) -> tuple[float, ...]:
    """``FITTED_BIG`` from quan squares of known content: (peak, network, holds a stone)."""
    return _fit_logistic(
        [big_features(p, n) for p, n, _ in samples], [b for *_, b in samples], ridge
    )


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the systems here are 3 x 3 to 6 x 6)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[pivot] = m[pivot], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for j in range(c, n + 1):
                m[r][j] -= f * m[c][j]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        if abs(m[r][r]) < 1e-12:
            continue
        out[r] = (m[r][n] - sum(m[r][j] * out[j] for j in range(r + 1, n))) / m[r][r]
    return out


# -- the final count ----------------------------------------------------------------


class PositionLike(Protocol):
    """What the final count reads from a known game position (engine.Position)."""

    @property
    def board(self) -> Sequence[int]: ...
    @property
    def debt(self) -> Sequence[int]: ...
    @property
    def over(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class SideCount:
    """One side's counted pieces: small ones (with an interval) and big stones."""

    pieces: int
    bigs: int = 0
    low: int | None = None
    high: int | None = None
    how: CountedBy = CountedBy.CAMERA

    def __post_init__(self) -> None:
        if self.pieces < 0 or self.bigs < 0:
            raise ValueError("counts cannot be negative")

    @property
    def interval(self) -> tuple[int, int]:
        low = self.pieces if self.low is None else self.low
        high = self.pieces if self.high is None else self.high
        return low, high

    @classmethod
    def of(cls, tally: Tally) -> SideCount:
        how = CountedBy.CAMERA_HAND if tally.hand else CountedBy.CAMERA
        return cls(tally.total, tally.big, tally.low, tally.high, how)


@dataclass(frozen=True, slots=True)
class FinalCount:
    """R14 with counted heaps: per player (A, B) everything the screen and journal show.

    ``pieces`` include the swept row (the players sweep it into their heap
    before the tally); ``sweep`` is that row's share when the referee knows
    the position, else None. ``debt[p]`` is what p borrowed and pays back.
    ``expected``: the small pieces both heaps must hold together when the
    referee followed the game (stores plus swept rows), else None.
    """

    pieces: tuple[int, int]
    bigs: tuple[int, int]
    mandarin_value: int
    debt: tuple[int, int]
    sweep: tuple[int, int] | None
    scores: tuple[int, int]
    #: the lowest and highest score each side's counting interval allows
    ranges: tuple[tuple[int, int], tuple[int, int]]
    winner: int | None
    #: the winner is the same for every count inside the intervals
    sure: bool
    expected: int | None = None
    #: the heaps' small pieces together, lowest and highest the intervals allow
    together: tuple[int, int] = (0, 0)

    @property
    def off_by(self) -> int:
        """How many pieces the heaps lack (> 0) or have too many (< 0) against the game;
        0 when they add up within the counting intervals, or nothing is known."""
        if self.expected is None:
            return 0
        low, high = self.together
        if self.expected < low:
            return self.expected - low
        if self.expected > high:
            return self.expected - high
        return 0

    def quan_points(self, player: int) -> int:
        return self.bigs[player] * self.mandarin_value

    def debt_net(self, player: int) -> int:
        """Repaid to ``player`` minus what ``player`` repays."""
        return self.debt[1 - player] - self.debt[player]


def heaps_expected(position: Any, sweep: tuple[int, int] | None) -> int | None:
    """Small pieces both heaps hold together after the sweep: both stores plus both rows."""
    if sweep is None:
        return None
    return int(sum(position.store)) + sweep[0] + sweep[1]


def row_sweep(position: PositionLike) -> tuple[int, int]:
    """Pebbles on each player's own row: what R14 sweeps to them."""
    board = position.board
    return sum(board[1:6]), sum(board[7:12])


def final_count(
    sides: tuple[SideCount, SideCount],
    *,
    mandarin_value: int = 10,
    debt: Sequence[int] = (0, 0),
    sweep: tuple[int, int] | None = None,
    expected: int | None = None,
) -> FinalCount:
    """score(p) = pieces(p) + value x big stones(p) - debt(p) + debt(other) (rules.md R14)."""
    if len(debt) != 2 or any(d < 0 for d in debt):
        raise ValueError(f"debt must be two non-negative numbers, got {debt!r}")
    owed = (int(debt[0]), int(debt[1]))

    def score(p: int, pieces: int) -> int:
        return pieces + mandarin_value * sides[p].bigs - owed[p] + owed[1 - p]

    scores = (score(0, sides[0].pieces), score(1, sides[1].pieces))
    ranges = tuple((score(p, sides[p].interval[0]), score(p, sides[p].interval[1])) for p in (0, 1))
    (a_lo, a_hi), (b_lo, b_hi) = ranges
    if scores[0] == scores[1]:
        winner = None
        sure = a_lo == a_hi == b_lo == b_hi
    else:
        winner = 0 if scores[0] > scores[1] else 1
        sure = a_lo > b_hi if winner == 0 else b_lo > a_hi
    return FinalCount(
        pieces=(sides[0].pieces, sides[1].pieces),
        bigs=(sides[0].bigs, sides[1].bigs),
        mandarin_value=mandarin_value,
        debt=owed,
        sweep=sweep,
        scores=scores,
        ranges=(ranges[0], ranges[1]),
        winner=winner,
        sure=sure,
        expected=expected,
        together=(
            sides[0].interval[0] + sides[1].interval[0],
            sides[0].interval[1] + sides[1].interval[1],
        ),
    )


def tally_fields(final: FinalCount, sides: tuple[SideCount, SideCount]) -> dict[str, Any]:
    """The keyword arguments of ``RecordWriter.tally`` for a final count."""
    return {
        "pieces": final.pieces,
        "intervals": [sides[0].interval, sides[1].interval],
        "bigs": final.bigs,
        "how": [sides[0].how, sides[1].how],
        "mandarin_value": final.mandarin_value,
        "debt": final.debt,
        "sweep": final.sweep,
        "scores": final.scores,
        "winner": final.winner,
        "sure": final.sure,
        "expected": final.expected,
    }


__all__ = [
    "HAND_MOST",
    "BoardEvidence",
    "FinalCount",
    "SideCount",
    "SpreadModel",
    "SpreadSquare",
    "Tally",
    "big_call",
    "big_stone_probability",
    "board_trust",
    "count_spread",
    "final_count",
    "fit_big_call",
    "fit_board_trust",
    "fit_spread_model",
    "heaps_expected",
    "row_sweep",
    "tally_fields",
]
