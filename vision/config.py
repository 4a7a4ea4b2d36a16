"""Frozen configuration for each vision stage, loadable from a TOML table.

Every stage reads only its own section, so a stage can be tested and tuned in
isolation; unknown keys are errors because a typo silently ignored is a
mis-tuned referee.
"""

from __future__ import annotations

import dataclasses
import enum
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vision.errors import ConfigError
from vision.lens import Lens

#: The networks shipped with the package (trained by bench/train_counter.py and train_bigstone.py).
MODELS = Path(__file__).resolve().parent / "models"


class Finder(enum.Enum):
    """Which evidence the board search fits its template to (``LocateConfig.finder``)."""

    CLASSICAL = "classical"  # Hessian chalk ridges of the image itself
    LEARNED = "learned"  # the board-line network's probability map (``line_model``)


@dataclass(frozen=True)
class LocateConfig:
    """Board localisation (chalk-template fit)."""

    work_width: int = 480  # px; localisation runs on a downscaled copy
    ridge_sigmas: tuple[float, ...] = (1.5, 2.5)  # px at work scale
    edge_suppress: float = 1.0  # minus this x scale-normalised gradient: no ridges beside edges
    ridge_threshold: float = 4.0  # binarisation of the ridge map, in noise units
    hough_threshold_frac: float = 0.05  # min Hough votes as a fraction of work width
    max_lines: int = 28
    max_long_lines: int = 12
    max_short_lines: int = 16
    polarities: tuple[int, ...] = (0,)  # ridge maps tried: 1 light, -1 dark, 0 either
    accept_quality: float = 0.6  # stop trying polarities once a fit is this good
    max_directions: int = 4  # orientation peaks tried as line families
    max_quads: int = 60  # best global-Hough line quadruples per direction pair (0 = strips only)
    max_strips: int = 10  # long-line pairs searched for dividers (0 = global Hough only)
    # ... and only when the fit from the global Hough lines alone scores below this (1 or
    # more: always, searched together with them). Every value from 0.7 to 0.85 found as many
    # boards within 3% as "always" on the validation renders no network trained on (train-v4
    # 19/20, train-large-v4 428-499: 206 against 204; with train-v4 2,700+, which the finder
    # did train on, 565 against 563), and a board that clear skips ~20 ms of strips
    strips_below: float = 0.75
    strip_lines: int = 7  # strongest lines per family paired into strips
    strip_rows: int = 16  # canvas rows across a strip
    strip_max_shear: float = 3.0  # divider slant in the strip canvas, strip half-heights
    strip_shear_step: float = 1.5  # canvas px between tried divider slants
    strip_dividers: int = 8  # dividers kept per strip
    strip_min_support: float = 0.25  # mean evidence along a divider
    # strips re-searched at every slant after a pass at every other slant (0 = all): twice
    # max_strips, so the coarse ranking only has to put the best 10 in its first 20
    strip_prescreen: int = 20
    min_board_frac: float = 0.18  # board length / image width, lower bound
    max_aspect: float = 2.2  # allowed image aspect of a square (foreshortening)
    # opposite sides of a fit may differ this much in length (perspective): our renders
    # reach 2.1, slivers of joints fitted on brick 5-20 (``vision.geometry.side_ratio``)
    max_side_ratio: float = 3.5
    # ... and may be this far from a 5 x 2 board seen by a pinhole camera (the cosine of the
    # angle between its axes, or the log of their lengths' ratio; ``vision.geometry.shape_error``):
    # right fits of our renders reach 0.3, rectangles of joints or of the wrong squares 0.8
    max_shape_error: float = 0.5
    arc_depth: float = 0.95  # semicircle depth in square sides
    prescreen_keep: int = 400  # hypotheses kept after the sparse first scoring pass
    # template point spacing of that pass, squares: 0.75 ranks as 0.5 did (same fits on
    # render-public and synth, only failures differ) with 61 points instead of 97
    prescreen_step: float = 0.75
    # ... after a cheaper pass still, the same points on the direction-free channel, has
    # kept this many (0: no such pass). 2,500 of ~17,000 kept the same 400 on 99.9% of them,
    # and the same boards, on 150 renders of the generator's training set; 8 ms less a frame
    prescreen_free_keep: int = 2500
    refine_candidates: int = 4
    refine_rounds: int = 30
    # rounds for every candidate before the leader gets refine_rounds; 6 keep the found and
    # within-3% figures of 10 on render-public and synth (the leader's rounds finish the fit)
    quick_rounds: int = 6
    # the best picks relabelled as part of a larger or shifted board that runs out of the
    # view (a board cut by the frame edge is fitted squeezed into it): this many of those
    # refined beside them (0: none; 3 found no more boards on the validation renders) ...
    relabelled: int = 2
    relabel_margin: float = 0.1  # ... scoring at least the best pick's less this
    # ... with at least the first and under the second share of their template in view:
    # relabelled boards wholly in view found 3 more of 1,080 validation renders but cost
    # 3 of 300 tally stills their exact count (a fit a few px off winning on a right board)
    relabel_view: tuple[float, float] = (0.45, 0.97)
    side_passes: tuple[float, ...] = (0.15, 0.06)  # full-res side search radii, squares
    side_tolerance: float = 0.05  # outline chalk support the side refinement may cost
    min_quality: float = 0.22  # below this the board is reported as not found
    # ... by the learned finder: its map fits a template to blank noise at 0.24-0.28, and no
    # right board of the generator's validation fold (train-v4, index % 20 == 19) scored
    # under 0.35 (training/finder/README.md)
    learned_min_quality: float = 0.30
    verify_drop: float = 0.6  # Locator re-locates when quality falls under drop*initial
    manual_corners: tuple[tuple[float, float], ...] | None = None  # SW, SE, NE, NW px
    seed: int = 0
    # the learned finder: tile joints, plank gaps and mat prints beat faint chalk in the
    # ridge maps; the network (training/finder) has learnt which lines belong to a board
    finder: Finder = Finder.LEARNED
    line_model: str = str(MODELS / "boardlines.onnx")  # board-line network (ONNX)


