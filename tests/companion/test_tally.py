"""Tally maths, its journal record and ``oanquan tally`` on the bundled stills."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from companion.commands.tally import bundled_empty, bundled_frames
from companion.commands.tally import main as tally_main
from companion.referee.reconcile import Evidence
from companion.referee.records import CountedBy, Kind, RecordWriter, tally_data
from companion.referee.tally import (
    AGREE,
    FITTED_BIG,
    FITTED_BIG_EMPTY,
    BoardEvidence,
    SideCount,
    SpreadModel,
    SpreadSquare,
    _alone,
    _bin,
    _Reading,
    big_stone_probability,
    board_trust,
    count_spread,
    final_count,
    fit_big_call,
    fit_board_trust,
    fit_doubt,
    fit_spread_model,
    row_sweep,
    tally_fields,
)
from engine import Position

FRAMES = Path(__file__).resolve().parents[2] / "companion" / "commands" / "tally_frames"


def spread(
    *counts: int,
    disagree: dict[int, float] | None = None,
    faint: dict[int, tuple[float, ...]] | None = None,
) -> list[SpreadSquare]:
    """12 squares of ``counts`` sure candidates; ``disagree`` adds pile-counter mass to
    some, ``faint`` adds low candidates (the detector's doubtful peaks) to some."""
    extra, low = disagree or {}, faint or {}
    return [
        SpreadSquare(n, n + extra.get(sq, 0.0), 0.0, (0.97,) * n + low.get(sq, ()))
        for sq, n in enumerate(counts)
    ]


A_SPREAD = (0, 4, 6, 5, 4, 3, 0, 4, 3, 5, 4, 3)  # 41
#: a model like a fitted one, fixed here so the tests do not move with each refit
HEIGHTS = (0.02, 0.05, 0.1, 0.2, 0.45, 0.7, 0.9, 0.98, 0.995)
MODEL = SpreadModel(
    real=(HEIGHTS,) * 4, real_quan=HEIGHTS, miss=((0.005, 0.002),) * 4, scene=(0.3, 0.0, 0.0)
)


def test_agreeing_sure_candidates_give_the_sum_and_an_interval_around_it() -> None:
    t = count_spread(spread(*A_SPREAD), MODEL)
    assert t.total == 41 == sum(t.counts)
    assert t.low <= 41 <= t.high and t.high - t.low <= 6
    assert t.counts == A_SPREAD
    assert t.unsure == ()


def test_doubtful_candidates_make_their_square_unsure_and_widen_the_interval() -> None:
    calm = count_spread(spread(*A_SPREAD), MODEL)
    doubt = count_spread(spread(*A_SPREAD, faint={4: (0.55,), 9: (0.55, 0.5, 0.45)}), MODEL)
    assert doubt.unsure[0] == 9 and 4 in doubt.unsure  # the most doubtful first
    assert doubt.high - doubt.low > calm.high - calm.low
    assert doubt.low <= 41 and doubt.high >= 44


def test_a_counter_far_from_the_detector_names_the_square_without_widening() -> None:
    calm = count_spread(spread(*A_SPREAD), MODEL)
    torn = count_spread(spread(*A_SPREAD, disagree={2: 3.0, 4: 1.0}), MODEL)
    assert torn.unsure == (2,)  # 1.0 apart is within the counter's own noise
    assert (torn.total, torn.low, torn.high) == (calm.total, calm.low, calm.high)


def test_a_model_that_knows_faint_peaks_are_pieces_counts_them() -> None:
    sure = tuple([0.01] * 3 + [0.97] * 6)  # from height 0.4 on, a candidate is a piece
    model = replace(MODEL, real=(sure,) * 4)
    t = count_spread(spread(*A_SPREAD, faint={1: (0.45,)}), model)
    assert t.counts[1] == A_SPREAD[1] + 1 and t.total == 42


def test_pieces_seen_beside_the_board_widen_the_interval_upwards() -> None:
    t = count_spread(spread(*A_SPREAD), MODEL, outside=10.0)
    assert t.total == 41 and t.high >= 41 + 10


def test_plain_distributions_are_read_by_their_mode() -> None:
    readings = [Evidence.exact(n) for n in A_SPREAD]
    assert count_spread(readings).total == 41
    assert SpreadSquare.from_evidence(Evidence.exact(7)).peaks == 7


def test_squares_counted_by_hand_are_certain_and_the_rest_stays_the_cameras() -> None:
    doubt = spread(*A_SPREAD, faint={4: (0.55,), 9: (0.55, 0.5, 0.45)})
    camera = count_spread(doubt, MODEL)
    assert {4, 9} <= set(camera.unsure) and camera.hand == ()
    # the players count the two lit squares: 5 and 7 where the camera read 4 and 5
    hand = count_spread(doubt, MODEL, known={4: 5, 9: 7})
    assert hand.counts[4] == 5 and hand.counts[9] == 7 and hand.hand == (4, 9)
    assert hand.total == 41 + 1 + 2 == sum(hand.counts)
    assert not {4, 9} & set(hand.unsure)
    assert hand.low <= hand.total <= hand.high
    assert hand.high - hand.low < camera.high - camera.low  # their doubt is gone
    assert SideCount.of(hand).how == "camera+hand" and SideCount.of(camera).how == "camera"


def test_a_quan_square_s_small_pieces_can_be_counted_by_hand_too() -> None:
    # the pile counter far off on quan square 6 lights it; its big stone is called apart
    torn = spread(*A_SPREAD, disagree={6: 3.0})
    assert count_spread(torn, MODEL).unsure == (6,)
    hand = count_spread(torn, MODEL, known={6: 2})
    assert hand.counts[6] == 2 and hand.total == 43 and hand.unsure == () and hand.hand == (6,)


def test_a_blind_scene_counted_by_hand_square_by_square_is_exact() -> None:
    faint = {sq: (0.3, 0.25) for sq in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)}
    blind = spread(0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, faint=faint)
    every = {sq: 2 for sq in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)}
    some = count_spread(blind, MODEL, known={1: 2, 2: 2})
    assert some.high == MODEL.most  # the camera still sees too little of the rest
    t = count_spread(blind, MODEL, known=every)
    assert t.total == 20 and t.high < MODEL.most and t.unsure == ()


