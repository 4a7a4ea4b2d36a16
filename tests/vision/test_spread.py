"""The tally's piece detector (``vision.spread``) and its generated spreads (``vision.synth_spread``)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.board import CITIZENS, MANDARINS
from vision import spread
from vision.config import VisionConfig
from vision.geometry import homography_from_corners
from vision.locate import locate_board
from vision.synth import REGION_NAMES
from vision.synth_spread import empty_board, layer_placer, spread_counts, spread_scene

STILLS = Path(__file__).resolve().parents[2] / "companion" / "commands" / "tally_frames"


def cell_centre(
    bx: float, by: float, stride: int = spread.STRIDE, px: int = spread.PX
) -> tuple[int, int, float, float]:
    """The heatmap cell holding board point (bx, by), and that cell's centre in board units."""
    i = int((spread.Y1 - by) * px / stride)
    j = int((bx - spread.X0) * px / stride)
    step = stride / px
    return i, j, spread.X0 + (j + 0.5) * step, spread.Y1 - (i + 0.5) * step


def heat_with(
    points: list[tuple[float, float, float]], stride: int = spread.STRIDE, px: int = spread.PX
) -> np.ndarray:
    """A heatmap of the spread canvas at ``px`` a square and ``stride`` with a bump of the
    given height centred on the cell of each board point."""
    w, h, _ = spread.canvas(px)
    heat = np.zeros((h // stride, w // stride), np.float32)
    ys, xs = np.mgrid[0 : heat.shape[0], 0 : heat.shape[1]].astype(np.float32)
    for bx, by, height in points:
        i, j, _, _ = cell_centre(bx, by, stride, px)
        heat = np.maximum(heat, height * np.exp(-((xs - j) ** 2 + (ys - i) ** 2) / 2.0))
    return heat


def test_peaks_are_found_where_the_bumps_are_with_their_squares() -> None:
    points = [(0.5, 0.5, 0.9), (0.62, 0.5, 0.7), (3.5, 1.5, 0.6), (2.5, 0.5, 0.05)]
    found = spread.peaks(heat_with(points), depth=1.0)
    assert len(found) == 3  # the 0.05 bump is below the candidate floor
    by_score = sorted(found, key=lambda p: -p.score)
    for p, (bx, by, height) in zip(by_score, points[:3], strict=True):
        _, _, cx, cy = cell_centre(bx, by)
        assert abs(p.x - cx) < 0.005 and abs(p.y - cy) < 0.005  # symmetric bump: no shift
        assert p.score == pytest.approx(height, abs=1e-3)
    # squares: 1 is P0's westmost, 8 the one of P1's row above 4 (7..11 run east to west)
    assert [p.square for p in by_score] == [1, 1, 8]
    assert spread.per_square(found)[1] == tuple(
        sorted((p.score for p in by_score[:2]), reverse=True)
    )


@pytest.mark.parametrize("px", spread.SCALES)
@pytest.mark.parametrize("stride", [1, 2, 4])
def test_peaks_and_squares_follow_the_heatmaps_own_stride(stride: int, px: int) -> None:
    """A detector's stride is read off its heatmap: the same board points come back from a
    finer or coarser net's output, on any canvas scale it was read at, in the same squares."""
    points = [(0.3, 0.4, 0.9), (4.6, 1.7, 0.8), (-0.5, 1.0, 0.7)]
    heat = heat_with(points, stride, px)
    found = sorted(spread.peaks(heat, depth=1.0, px=px), key=lambda p: -p.score)
    assert [p.square for p in found] == [1, 7, 0]  # P1's row runs east to west
    for p, (bx, by, _) in zip(found, points, strict=True):
        _, _, cx, cy = cell_centre(bx, by, stride, px)
        assert abs(p.x - cx) < 0.005 and abs(p.y - cy) < 0.005
        assert abs(p.x - bx) <= stride / px and abs(p.y - by) <= stride / px
    west, _ = spread.big_stones(heat, depth=1.0, px=px)
    assert west == pytest.approx(0.7, abs=1e-3)  # (-0.5, 1.0) lies in the west quan square


def test_the_canvas_scale_follows_the_pieces_width() -> None:
    """Smaller pieces are read on a finer canvas, larger ones on a coarser, each shown
    at least ``PIECE_PX`` wide where a scale can; ``PX`` where the width is unknown."""
    widths = [0.06, 0.1, 0.11, 0.13, 0.2, 0.3]
    scales = [spread.scale_for(w) for w in widths]
    assert scales == sorted(scales, reverse=True)
    assert scales[0] == max(spread.SCALES) and scales[-1] == min(spread.SCALES)
    assert spread.PX in scales
    for w, px in zip(widths[1:], scales[1:], strict=True):
        assert w * px >= spread.PIECE_PX  # wide enough, and no coarser scale would be
        assert all(w * q < spread.PIECE_PX for q in spread.SCALES if q < px)
    assert spread.scale_for(None) == spread.PX


def test_a_plateau_is_one_peak_and_big_stones_are_read_per_quan_square() -> None:
    heat = np.zeros((20, 20), np.float32)
    heat[5:7, 5:7] = 0.8  # four equal cells
    assert len(spread.peaks(np.pad(heat, ((0, 220), (0, 700))), depth=1.0)) == 1
    big = heat_with([(-0.5, 1.0, 0.7), (5.5, 1.0, 0.3)])
    west, east = spread.big_stones(big, depth=1.0)
    assert west == pytest.approx(0.7, abs=1e-3) and east == pytest.approx(0.3, abs=1e-3)


def test_spread_counts_fill_only_citizen_squares_within_the_cap() -> None:
    rng = np.random.default_rng(4)
    for total in (10, 41, 70):
        board = spread_counts(rng, total)
        assert sum(board) == total and max(board) <= 10
        assert all(board[m] == 0 for m in MANDARINS)


def test_the_layer_placer_never_stacks_pieces() -> None:
    rng = np.random.default_rng(1)
    poly = np.array([[1.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0]])
    pts = layer_placer(touch=0.6)(rng, poly, 10, 0.15)
    gaps = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
    gaps[np.diag_indices(len(pts))] = 9.0
    assert len(pts) == 10 and gaps.min() >= 0.85 * 0.15 - 1e-9
    half = 0.075 - 1e-9  # every centre half a piece inside the square
    assert pts[:, 0].min() >= 1.0 + half and pts[:, 0].max() <= 2.0 - half
    assert pts[:, 1].min() >= half and pts[:, 1].max() <= 1.0 - half


def test_a_spread_scene_is_a_pure_function_of_its_seed_with_truth() -> None:
    image, truth = spread_scene(7, size=(640, 480))
    again, _ = spread_scene(7, size=(640, 480))
    assert np.array_equal(image, again)
    small = [p for p in truth["pieces"] if p["kind"] == "small"]
    assert len(small) == sum(truth["board"]) and 10 <= len(small) <= 70
    assert not truth["hand"]["present"]
    assert sum(1 for p in truth["pieces"] if p["kind"] == "big") == sum(truth["big"])


def test_another_frame_of_a_spread_differs_only_by_its_sensor_noise() -> None:
    _, truth = spread_scene(7, size=(640, 480))
    frame, same = spread_scene(7, size=(640, 480), noise_seed=3)
    other, _ = spread_scene(7, size=(640, 480), noise_seed=4)
    assert truth == same  # the same pieces in the same places
    assert not np.array_equal(frame, other)
    # noise only: far nearer each other than to the scene of another seed
    gap = np.abs(frame.astype(np.int16) - other.astype(np.int16)).mean()
    apart = spread_scene(8, size=(640, 480), noise_seed=3)[0]
    assert gap < 0.5 * np.abs(frame.astype(np.int16) - apart.astype(np.int16)).mean()
    empty = empty_board(7, size=(640, 480), noise_seed=3)
    assert not np.array_equal(empty, empty_board(7, size=(640, 480)))


def _small_by_square(truth: dict) -> dict[str, np.ndarray]:
    out: dict[str, list[list[float]]] = {}
    for p in truth["pieces"]:
        if p["kind"] == "small":
            out.setdefault(p["region"], []).append(p["position"])
    return {r: np.array(ps) for r, ps in out.items()}


def _closest(points: np.ndarray) -> float:
    gaps = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    gaps[np.diag_indices(len(points))] = 9.0
    return float(gaps.min())


def test_a_respread_square_is_laid_apart_and_every_other_piece_stays() -> None:
    # what the tally screen asks of the players for its unsure squares (bench/tally.py
    # --respread): seed 1 has touching pieces in north_0 (9 of them)
    sq = REGION_NAMES.index("north_0")
    _, before = spread_scene(1, size=(320, 240))
    _, after = spread_scene(1, size=(320, 240), respread=(sq,))
    size = before["conditions"]["pebble_size"]
    was, now = _small_by_square(before), _small_by_square(after)
    assert before["board"] == after["board"] and was.keys() == now.keys()
    assert _closest(was["north_0"]) < size  # touching before
    assert _closest(now["north_0"]) >= 1.1 * size - 1e-9  # apart now
    for region in was.keys() - {"north_0"}:
        assert np.array_equal(was[region], now[region])


@pytest.mark.parametrize("name", ["spread_a", "spread_b"])
def test_the_detector_is_sure_of_each_piece_of_the_bundled_stills(name: str) -> None:
    image = cv2.imread(str(STILLS / f"{name}.jpg"))
    truth = json.loads((STILLS / f"{name}.json").read_text())
    cfg = VisionConfig().locate
    outline = locate_board(image, cfg, np.random.default_rng(cfg.seed))
    heat = spread.heatmaps(spread.rectify(image, outline.homography))
    found = spread.peaks(heat[0], outline.arc_depth)
    sure = [sum(1 for v in spread.per_square(found)[sq] if v >= 0.5) for sq in range(12)]
    assert abs(sum(sure[sq] for sq in CITIZENS) - sum(truth["board"])) <= 1
    assert sum(abs(sure[sq] - truth["board"][sq]) for sq in CITIZENS) <= 2
    west, east = spread.big_stones(heat[1], outline.arc_depth)
    assert (west > 0.2, east > 0.2) == tuple(bool(b) for b in truth["big"])


@pytest.mark.parametrize("name", ["spread_a", "spread_b"])
def test_the_pair_detector_is_sure_of_each_piece_against_the_bundled_empty_board(
    name: str,
) -> None:
    image = cv2.imread(str(STILLS / f"{name}.jpg"))
    before = cv2.imread(str(STILLS / "board_empty.jpg"))
    truth = json.loads((STILLS / f"{name}.json").read_text())
    cfg = VisionConfig()
    outline = locate_board(image, cfg.locate, np.random.default_rng(cfg.locate.seed))
    heat = spread.heatmaps(
        spread.rectify(image, outline.homography),
        cfg.count.spread_pair_model,
        spread.rectify(before, outline.homography),
    )
    found = spread.peaks(heat[0], outline.arc_depth)
    sure = [sum(1 for v in spread.per_square(found)[sq] if v >= 0.5) for sq in range(12)]
    assert sum(abs(sure[sq] - truth["board"][sq]) for sq in CITIZENS) <= 1
    west, east = spread.big_stones(heat[1], outline.arc_depth)
    assert (west > 0.2, east > 0.2) == tuple(bool(b) for b in truth["big"])


def test_rectify_maps_the_board_to_the_canvas() -> None:
    corners = np.array([[100.0, 400.0], [600.0, 400.0], [600.0, 200.0], [100.0, 200.0]])
    image = np.zeros((480, 700, 3), np.uint8)
    sw = tuple(int(v) for v in corners[0])
    cv2.circle(image, sw, 4, (255, 255, 255), -1)
    rect = spread.rectify(image, homography_from_corners(corners))
    w, h, a = spread.canvas()
    x, y = (a @ np.array([0.0, 0.0, 1.0]))[:2]  # board (0, 0) is the south-west corner
    assert rect.shape == (h, w, 3)
    assert rect[round(float(y)), round(float(x))].min() > 200


# -- against the photo of the empty board ----------------------------------------------


def _outline_of(truth: dict) -> object:
    from vision.locate import outline_from_corners

    return outline_from_corners(
        np.array(truth["corners"], np.float64), truth["conditions"]["arc_depth"], 1.0
    )


def _pieces(truth: dict) -> np.ndarray:
    return np.array([p["position"] for p in truth["pieces"] if p["kind"] == "small"])


def test_empty_board_is_the_same_scene_without_its_pieces_in_other_light() -> None:
    image, _ = spread_scene(41)
    before = empty_board(41)
    again = empty_board(41)
    assert before.shape == image.shape and np.array_equal(before, again)  # a pure function
    # the ground and chalk are the same, the light a little off: far closer to the
    # spread than another scene's board is
    other = empty_board(42)
    near = np.abs(before.astype(np.int16) - image.astype(np.int16)).mean()
    assert near < 0.5 * np.abs(other.astype(np.int16) - image.astype(np.int16)).mean()


def test_a_candidate_on_a_piece_lies_on_a_change_and_one_on_bare_ground_does_not() -> None:
    image, truth = spread_scene(7)  # shells on gravel: a hard ground for the detector
    outline = _outline_of(truth)
    pieces = _pieces(truth)
    size = truth["conditions"]["pebble_size"]
    on_piece = spread.Peak(*pieces[0], 0.9, CITIZENS[0])
    # a point of a citizen square at least three pieces from every piece
    xs, ys = np.meshgrid(np.linspace(0.2, 4.8, 47), np.linspace(0.2, 1.8, 17))
    grid = np.stack([xs.ravel(), ys.ravel()], axis=1)
    gap = np.min(np.linalg.norm(grid[:, None] - pieces[None], axis=2), axis=1)
    bare_xy = grid[int(np.argmax(gap))]
    assert gap.max() > 3 * size
    bare = spread.Peak(float(bare_xy[0]), float(bare_xy[1]), 0.9, CITIZENS[0])
    cover = spread.change_cover(
        spread.spread_changes(empty_board(7), image, outline), outline, [on_piece, bare]
    )
    assert cover.changed == (True, False)
    # the board against itself: nothing changed, nothing unexplained
    still = spread.change_cover(
        spread.spread_changes(image, image, outline), outline, [on_piece, bare]
    )
    assert still.changed == (False, False) and not any(still.extra)


def test_pieces_no_candidate_explains_show_as_extra_in_their_square() -> None:
    image, truth = spread_scene(3)
    outline = _outline_of(truth)
    before = empty_board(3)
    board = truth["board"]
    pieces = [p for p in truth["pieces"] if p["kind"] == "small"]
    # every piece a sure candidate but those of the fullest square: the change there
    # is its pieces' worth, elsewhere about nothing
    full = max(CITIZENS, key=lambda sq: board[sq])
    found = [
        spread.Peak(*p["position"], 0.9, REGION_NAMES.index(p["region"]))
        for p in pieces
        if REGION_NAMES.index(p["region"]) != full
    ]
    cover = spread.change_cover(spread.spread_changes(before, image, outline), outline, found)
    assert all(cover.changed)
    assert abs(cover.extra[full] - board[full]) <= max(1.0, 0.25 * board[full])
    # elsewhere only crumbs: a shadow's rim, a blob of a piece by a line, counted beside
    rest = [sq for sq in CITIZENS if sq != full]
    assert sum(cover.extra[sq] for sq in rest) < 0.1 * sum(board[sq] for sq in rest)
    per = spread.per_square_cover(found, cover.changed)
    assert [len(t) for t in per] == [len(s) for s in spread.per_square(found)]


def test_the_pair_input_is_the_spread_and_what_changed_since_the_empty_board() -> None:
    image, truth = spread_scene(3)
    hom = homography_from_corners(np.array(truth["corners"]))
    now, before = spread.rectify(image, hom), spread.rectify(empty_board(3), hom)
    blob = spread.pair_blob(now, before)
    assert blob.shape == (1, 6, *now.shape[:2])
    assert np.array_equal(blob[:, :3], spread.detect.prepare(now))
    # the board against itself has changed nowhere; against its empty board, where the
    # pieces lie far more than on the bare ground between them
    assert not spread.pair_blob(now, now)[:, 3:].any()
    _, _, a = spread.canvas()
    pts = np.round(_pieces(truth) @ a[:2, :2].T + a[:2, 2]).astype(int)
    change = np.abs(blob[0, 3:]).sum(axis=0)
    at_pieces = float(np.median(change[pts[:, 1], pts[:, 0]]))
    assert at_pieces > 4 * float(np.median(change))


def test_thinning_keeps_the_higher_of_one_pieces_two_peaks_and_touching_neighbours() -> None:
    piece = 0.15
    found = [
        spread.Peak(1.50, 0.50, 0.9, 2),
        spread.Peak(1.53, 0.52, 0.6, 2),  # the same piece's second peak
        spread.Peak(1.50 + piece, 0.50, 0.8, 2),  # a neighbour touching it
        spread.Peak(3.20, 1.50, 0.4, 9),
        spread.Peak(3.17, 1.49, 0.7, 9),  # (the higher one comes later)
    ]
    assert spread.thin(found, spread.THIN * piece) == [True, False, True, False, True]
    assert all(spread.thin(found, 0.0))


def test_a_candidate_is_crowded_only_by_a_higher_one_within_reach() -> None:
    piece = 0.15
    found = [
        spread.Peak(1.50, 0.50, 0.9, 2),
        spread.Peak(1.50 + 0.5 * piece, 0.50, 0.6, 2),  # half a width from a higher one
        spread.Peak(1.50 + 1.2 * piece, 0.50, 0.8, 2),  # a neighbour a width off
        spread.Peak(3.20, 1.50, 0.4, 9),  # alone
    ]
    reach = spread.NEAR * piece
    assert spread.crowded(found, reach) == [False, True, False, False]
    assert not any(spread.crowded(found, 0.0))


def test_the_empty_board_tells_the_width_of_the_scenes_pieces() -> None:
    image, truth = spread_scene(3)
    found = [
        spread.Peak(*p["position"], 0.9, REGION_NAMES.index(p["region"]))
        for p in truth["pieces"]
        if p["kind"] == "small"
    ]
    cover = spread.change_cover(
        spread.spread_changes(empty_board(3), image, _outline_of(truth)), _outline_of(truth), found
    )
    size = truth["conditions"]["pebble_size"]
    assert cover.piece is not None and size <= cover.piece <= 1.8 * size  # shadow and blur
    # no sure candidate alone in a blob: no width to tell
    assert (
        spread.change_cover(
            spread.spread_changes(empty_board(3), image, _outline_of(truth)), _outline_of(truth), []
        ).piece
        is None
    )