@dataclass(frozen=True)
class CountConfig:
    """Per-square pebble counting (learned density, ``vision.detect``) and big stones.

    Big-stone presence is the probability given by ``mandarin_big_model`` on the
    mandarin crops of ``vision.squares`` (or, set to "", by the ``vision.bigstone``
    network, whose crop must be the one it was trained on).
    """

    px_per_square: int = 80  # rectified square side; the shipped model was trained at 80
    max_count: int = 40  # probabilities are given for counts 0..max_count
    # count likelihood: a core of spread sqrt(base^2 + (rel*n)^2) plus a tail_weight share
    # tail_scale times wider; maximum likelihood on the 4-fold CV predictions of singles
    # (bench/train_counter.py --report), never on the sequences
    sigma_base: float = 0.6
    sigma_rel: float = 0.28
    tail_weight: float = 0.2
    tail_scale: float = 3.0
    max_gain_change: float = 0.1  # opening calibration may rescale counts by at most this
    model: str = str(MODELS / "counter.onnx")  # pebble-density network (ONNX)
    big_model: str = str(MODELS / "bigstone.onnx")  # big-stone classifier (ONNX)
    spread_model: str = str(MODELS / "spread.onnx")  # tally's piece detector (ONNX)
    # the same read against a photo of the empty board (spread and empty board in, one
    # input of six channels: ``vision.spread.pair_blob``); "" reads the spread alone
    spread_pair_model: str = str(MODELS / "spread_pair.onnx")
    # per-square count classifier (``vision.squares``) multiplied with the density's
    # distribution in every citizen square; "" counts by the density alone. Its softmax
    # temperature and the density's exponent in the product were set before any fit:
    # the renders' validation fold (bench/train_squares.py fit) prefers the classifier
    # alone by 0.08 nats, but is the training generator's and cannot show how either
    # holds on unseen kinds (training/counter/README.md); never tuned on render-public
    square_model: str = str(MODELS / "squares.onnx")
    mandarin_model: str = str(MODELS / "mandarins.onnx")  # the same for the two mandarins' pieces
    # big-stone presence from the mandarin crops of ``vision.squares`` (learnt on the
    # renders); "" asks ``big_model`` instead
    mandarin_big_model: str = str(MODELS / "bigstones.onnx")
    square_temperature: float = 1.0
    square_density_weight: float = 0.5
    big_crop_x1: float = 0.25  # big-stone crop east edge, board units: mandarin + a bit of square 1