@pytest.mark.parametrize(
    ("known", "message"),
    [({12: 3}, "square 0-11, got square 12"), ({4: -1}, "0-99 pieces, got -1 in square 4")],
)
def test_a_hand_count_that_cannot_be_is_refused(known: dict[int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        count_spread(spread(*A_SPREAD), MODEL, known=known)


def test_a_tally_needs_twelve_squares() -> None:
    with pytest.raises(ValueError, match="12 squares"):
        count_spread(spread(*A_SPREAD)[:10])


def test_a_model_refuses_a_wrong_shape() -> None:
    with pytest.raises(ValueError, match="9 probabilities"):
        SpreadModel(real=((0.5,) * 3,) * 4)
    with pytest.raises(ValueError, match="4 clarity classes"):
        SpreadModel(real=(HEIGHTS,) * 2)
    with pytest.raises(ValueError, match="coverage"):
        SpreadModel(coverage=0.3)
    with pytest.raises(ValueError, match="4 clarity classes"):
        SpreadModel(real_changed=(HEIGHTS,) * 3)
    with pytest.raises(ValueError, match="9 probabilities"):
        SpreadModel(real_still=(0.1,) * 8)
    with pytest.raises(ValueError, match="5 weights"):
        SpreadModel(doubt=(0.0, 1.0))
    with pytest.raises(ValueError, match="light_at"):
        SpreadModel(light_at=1.5)


def test_fitting_learns_which_candidate_heights_were_pieces() -> None:
    # every citizen square shows one candidate of height 0.35 besides its sure ones:
    # on squares 1-5 it was always a piece, on 7-11 never; the fit must learn 50 %
    # for that height, and that the sure ones were right
    squares = spread(*A_SPREAD, faint={sq: (0.35,) for sq in range(1, 12) if sq != 6})
    truth = [n + (1 if 1 <= sq <= 5 else 0) for sq, n in enumerate(A_SPREAD)]
    clean = (spread(*A_SPREAD), list(A_SPREAD), 0.0)  # no faint peak: nothing was missed
    model = fit_spread_model([(squares, truth, 0.0)] * 10 + [clean] * 10, MODEL)
    clear = model.real[-1]  # sure candidates of 0.97: the clearest scenes' class
    assert clear[2] == pytest.approx(0.5, abs=0.1)
    assert clear[-1] > 0.99
    t = count_spread(squares, model)
    assert t.low <= sum(truth) <= t.high
    assert set(t.unsure) == {1, 2, 3, 4, 5, 7, 8, 9, 10, 11}


def test_fitting_widens_the_interval_until_it_holds_the_samples() -> None:
    # the detector is sure, yet a scene is now and then two pieces off: only the
    # scene-level spread can cover that, and the fit must find one that does
    squares = spread(*A_SPREAD)
    samples = [(squares, list(A_SPREAD), 0.0)] * 8
    for extra in (2, -2):
        truth = list(A_SPREAD)
        truth[1] += extra
        samples.append((squares, truth, 0.0))
    model = fit_spread_model(samples, replace(MODEL, coverage=0.95))
    t = count_spread(squares, model)
    assert t.low <= 39 and t.high >= 43


def test_final_count_is_rules_r14_with_debts_repaid() -> None:
    # V40's end: A captured 37 and one quan, B 13 and one quan, B borrowed 5 from A.
    f = final_count((SideCount(37, 1), SideCount(13, 1)), mandarin_value=10, debt=(0, 5))
    assert f.scores == (52, 18)
    assert f.winner == 0 and f.sure
    assert f.debt_net(0) == 5 and f.debt_net(1) == -5
    assert f.quan_points(1) == 10
    assert sum(f.scores) == 70


def test_heaps_are_checked_against_what_the_game_left_within_the_intervals() -> None:
    camera = SideCount(45, 1, 44, 49)
    assert final_count((camera, SideCount(3)), expected=50).off_by == 0  # 47..52 holds 50
    assert final_count((camera, SideCount(0)), expected=50).off_by == 1  # at most 49
    assert final_count((SideCount(30), SideCount(30)), expected=50).off_by == -10
    assert final_count((SideCount(30), SideCount(30))).off_by == 0  # no game known


def test_mandarin_value_five_and_a_draw() -> None:
    f = final_count((SideCount(30, 1), SideCount(35, 0)), mandarin_value=5)
    assert f.scores == (35, 35) and f.winner is None and f.sure


def test_overlapping_intervals_leave_the_winner_unsure() -> None:
    a = SideCount(40, 0, 38, 43)
    b = SideCount(39, 0, 39, 39)
    f = final_count((a, b))
    assert f.winner == 0 and not f.sure
    assert f.ranges == ((38, 43), (39, 39))


def test_row_sweep_counts_each_players_row() -> None:
    assert row_sweep(Position.initial()) == (25, 25)


class Log(RecordWriter):
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def append(self, kind: str, data: Any) -> None:
        self.lines.append((kind, dict(data)))


def test_the_journal_records_a_tally_through_its_writer() -> None:
    sides = (SideCount(41, 1, 40, 43), SideCount(19, 1, how="buttons"))
    f = final_count(sides, debt=(0, 5), sweep=(4, 6))
    log = Log()
    log.tally(**tally_fields(f, sides))
    kind, data = log.lines[0]
    assert kind == Kind.TALLY == "tally"
    assert data["scores"] == [56, 24] and data["winner"] == 0
    assert data["intervals"] == [[40, 43], [19, 19]]
    assert data["how"] == ["camera", "buttons"] and data["sweep"] == [4, 6]
    hand = (replace(sides[0], how=CountedBy.CAMERA_HAND), sides[1])
    log.tally(**tally_fields(final_count(hand, debt=(0, 5), sweep=(4, 6)), hand))
    assert log.lines[1][1]["how"] == ["camera+hand", "buttons"]
    assert json.loads(json.dumps(data)) == data


def test_tally_data_refuses_a_wrong_shape() -> None:
    fields = tally_fields(final_count((SideCount(1), SideCount(2))), (SideCount(1), SideCount(2)))
    with pytest.raises(ValueError, match="camera, camera\\+hand, buttons"):
        tally_data(**{**fields, "how": ["camera", "guess"]})
    with pytest.raises(ValueError, match="one value per player"):
        tally_data(**{**fields, "pieces": [1]})


# -- the command, on the two small stills shipped for the demo ---------------------------


def truth(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FRAMES / f"{name}.json").read_text())
    return data


def test_bundled_frames_are_small_and_in_order() -> None:
    frames = bundled_frames()
    assert [p.stem for p in frames] == ["spread_a", "spread_b"]
    assert sum(p.stat().st_size for p in FRAMES.iterdir()) < 300_000


def test_tally_command_counts_the_stills_and_keeps_going_after_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"not a jpeg")
    frames = [str(p) for p in bundled_frames()]
    status = tally_main([frames[0], str(bad), str(tmp_path / "missing.png"), frames[1]])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert [line["image"] for line in lines] == [
        "spread_a.jpg",
        "broken.jpg",
        "missing.png",
        "spread_b.jpg",
    ]
    assert "error" in lines[1] and "error" in lines[2]
    assert len(err.strip().splitlines()) == 2  # one line per bad image
    for line, name in ((lines[0], "spread_a"), (lines[3], "spread_b")):
        t = truth(name)
        assert line["board_found"] is True
        low, high = line["interval"]
        assert low <= line["total"] <= high
        assert low <= sum(t["board"]) <= high
        assert line["total"] == sum(sq["count"] for sq in line["squares"])
        assert len(line["squares"]) == 12
        assert line["big"] == sum(t["big"])
        assert all(0 <= sq < 12 for sq in line["unsure"])


