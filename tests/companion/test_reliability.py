"""Honest confidence: on readings worse than the counter claims, the referee asks, never errs.

A simulated counter that is off by more than its own distributions admit
(a bias on piles and noise wider than stated, as on a ground it never saw)
reads whole random games, with frames lost and hands over the board now and
then. Every move the referee accepts by itself must be right, and the
players (who answer with the true move) must not have to answer every move.
"""

from __future__ import annotations

import math
import random

from companion.referee import Referee, RefereeState
from companion.referee.reconcile import Evidence
from engine import Game, Position


def misread(count: int, rng: random.Random, big: int = 0) -> Evidence:
    """A reading that claims sigma 0.8 but is drawn 1.5x wider, and 12% low on piles."""
    claimed = 0.6 + 0.1 * count
    mean = count * (0.88 if count >= 6 else 1.0) + rng.gauss(0.0, 1.5 * claimed)
    weights = [math.exp(-0.5 * ((n - mean) / claimed) ** 2) + 1e-4 for n in range(41)]
    total = sum(weights)
    big_prob = 0.95 if big else 0.05
    return Evidence(tuple(w / total for w in weights), big_prob)


def frame_of(p: Position, rng: random.Random, hidden: set[int]) -> list[Evidence]:
    flat = Evidence(tuple([1.0 / 41] * 41), 0.5)
    return [
        flat if sq in hidden else misread(n, rng, p.big[sq // 6] if sq % 6 == 0 else 0)
        for sq, n in enumerate(p.board)
    ]


def test_accepted_moves_are_right_on_readings_worse_than_claimed() -> None:
    rng = random.Random(11)
    accepted = wrong = answered = total = 0
    for _ in range(6):
        truth = Game()
        ref = Referee()
        ref.setup_checked = True
        for _ply in range(14):
            if truth.is_over:
                break
            truth.play(rng.choice(truth.legal_moves()))
            total += 1
            p = truth.position
            roll = rng.random()
            before = ref.position.ply
            if roll < 0.1:
                report = ref.observe(None, fit=False, reason="lost", still=True)
            elif roll < 0.3:
                hidden = set(rng.sample(range(12), 3))
                report = ref.observe(
                    frame_of(p, rng, hidden),
                    still=True,
                    partial=True,
                    hidden=[sq in hidden for sq in range(12)],
                )
            else:
                report = ref.observe(frame_of(p, rng, set()), still=True)
            for a in report.accepted:
                accepted += 1
                wrong += a.move != truth.moves[before + report.accepted.index(a)]
            while (
                ref.state in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE)
                and ref.position.ply < p.ply
            ):
                answer = truth.moves[ref.position.ply]
                answered += 1
                if not ref.confirm(answer).behind:
                    break
                ref.observe(frame_of(p, rng, set()), still=True)
            if ref.game.moves != truth.moves[: len(ref.game.moves)]:
                break  # a wrong move: counted, and this game stops here
    assert wrong == 0, f"{wrong} wrong of {accepted} accepted"
    assert accepted >= total // 5, (accepted, answered, total)