@dataclass(frozen=True)
class GateConfig:
    """Frame gating: is this frame fit to count?"""

    work_width: int = 320
    motion_threshold: float = 7.0  # mean abs grey difference to the previous frame
    dark_mean: float = 35.0
    bright_mean: float = 225.0
    clipped_frac: float = 0.25  # share of pixels at 0/255 that makes exposure bad
    skin_frac: float = 0.015  # share of the board covered by a skin blob that is not the floor
    # A folder of stills may show a hand held still over part of the board; the
    # squares it covers are hidden and the rest counted (``read_board(partial=)``).
    partial_max_skin: float = 0.3  # beyond this share of the board, nothing is counted
    hand_margin: float = 0.25  # squares the arm mask is grown by (fingers, shadow)
    hidden_share: float = 0.02  # a region this much under the grown arm is hidden
    empty_std: float = 2.0  # a frame with less grey spread than this is empty


@dataclass(frozen=True)
class ChangeConfig:
    """Change since the last confirmed frame and since the frame before (``vision.change``)."""

    thumb_width: int = 160  # px; frames are compared with the one before on a grey copy this wide
    new_scene: float = 6.0  # mean grey-level change (0-255) from which a frame is a new scene
    changed_pebbles: float = 0.25  # a square changed when this share of a pebble's area differs
    pixel_step: int = 12  # grey levels a pixel must differ by (each square's brightness matched)
    pebble_share: float = 0.15  # pebble diameter / square side (the synthetic and rendered boards)
    # An arm or a person's shadow: a changed blob that reaches onto the board from
    # beyond it. Colour-free, so it works on terracotta and wood, where skin tests fail.
    intrusion_step: int = 10  # grey levels (brightness matched) a pixel must differ by
    intrusion_reach: float = 0.5  # squares beyond the board the blob must extend to
    intrusion_min: float = 0.02  # share of a region under the (grown) blob to call it hidden
    # How much of each square changed, in pebble areas (the ``area`` of ``vision.change.square_changes``):
    # measured on the board rectified to ``area_px`` per square side, each pixel compared
    # with its reference neighbourhood (pieces nudged a pixel, a camera shaken a little).
    # At 80 a piece a seventeenth of a square wide (shells, beans on a big board) is 5 px,
    # and the neighbourhood swallowed all but its core: a pile of five taken away showed
    # as much as one piece dropped. 160 sees it (and costs ~30 ms of one core a frame)
    area_px: int = 160
    #: a square an arm partly hides is still measured when this share of it is clear
    seen_least: float = 0.6
    area_step: float = 14.0  # colour levels (each square's light matched) a pixel must differ by
    # ... or this share of the reference's brightness there, where that is less (a pebble in
    # a shadow differs from the ground by fewer levels), but never fewer than area_least
    area_rel: float = 0.1
    area_least: float = 5.0
    # ... or by this many levels in either opponent colour (red-green, yellow-blue), where
    # brightness says nothing: beige shells on grey gravel, whose light and dark grains
    # span every channel's range but none of their colour. 0 turns the test off
    area_chroma: float = 12.0
    max_shift: float = 4.0  # camera shake taken out before comparing: px of an 80 px square
    # changed blobs narrower than this (pebble diameters) are dropped: the rim a shadow
    # leaves when the sun moves, the crescents of a pebble nudged a pixel or two. Never
    # under 2 px; more (0.3) erased whole pieces a twelfth of a square wide (shells, beans)
    min_width: float = 0.15