def test_tally_command_writes_one_file_per_image(tmp_path: Path) -> None:
    out = tmp_path / "out"
    frame = str(bundled_frames()[1])
    assert tally_main([frame, "--json-out", str(out)]) == 0
    data = json.loads((out / "spread_b.json").read_text())
    assert set(data) >= {"image", "board_found", "total", "interval", "big", "squares", "unsure"}


def test_tally_command_says_why_when_there_is_no_board(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    blank = tmp_path / "floor.png"
    cv2.imwrite(str(blank), np.full((240, 320, 3), 128, np.uint8))
    assert tally_main([str(blank), "--json-out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "floor.json").read_text())
    assert data["board_found"] is False and data["total"] is None and data["reason"]


def test_the_live_camera_path_counts_with_the_observers_board() -> None:
    from companion.appliance.observe import VisionObserver
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_frame_spread

    observer = VisionObserver(stills=True)
    image = read_image(str(bundled_frames()[1]))
    reading = read_frame_spread(observer, image)
    assert reading.found and observer.locator.outline is not None
    t = count_spread(reading.squares, outside=reading.outside)
    assert t.low <= sum(truth("spread_b")["board"]) <= t.high
    # the stone's call is the fitted one of the peak and the network, west then east
    pairs = zip(reading.big_heat, reading.big_net, strict=True)
    calls = [big_stone_probability(h, n) for h, n in pairs]
    assert [reading.squares[0].big_prob, reading.squares[6].big_prob] == pytest.approx(calls)
    assert [int(p >= 0.5) for p in calls] == truth("spread_b")["big"]


def test_the_live_camera_path_counts_through_a_wide_lens_undone() -> None:
    import numpy as np

    from companion.appliance.observe import VisionObserver
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_frame_spread
    from tests.vision.conftest import as_taken
    from vision.config import VisionConfig
    from vision.lens import Lens, frame_zoom
    from vision.locate import locate_board

    lens = Lens(-0.15)
    pinhole = read_image(str(bundled_frames()[1]))
    bent = as_taken(pinhole, lens)
    centre = np.array([pinhole.shape[1] / 2.0, pinhole.shape[0] / 2.0])
    # where the board lies in the straightened frame: the pinhole photo's own fit, shrunk
    expected = centre + frame_zoom(pinhole.shape, lens) * (locate_board(pinhole).corners - centre)
    errors = []
    for config in (VisionConfig(), VisionConfig(lens=lens)):
        observer = VisionObserver(config, stills=True)
        reading = read_frame_spread(observer, bent)
        assert reading.found and observer.locator.outline is not None
        errors.append(np.abs(observer.locator.outline.corners - expected).max())
    t = count_spread(reading.squares, outside=reading.outside)
    assert t.low <= sum(truth("spread_b")["board"]) <= t.high
    assert errors[1] < 3.0 < errors[0]


def test_a_candidate_divided_out_leaves_the_poisson_binomial_of_the_rest() -> None:
    from companion.referee.tally import _poisson_binomial, _without

    probs = [0.9999, 0.3, 0.5, 0.0001, 0.97, 0.62]
    whole = _poisson_binomial(probs)
    for i, p in enumerate(probs):
        rest = _poisson_binomial(probs[:i] + probs[i + 1 :])
        assert _without(whole, p) == pytest.approx(rest, abs=1e-12)


def test_tally_command_counts_on_the_corners_a_config_gives(tmp_path: Path) -> None:
    """Calibrated corners (``oanquan calibrate``) replace the board search: the count on
    the corners found is the count on the same corners given."""
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_spread

    frame = bundled_frames()[0]
    found = read_spread(read_image(str(frame)))
    assert found.found and not found.given
    corners = [[round(float(x), 1), round(float(y), 1)] for x, y in found.corners]
    config = tmp_path / "oanquan.toml"
    config.write_text(f"[vision.locate]\nmanual_corners = {corners}\n", "utf-8")
    out = tmp_path / "out"
    assert tally_main([str(frame), "--config", str(config), "--json-out", str(out)]) == 0
    data = json.loads((out / "spread_a.json").read_text())
    assert data["board_found"] is True
    low, high = data["interval"]
    assert low <= sum(truth("spread_a")["board"]) <= high
    assert data["big"] == sum(truth("spread_a")["big"])


def test_a_scene_the_detector_cannot_see_is_bounded_by_the_most_a_spread_holds() -> None:
    # 3 sure pieces among 20 doubtful peaks: the ground or the pieces fool the detector,
    # and the truth may be anything up to the most a spread holds
    faint = {sq: (0.3, 0.25) for sq in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)}
    blind = spread(0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, faint=faint)
    t = count_spread(blind, MODEL)
    assert t.high == MODEL.most == 70 and t.low <= t.total
    assert set(t.unsure) >= {1, 2, 3, 4, 5, 7, 8, 9, 10, 11}
    # the same few pieces on a clear ground are simply few pieces
    few = count_spread(spread(0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0), MODEL)
    assert few.total == 3 and few.high < 10 and few.unsure == ()


def test_the_piece_detector_is_the_one_the_config_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``[vision.count] spread_model`` picks the detector (the bench compares others):
    a file that is not there is named in one line before any image is read."""
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_spread
    from vision import spread
    from vision.config import VisionConfig
    from vision.errors import ConfigError

    assert VisionConfig().count.spread_model == spread.MODEL
    missing = tmp_path / "none.onnx"
    cfg = VisionConfig()
    cfg = replace(cfg, count=replace(cfg.count, spread_model=str(missing)))
    with pytest.raises(ConfigError, match=r"none\.onnx does not exist"):
        read_spread(read_image(str(bundled_frames()[0])), cfg)
    config = tmp_path / "oanquan.toml"
    config.write_text(f'[vision.count]\nspread_model = "{missing}"\n', "utf-8")
    assert tally_main([str(bundled_frames()[0]), "--config", str(config)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "vision.count.spread_model" in err[0] and "none.onnx" in err[0]


def test_a_big_stone_is_surer_the_higher_its_peak_and_the_surer_the_network() -> None:
    peaks = [0.0, 0.02, 0.1, 0.3, 0.8]
    for net in (0.05, 0.5, 0.95):
        probs = [big_stone_probability(p, net) for p in peaks]
        assert probs == sorted(probs) and probs[0] < 0.5 < probs[-1]
    assert big_stone_probability(0.1, 0.05) < big_stone_probability(0.1, 0.95)
    # a network that says 0 or 1 is clipped, never certain: the peak still counts
    assert big_stone_probability(0.9, 0.0) > big_stone_probability(0.0, 0.0) > 0.0
    assert big_stone_probability(0.0, 1.0) < 1.0


def test_a_fit_without_samples_says_so() -> None:
    with pytest.raises(ValueError, match="needs samples"):
        fit_big_call([])


def test_the_big_stone_call_is_fitted_from_quan_squares_of_known_content() -> None:
    rng = random.Random(3)
    true_w = (-3.0, 9.0, 0.8)
    samples = []
    for _ in range(1500):
        peak, net = rng.random() ** 3, rng.random()
        p = big_stone_probability(peak, net, true_w)
        samples.append((peak, net, rng.random() < p))
    w = fit_big_call(samples)
    assert w == pytest.approx(true_w, rel=0.25)
    right = sum((big_stone_probability(p, n, w) >= 0.5) == b for p, n, b in samples)
    assert right / len(samples) > 0.85


def test_board_trust_is_a_logistic_fit_of_located_right_on_the_evidence() -> None:
    rng = random.Random(5)
    samples = []
    for _ in range(400):
        right = rng.random() < 0.7
        quality = rng.uniform(0.55, 1.0) if right else rng.uniform(0.3, 0.75)
        on_lines = rng.uniform(0.0, 0.1) if right else rng.uniform(0.0, 0.6)
        e = BoardEvidence(quality, on_lines, rng.choice((0, 0, 1)), rng.uniform(0.8, 1.0), 20)
        samples.append((e, right))
    w = fit_board_trust(samples)
    assert len(w) == 6 and w[1] > 0 > w[2]  # a better fit is trusted more, pieces on lines less
    good = BoardEvidence(0.95, 0.0, 0, 1.0, 30)
    bad = BoardEvidence(0.4, 0.5, 0, 1.0, 30)
    assert board_trust(good, w) > 0.9 > 0.1 > board_trust(bad, w)


# -- against a photo of the empty board --------------------------------------------------

EMPTY_MODEL = replace(
    MODEL,
    real_changed=(HEIGHTS,) * 4,
    real_still=(0.0001,) * 9,
    real_near=HEIGHTS,
    miss_empty=(0.005, 1.0),
    scene_empty=(0.3, 0.0, 0.0),
)


def referenced(
    squares: list[SpreadSquare], extra: dict[int, float] | None = None
) -> list[SpreadSquare]:
    """The squares read against the empty board: every candidate on a change."""
    more = extra or {}
    return [
        replace(sq, changed=(True,) * len(sq.scores), extra=more.get(i, 0.0))
        for i, sq in enumerate(squares)
    ]


def test_against_the_empty_board_a_sure_peak_on_unchanged_ground_is_no_piece() -> None:
    squares = referenced(spread(*A_SPREAD, faint={1: (0.97,)}))
    # the fifth 0.97 peak of square 1 lies where nothing changed since the empty board
    flags = (True,) * 4 + (False,)
    squares[1] = replace(squares[1], changed=flags)
    t = count_spread(squares, EMPTY_MODEL)
    assert t.total == 41 and t.counts[1] == 4
    plain = [replace(sq, changed=(), extra=None) for sq in squares]
    assert count_spread(plain, EMPTY_MODEL).total == 42  # without it, a piece


def test_change_no_candidate_explains_adds_the_pieces_the_detector_missed() -> None:
    squares = referenced(spread(*A_SPREAD), extra={2: 3.0})
    dist = EMPTY_MODEL.square(2, squares[2], 3)
    mean = sum(n * p for n, p in enumerate(dist)) / sum(dist)
    assert mean == pytest.approx(A_SPREAD[2] + 3.0, abs=0.05)
    t = count_spread(squares, EMPTY_MODEL)
    assert t.low <= 44 <= t.high and 2 in t.unsure


def test_fitting_learns_how_the_empty_board_sorts_the_candidates() -> None:
    # every citizen square shows a sure peak on unchanged ground that was never a piece,
    # and squares 1-5 one piece no candidate saw, shown by its change
    truth = [n + (1 if 1 <= sq <= 5 else 0) for sq, n in enumerate(A_SPREAD)]
    squares = referenced(
        spread(*A_SPREAD, faint={sq: (0.97,) for sq in range(1, 12) if sq != 6}),
        extra={sq: 1.0 for sq in range(1, 6)},
    )
    squares = [
        replace(sq, changed=(True,) * (len(sq.scores) - 1) + (False,)) if i % 6 else sq
        for i, sq in enumerate(squares)
    ]
    model = fit_spread_model([(squares, truth, 0.0)] * 20, EMPTY_MODEL)
    assert model.real_still[-1] < 0.1
    assert model.real_changed[-1][-1] > 0.99
    assert model.miss_empty[1] == pytest.approx(1.0, abs=0.2)
    assert model.real == EMPTY_MODEL.real  # the plain tables saw nothing to learn from
    t = count_spread(squares, model)
    assert t.total == sum(truth) or t.low <= sum(truth) <= t.high


def test_tally_command_counts_against_the_empty_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frames = [str(p) for p in bundled_frames()]
    assert tally_main(["--empty", str(bundled_empty()), *frames]) == 0
    out, _ = capsys.readouterr()
    for text, name in zip(out.splitlines(), ("spread_a", "spread_b"), strict=True):
        line = json.loads(text)
        low, high = line["interval"]
        assert low <= sum(truth(name)["board"]) <= high
        assert line["total"] == sum(sq["count"] for sq in line["squares"])
    # a photo of the empty board that cannot be read stops the batch before any spread
    status = tally_main(["--empty", str(tmp_path / "missing.jpg"), *frames])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        f"oanquan tally: --empty: no such file: {tmp_path / 'missing.jpg'}"
    ]


def test_an_empty_board_photo_of_another_size_is_that_spreads_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import cv2

    small = tmp_path / "small.jpg"
    image = cv2.imread(str(bundled_empty()))
    cv2.imwrite(str(small), cv2.resize(image, (480, 360)))
    frames = [str(p) for p in bundled_frames()]
    assert tally_main(["--empty", str(small), frames[0]]) == 1
    out, err = capsys.readouterr()
    line = json.loads(out)
    assert "error" in line and "480x360" in line["error"]
    assert len(err.strip().splitlines()) == 1


def test_the_interval_against_the_empty_board_also_holds_the_plain_readings() -> None:
    # doubtful peaks the empty board calls pieces: its count is sure, its interval
    # narrow; the same spread read without it is wider, and the interval keeps both
    faint = {sq: (0.3,) for sq in range(1, 6)}
    squares = referenced(spread(*A_SPREAD, faint=faint))
    sure = replace(EMPTY_MODEL, real_changed=((*HEIGHTS[:2], 0.999, *HEIGHTS[3:]),) * 4)
    both = count_spread(squares, sure)
    plain = count_spread([replace(sq, changed=(), extra=None) for sq in squares], sure)
    alone = _Reading.of(squares, sure).interval(sure, 0.0)
    assert both.total == 46 and plain.total != 46
    assert both.low <= min(plain.low, alone[0]) and both.high >= max(plain.high, alone[1])
    assert alone[1] - alone[0] < plain.high - plain.low


def test_against_the_empty_board_the_pair_detector_reads_both_photos() -> None:
    """``[vision.count] spread_pair_model`` reads a spread with its empty board (a file
    that is not there is named, and only then is it read); "" keeps the spread's own
    detector, whose candidates are those of the spread read alone."""
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_spread
    from vision.config import VisionConfig
    from vision.errors import ConfigError

    image, empty = read_image(str(bundled_frames()[0])), read_image(str(bundled_empty()))
    cfg = VisionConfig()
    missing = replace(cfg, count=replace(cfg.count, spread_pair_model="/nowhere/pair.onnx"))
    with pytest.raises(ConfigError, match=r"pair\.onnx does not exist"):
        read_spread(image, missing, empty=empty)
    assert read_spread(image, missing).found  # a spread alone never reads it
    off = replace(cfg, count=replace(cfg.count, spread_pair_model=""))
    alone, against = read_spread(image, off), read_spread(image, off, empty=empty)
    assert against.candidates == alone.candidates
    assert all(sq.referenced for sq in against.squares)
    paired = read_spread(image, cfg, empty=empty)
    assert paired.candidates != alone.candidates


def test_each_detector_has_its_own_fitted_big_stone_call() -> None:
    """The pair detector's stone peaks stand higher above an empty quan square than the
    spread's own detector's: read with the empty board, the call is ``FITTED_BIG_EMPTY``;
    read alone, ``FITTED_BIG``. The bundled spread holds one stone, west."""
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_spread

    image, empty = read_image(str(bundled_frames()[0])), read_image(str(bundled_empty()))
    for reading, call in (
        (read_spread(image, empty=empty), FITTED_BIG_EMPTY),
        (read_spread(image), FITTED_BIG),
    ):
        pairs = zip(reading.big_heat, reading.big_net, strict=True)
        calls = [big_stone_probability(h, n, call) for h, n in pairs]
        assert [reading.squares[0].big_prob, reading.squares[6].big_prob] == pytest.approx(calls)
        assert [int(p >= 0.5) for p in calls] == truth("spread_a")["big"]
    assert FITTED_BIG_EMPTY != FITTED_BIG


def test_a_mean_of_frames_calls_its_big_stones_on_the_single_frame_given() -> None:
    """``single``: one frame of a noisy scene whose mean is read. The pieces come from the
    image read, the big stones from that frame (here another spread's, to tell them
    apart: A holds the west stone, B the east one)."""
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_spread

    frames = [read_image(str(f)) for f in bundled_frames()]
    empty = read_image(str(bundled_empty()))
    a, b = read_spread(frames[0], empty=empty), read_spread(frames[1], empty=empty)
    mixed = read_spread(frames[0], empty=empty, single=(frames[1], empty))
    assert [sq.peaks for sq in mixed.squares[1:6] + mixed.squares[7:]] == [
        sq.peaks for sq in a.squares[1:6] + a.squares[7:]
    ]
    # (the board each was located on differs by a fraction of a pixel)
    assert mixed.big_net == pytest.approx(b.big_net, abs=0.01)
    assert mixed.big_heat == pytest.approx(b.big_heat, abs=0.02)
    called = [int(mixed.squares[m].big_prob >= 0.5) for m in (0, 6)]
    assert called == truth("spread_b")["big"] != truth("spread_a")["big"]


def test_the_interval_also_holds_the_spread_read_by_its_own_detector() -> None:
    # the pair detector is sure of 41 pieces; the spread's own detector, reading it
    # alone, is sure of few and doubtful of many: a scene it cannot see (blind), whose
    # interval runs up to the most a spread holds. The two photos' count stays 41, the
    # interval keeps the blind reading's reach.
    squares = referenced(spread(*A_SPREAD))
    blind = [
        replace(sq, alone=(0.9,) if i == 1 else (0.3,) * sq.peaks) for i, sq in enumerate(squares)
    ]
    sure, doubtful = count_spread(squares, EMPTY_MODEL), count_spread(blind, EMPTY_MODEL)
    assert sure.total == doubtful.total == 41 and doubtful.counts == sure.counts
    assert sure.high < EMPTY_MODEL.most == doubtful.high
    # its own detector seeing the same: the interval of the pair's reading alone
    agree = [replace(sq, alone=sq.scores) for sq in squares]
    assert (count_spread(agree, EMPTY_MODEL).low, count_spread(agree, EMPTY_MODEL).high) == (
        sure.low,
        sure.high,
    )


def test_the_plain_reading_widens_the_interval_only_where_the_two_disagree() -> None:
    # the spread's own detector sees every pair peak less surely and a few doubtful
    # peaks more: its interval is wider, its total the same 41, well inside
    squares = referenced(spread(*A_SPREAD))
    pair_only = _Reading.of(squares, EMPTY_MODEL).interval(EMPTY_MODEL, 0.0)
    doubt = [
        replace(sq, alone=(0.9,) * sq.peaks + ((0.45,) * 2 if i in (2, 3) else ()))
        for i, sq in enumerate(squares)
    ]
    plain = count_spread([_alone(sq) for sq in doubt], EMPTY_MODEL)
    agreeing = count_spread(doubt, EMPTY_MODEL)
    assert plain.total == agreeing.total == 41
    assert plain.high - plain.low > pair_only[1] - pair_only[0]
    assert (agreeing.low, agreeing.high) == pair_only
    # one square of it read four short: its total falls outside, and its interval joins
    short = [replace(sq, alone=sq.alone[:-4] if i == 2 else sq.alone) for i, sq in enumerate(doubt)]
    outside = count_spread([_alone(sq) for sq in short], EMPTY_MODEL)
    assert not pair_only[0] + AGREE <= outside.total <= pair_only[1] - AGREE
    joined = count_spread(short, EMPTY_MODEL)
    assert joined.total == 41 and joined.low == min(pair_only[0], outside.low)
    assert joined.high == max(pair_only[1], outside.high)


def test_whether_the_two_readings_agree_is_asked_of_the_cameras_counts_alone() -> None:
    # the pair detector doubts squares 2 and 3; the spread's own detector sees one more
    # piece in 9 and in 10: 43 against 41, inside the camera's interval, so they agree
    doubt = referenced(spread(*A_SPREAD, faint={2: (0.45, 0.4, 0.35), 3: (0.45, 0.4, 0.35)}))
    squares = [
        replace(sq, alone=sq.scores[: sq.peaks] + ((0.97,) if i in (9, 10) else ()))
        for i, sq in enumerate(doubt)
    ]
    camera = count_spread(squares, EMPTY_MODEL)
    assert (camera.low, camera.high) == _Reading.of(squares, EMPTY_MODEL).interval(EMPTY_MODEL, 0)
    assert camera.low + AGREE <= 43 <= camera.high - AGREE
    # the players count 2 and 3 as the camera did: the interval narrows to the pair's
    # reading with them, and 43 is no reason to widen it again
    known = {2: 6, 3: 5}
    hand = count_spread(squares, EMPTY_MODEL, known=known)
    narrow = _Reading.of(squares, EMPTY_MODEL, known).interval(EMPTY_MODEL, 0)
    assert (hand.low, hand.high) == narrow and narrow[1] - narrow[0] < camera.high - camera.low
    assert not narrow[0] + AGREE <= 43 <= narrow[1] - AGREE


def test_a_square_where_the_spreads_own_detector_sees_more_is_named_unsure() -> None:
    # wrong when its own detector sees more (weight 3 a piece), hardly ever otherwise
    model = replace(EMPTY_MODEL, doubt=(-4.0, 0.1, 3.0, 0.2, 0.0), light_at=0.05)
    squares = [replace(sq, alone=sq.scores) for sq in referenced(spread(*A_SPREAD))]
    agreeing = count_spread(squares, model)
    assert agreeing.unsure == ()
    # its own detector sure of one more piece in square 8, of two more in square 2, of
    # one fewer in square 3: squares 2 and 8 are lit, surest wrong first (seeing less
    # is its usual blindness), and the counts stay the pair detector's
    squares[8] = replace(squares[8], alone=(*squares[8].scores, 0.8))
    squares[2] = replace(squares[2], alone=(*squares[2].scores, 0.8, 0.7))
    squares[3] = replace(squares[3], alone=squares[3].scores[1:])
    doubted = count_spread(squares, model)
    assert doubted.unsure == (2, 8)
    assert doubted.counts == agreeing.counts
    # read without the empty board there is no second detector, and the best count's
    # own probability lights squares
    plain = [replace(sq, changed=(), extra=None) for sq in squares]
    assert count_spread(plain, model).unsure == ()


def test_fitting_learns_when_a_count_against_the_empty_board_is_wrong() -> None:
    # square 8 holds one more piece than the pair detector saw, which only the spread's
    # own detector saw; every other square is right
    truth = [n + (sq == 8) for sq, n in enumerate(A_SPREAD)]
    squares = [replace(sq, alone=sq.scores) for sq in referenced(spread(*A_SPREAD))]
    squares[8] = replace(squares[8], alone=(*squares[8].scores, 0.8))
    doubt = fit_doubt([(squares, truth, 0.0)] * 20, EMPTY_MODEL)
    assert doubt[2] > 1.0  # (bias, log(1 - sure), more, fewer, faintness)
    fitted = replace(EMPTY_MODEL, doubt=doubt, light_at=0.5)
    assert count_spread(squares, fitted).unsure == (8,)
    # plain readings have no such evidence: fitting needs some against the empty board
    plain = [replace(sq, changed=(), extra=None) for sq in squares]
    with pytest.raises(ValueError, match="needs samples"):
        fit_doubt([(plain, truth, 0.0)], EMPTY_MODEL)


def test_a_middling_peak_beside_a_higher_one_is_weighed_by_its_own_table() -> None:
    squares = referenced(spread(*A_SPREAD))
    squares[2] = replace(
        squares[2],
        scores=(*squares[2].scores, 0.65),
        changed=(*squares[2].changed, True),
        near=(False,) * len(squares[2].scores) + (True,),
    )
    doubtful = replace(EMPTY_MODEL, real_near=(0.05,) * 5 + (0.15,) * 4)
    assert count_spread(squares, doubtful).counts[2] == A_SPREAD[2]
    alone = [replace(sq, near=()) for sq in squares]  # a peak on a change of its own
    assert count_spread(alone, doubtful).counts[2] == A_SPREAD[2] + 1


def test_fitting_learns_that_peaks_beside_higher_ones_are_seldom_pieces() -> None:
    # a middling peak on a change: beside a higher one in squares 1-5, never a piece;
    # alone in squares 7-11, always one
    truth = [n + (1 if sq > 6 else 0) for sq, n in enumerate(A_SPREAD)]
    squares = referenced(spread(*A_SPREAD))
    squares = [
        replace(
            sq,
            scores=(*sq.scores, 0.65),
            changed=(*sq.changed, True),
            near=(False,) * len(sq.scores) + (i < 6,),
        )
        if i % 6
        else sq
        for i, sq in enumerate(squares)
    ]
    model = fit_spread_model([(squares, truth, 0.0)] * 20, EMPTY_MODEL)
    assert model.real_near[_bin(0.65)] < 0.1
    assert max(row[_bin(0.65)] for row in model.real_changed) > 0.9  # (the scene's class)
    assert count_spread(squares, model).counts == tuple(truth)


def test_fitting_keeps_a_higher_peak_at_least_as_likely_a_piece() -> None:
    # on unchanged ground: many faint peaks never pieces, two middling ones pieces and
    # one sure peak not; alone, that one bin would fit to "never", below its neighbours
    squares = referenced(spread(*A_SPREAD))
    truth = list(A_SPREAD)
    for sq in (1, 2):
        squares[sq] = replace(
            squares[sq], scores=(*squares[sq].scores, 0.55), changed=(*squares[sq].changed, False)
        )
        truth[sq] += 1
    squares[3] = replace(
        squares[3], scores=(*squares[3].scores, 0.95), changed=(*squares[3].changed, False)
    )
    for sq in (4, 5, 7, 8):
        squares[sq] = replace(
            squares[sq],
            scores=(*squares[sq].scores, 0.15, 0.15),
            changed=(*squares[sq].changed, False, False),
        )
    model = fit_spread_model([(squares, truth, 0.0)] * 5, EMPTY_MODEL)
    still = model.real_still
    assert list(still) == sorted(still)
    assert still[0] < 0.1 and still[4] > 0.5
    for row in (*model.real_changed, *model.real):
        assert list(row) == sorted(row)


#: ``_layer_on_concrete``'s spread: 35 pieces in one layer over the ten citizen squares
LAYER = [0, 4, 3, 5, 2, 4, 0, 3, 4, 2, 5, 3]


def _layer_on_concrete(piece: float) -> tuple[Any, Any, Any]:
    """A generated spread (``LAYER``) of pieces ``piece`` of a square wide on concrete,
    the same board empty (fresh noise), and the board's true outline."""
    from vision.locate import outline_from_corners
    from vision.synth import render_scene
    from vision.synth_spread import layer_placer

    look = {"ground": "concrete", "pebble_size": piece, "tilt_deg": 10.0}
    image, truth = render_scene(LAYER, (0, 0), 5, placer=layer_placer(0.3), **look)
    empty, _ = render_scene([0] * 12, (0, 0), 5, noise_seed=1, **look)
    outline = outline_from_corners(
        np.array(truth["corners"], np.float64), truth["conditions"]["arc_depth"], 1.0
    )
    return image, empty, outline


@pytest.mark.parametrize("piece", [0.07, 0.19])
def test_against_the_empty_board_the_pieces_are_read_at_the_scale_their_width_asks(
    piece: float,
) -> None:
    """Small pieces are read again on a finer canvas, large ones on a coarser, where the
    pair detector sees pieces of their look best; the spread alone stays at ``PX``."""
    from companion.commands.tally import read_spread
    from vision import spread as vspread

    image, empty, outline = _layer_on_concrete(piece)
    against = read_spread(image, outline=outline, empty=empty)
    assert against.scale > vspread.PX if piece < 0.1 else against.scale < vspread.PX
    assert read_spread(image, outline=outline).scale == vspread.PX
    assert sum(sq.peaks for sq in against.squares) == sum(LAYER)


@pytest.mark.parametrize(("piece", "px"), [(0.07, 112), (0.095, 96)])
def test_the_first_look_at_a_scene_is_one_view_and_the_rest_only_at_its_scale(
    piece: float, px: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read against the empty board, a scene is read again at its pieces' scale, most
    often another than ``PX``: the first look is then one view, and its other three are
    read only where the scale stays ``PX`` (four views of each canvas a reading keeps)."""
    from companion.commands.tally import read_spread
    from vision import spread as vspread

    image, empty, outline = _layer_on_concrete(piece)
    read: list[tuple[int, int, bool]] = []  # (canvas width, views, against the empty board)
    views = vspread.views

    def counted(rect: Any, model: str, before: Any = None, flips: Any = vspread.FLIPS) -> Any:
        read.append((rect.shape[1], len(flips), before is not None))
        return views(rect, model, before, flips)

    monkeypatch.setattr(vspread, "views", counted)
    reading = read_spread(image, outline=outline, empty=empty)
    first = vspread.canvas()[0]
    paired = [(w, n) for w, n, pair in read if pair]
    assert reading.scale == px
    if px == vspread.PX:
        assert paired == [(first, 1), (first, 3)]
    else:
        assert paired == [(first, 1), (vspread.canvas(reading.scale)[0], 4)]
    assert sum(sq.peaks for sq in reading.squares) == sum(LAYER)
