"""A board found in one still may be the wrong one: its counts say so."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.vision.conftest import scene
from vision.api import read_board
from vision.config import Finder, VisionConfig, config_from_dict
from vision.count import SquareCount, with_board_doubt
from vision.locate.doubt import board_doubt


@pytest.mark.parametrize("finder", list(Finder))
def test_doubt_falls_as_the_fit_improves(finder: Finder) -> None:
    qs = np.linspace(0.2, 1.0, 17)
    d = [board_doubt(float(q), finder) for q in qs]
    assert all(a > b for a, b in itertools.pairwise(d))
    assert 0.4 < d[0] < 0.9 and d[-1] < 0.01


def test_doubt_keeps_the_reading_and_shrinks_its_claims() -> None:
    sq = SquareCount(3, (0.01, 0.04, 0.05, 0.8, 0.1), 1, 0.9, 3.1)
    doubted = with_board_doubt(sq, 0.2)
    assert doubted.count == sq.count and doubted.big == sq.big
    assert int(np.argmax(doubted.probs)) == 3
    assert abs(sum(doubted.probs) - 1.0) < 1e-12
    assert doubted.probs[3] == 0.8 * 0.8 + 0.2 / 5  # a fifth of the doubt on each count
    assert 0.5 < doubted.big_prob == 0.8 * 0.9 + 0.1 < sq.big_prob
    assert with_board_doubt(sq, 0.0) is sq


def test_a_searched_board_carries_its_doubt_and_a_given_one_none() -> None:
    image, _ = scene(101, ground="asphalt", chalk="yellow", tilt_deg=35.0, yaw_deg=10.0)
    found = read_board(image, gate=False)
    assert found.outline is not None and found.found
    assert found.doubt == board_doubt(found.quality, Finder.LEARNED) > 0.0
    given = read_board(image, gate=False, outline=found.outline)
    assert given.doubt == 0.0
    for a, b in zip(found.squares, given.squares, strict=True):
        assert a.count == b.count
        expected = (1.0 - found.doubt) * np.array(b.probs) + found.doubt / len(b.probs)
        assert np.allclose(a.probs, expected)
        assert a.confidence < b.confidence


def test_corners_a_person_gave_are_not_doubted() -> None:
    image, truth = scene(101, ground="asphalt", chalk="yellow", tilt_deg=35.0, yaw_deg=10.0)
    cfg = config_from_dict({"locate": {"manual_corners": truth["corners"]}})
    assert isinstance(cfg, VisionConfig)
    assert read_board(image, cfg, gate=False).doubt == 0.0