@dataclass(frozen=True)
class VisionConfig:
    """All vision settings, one frozen section per stage."""

    locate: LocateConfig = field(default_factory=LocateConfig)
    count: CountConfig = field(default_factory=CountConfig)
    gate: GateConfig = field(default_factory=GateConfig)
    change: ChangeConfig = field(default_factory=ChangeConfig)
    #: the camera's lens distortion, undone on every frame first (``vision.lens``)
    lens: Lens = field(default_factory=Lens)


_SECTIONS: dict[str, type[Any]] = {
    "locate": LocateConfig,
    "count": CountConfig,
    "gate": GateConfig,
    "change": ChangeConfig,
    "lens": Lens,
}


#: files a stage can do without: "" turns them off
_OPTIONAL_FILES = frozenset({"square_model", "mandarin_model", "mandarin_big_model"})
#: numbers that divide: zero or below has no meaning
_POSITIVE = frozenset({"square_temperature"})


def _coerce(section: str, key: str, default: Any, value: Any) -> Any:
    """Convert a TOML value to the type of the default, or fail naming the key."""
    where = f"vision config: [{section}] {key}"
    if key in _OPTIONAL_FILES and value == "":
        return value
    if key in _POSITIVE and (
        isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
    ):
        raise ConfigError(f"{where} must be a number above 0, got {value!r}")
    if isinstance(default, str):
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where} must be a non-empty string, got {value!r}")
        return value
    if isinstance(default, enum.Enum):
        names = [m.value for m in type(default)]
        if value not in names:
            raise ConfigError(f"{where} must be one of {', '.join(names)}, got {value!r}")
        return type(default)(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if isinstance(default, int) and not isinstance(value, bool) and isinstance(value, int):
        return value
    if isinstance(default, float) or (default is None and isinstance(value, int | float)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where} must be a number, got {value!r}")
        return float(value)
    if isinstance(default, tuple) and isinstance(value, list):
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return tuple(float(v) for v in value)
        raise ConfigError(f"{where} must be a list of numbers, got {value!r}")
    if key == "manual_corners":
        return _corners(where, value)
    raise ConfigError(f"{where} has the wrong type: {value!r}")


def _corners(where: str, value: Any) -> tuple[tuple[float, float], ...]:
    ok = isinstance(value, list) and len(value) == 4
    ok = ok and all(
        isinstance(p, list)
        and len(p) == 2
        and all(isinstance(c, int | float) and not isinstance(c, bool) for c in p)
        for p in value
    )
    if not ok:
        raise ConfigError(f"{where} must be four [x, y] pairs (SW, SE, NE, NW), got {value!r}")
    return tuple((float(p[0]), float(p[1])) for p in value)


def config_from_dict(data: dict[str, Any]) -> VisionConfig:
    """Build a config from a TOML-like dict ``{"locate": {...}, ...}``.

    A top-level ``vision`` table is accepted too, so the project's single TOML
    file can be passed as it is.
    """
    if set(data) == {"vision"} and isinstance(data["vision"], dict):
        data = data["vision"]
    sections: dict[str, Any] = {}
    for name, body in data.items():
        if name not in _SECTIONS:
            raise ConfigError(f"vision config: unknown section [{name}]")
        if not isinstance(body, dict):
            raise ConfigError(f"vision config: [{name}] must be a table")
        cls = _SECTIONS[name]
        defaults = cls()
        known = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, value in body.items():
            if key not in known:
                raise ConfigError(f"vision config: unknown key [{name}] {key}")
            values[key] = _coerce(name, key, getattr(defaults, key), value)
        sections[name] = cls(**values)
    lens = sections.get("lens")
    if lens is not None and lens.problem() is not None:
        raise ConfigError(f"vision config: [lens] {lens.problem()}")
    return VisionConfig(**sections)


def load_config(path: str | Path) -> VisionConfig:
    """Read a TOML file; ``manual_corners`` may also come from a calibrate file."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"vision config: cannot read {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"vision config: {path} is not valid TOML: {exc}") from exc
    return config_from_dict(data)
