"""The validation fold the calibration reads is the one the trainers keep out."""

import pytest

from training.counter.calibrate import in_fold, parse_fold


def test_fold_picks_index_modulo() -> None:
    names = [f"img_{i:05d}.json" for i in range(40)]
    picked = [n for n in names if in_fold(n, (19, 20))]
    assert picked == ["img_00019.json", "img_00039.json"]


def test_no_fold_keeps_everything_and_unnumbered_names_are_out_of_a_fold() -> None:
    assert in_fold("img_00003.json", None)
    assert not in_fold("dataset.json", (0, 20))


def test_a_fold_is_parsed_or_refused_by_name() -> None:
    assert parse_fold("19/20") == (19, 20) and parse_fold(None) is None
    with pytest.raises(ValueError, match="K/N"):
        parse_fold("3/2")
