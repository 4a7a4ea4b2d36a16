"""How well the camera tally counts single-layer spreads, and how long a still takes.

    python bench/tally.py --fit --scenes 300 --timing 15   # fit on seeds 0.., measure on 10000..
    python bench/tally.py --scenes 300                     # measure with the shipped model
    python bench/tally.py --unseen --scenes 300            # brick ground and shells only
    python bench/tally.py --classic --fit                  # the narrow scenes of the first bench
    python bench/tally.py --model other.onnx --fit         # another piece detector, refitted
    python bench/tally.py --write-frames DIR               # the bundled demo frames
    python bench/tally.py --first-seed 30000               # confirm on seeds no decision saw
    python bench/tally.py --respread 2                     # and after the guided respread,
                                                           # then the lit squares by hand
    python bench/tally.py --empty --fit                    # against the empty board's photo

A scene is one player's pieces, 10-70 small ones, spread by hand in one layer
over the ten citizen squares (apart or touching, never stacked), with 0-2 big
stones on the quan squares: what tally mode asks the players to lay out.
``vision.synth_spread`` draws them on the wide generator's 14 grounds, 6 piece
kinds, light and camera range, pieces 0.065-0.2 of a square. ``--classic``
draws the first bench's scenes instead: ``vision.synth``'s 5 grounds, grey
pebbles of 0.12-0.18 a square, never touching.

``--empty`` counts each spread against a photo of the same board before it, cleared
(``vision.synth_spread.empty_board``: the light drifted, fresh sensor noise), as tally mode
does when it opens over the cleared board; ``--fit`` then fits that model's tables.

``--respread ROUNDS`` follows the screen's loop too: the players lay the lit (unsure)
squares out again apart (``spread_scene(respread=...)``, every other piece where it lay)
and count again, until no lit square is left that was not laid out already; then the
players count the squares still lit by hand (``▶`` on the count screen), the camera the
rest: how exact that makes the total, and how many squares and pieces it asks of them.

Two paths are measured, as the product has them. Live: the board as the fixed camera
knew it from the game (the true corners with a good fit's error, ``given_outline``).
Stills (``oanquan tally IMAGE``): the board located in the still; a board whose
evidence is weak (``board_trust``) is answered as not found, so the figures say how
many stills were answered and what the answered ones came to.

``--fit`` fits the board trust on the fitting seeds' stills, then the interval model
(``fit_spread_model``) on their live readings and trusted stills together, and the
big-stone call (``fit_big_call``) on their quan squares; the shipped constants in
``companion/referee/tally.py`` are what it prints. The readings take a stone's peak
out of the pieces by the shipped call, so a new ``FITTED_BIG`` (``FITTED_BIG_EMPTY``
with ``--empty``: the pair detector's stone peaks) goes in first and ``--fit`` runs
again for the rest (the cache tag includes it). Fitting uses
seeds 0.., measuring seeds 10000..; the spread detector was trained on seeds
1,000,000.. (bench/train_spread.py): never the same scenes. Scenes and readings are
cached under ``~/.cache/oanquan/tally-v2/``. Prints exact totals, true totals inside
the stated interval, mean and median interval width, per ground, piece kind, light,
touching share and faintest pieces, and the median time of ``tally_image`` on a still
(decode, locate, count, maths) in wall and CPU time, one thread, and the live path's.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import cv2
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.train_spread import SEED0 as TRAIN_SEEDS  # the detector's training scenes
from companion.appliance.memory import keep_freed_memory
from companion.referee.tally import (
    FITTED_TRUST,
    TRUST_MIN,
    BoardEvidence,
    SpreadModel,
    SpreadSquare,
    Tally,
    big_call,
    board_trust,
    count_spread,
    fit_big_call,
    fit_board_trust,
    fit_doubt,
    fit_spread_model,
)
from vision.config import LocateConfig, VisionConfig
from vision.synth import HELD_OUT_GROUND, HELD_OUT_PIECE, PIECE_FAMILIES, WIDE_GROUNDS

CACHE = Path(os.environ.get("OANQUAN_CACHE", Path.home() / ".cache" / "oanquan")) / "tally-v2"
CITIZENS = (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)
FIT_SEEDS = 0  # fitting uses seeds FIT_SEEDS.., evaluation EVAL_SEEDS..: never the same scenes
EVAL_SEEDS = 10_000
FIT_SCENES = 600  # fitting seeds read by --fit
#: the unseen kinds' scenes (``--unseen``): brick ground and shells, never in training
UNSEEN_SEEDS = 20_000
#: Bumped when ``read_spread`` changes what it reports (the cached readings go stale).
READING_VERSION = "r4-onelook"
#: Bumped when the board search (``vision.locate``) changes what it finds: the cached
#: located boards go stale (its settings and network are hashed with it).
SEARCH_VERSION = "s31-out-of-view"
#: Bumped when readings against the empty board change what they hold (``--empty``):
#: ``vision.spread.change_cover``, the pair detector's second reading (``alone``), its
#: candidates thinned (``vision.spread.thin``), the canvas scale chosen by the pieces'
#: width (``vision.spread.scale_for``), candidates with a higher one near
#: (``vision.spread.crowded``).
EMPTY_VERSION = "empty9"
#: Corner error (px) beyond which a scene counts as located wrong (for the split figures).
LOCATED_PX = 20.0


# ---------------------------------------------------------------- scenes


def _classic_place(rng: np.random.Generator, poly: Any, n: int, size: float, *_: Any) -> Any:
    """The first bench's layout: random points at least 1.2 pebbles apart, never touching."""
    x0, y0 = poly.min(axis=0)
    x1, y1 = poly.max(axis=0)
    margin, gap = 0.6 * size, 1.2 * size
    out: list[NDArray[np.float64]] = []
    tries = 0
    while len(out) < n and tries < 20000:
        tries += 1
        p = np.array([rng.uniform(x0 + margin, x1 - margin), rng.uniform(y0 + margin, y1 - margin)])
        if all(np.hypot(*(p - q)) >= gap for q in out):
            out.append(p)
    if len(out) < n:
        raise ValueError(f"{n} pebbles do not fit in one layer")
    return np.array(out).reshape(-1, 2)


def classic_scene(
    seed: int, size: tuple[int, int] = (1280, 960)
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """The first bench's scene: ``vision.synth``'s classic conditions, pebbles apart."""
    from vision.synth import render_scene
    from vision.synth_spread import light_kind, spread_counts

    rng = np.random.default_rng([seed, 16])
    board = spread_counts(rng, int(rng.integers(10, 71)))
    nbig = int(rng.choice(3, p=[0.5, 0.3, 0.2]))
    big = ((1, 0), (0, 1))[int(rng.integers(2))] if nbig == 1 else (nbig // 2, nbig // 2)
    image, truth = render_scene(board, big, seed, size=size, placer=_classic_place)
    from vision.synth import SceneConditions

    fields = SceneConditions.__dataclass_fields__
    cond = SceneConditions(**{k: v for k, v in truth["conditions"].items() if k in fields})
    truth.update(board=board, big=list(big), touch=0.0, light=light_kind(cond))
    return image, truth


def unseen_kinds(seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The grounds and piece kinds of unseen scene ``seed``: by turns the brick ground
    (any pieces), shells (on any ground the detector saw) and shells on brick."""
    seen_grounds = tuple(g for g in WIDE_GROUNDS if g != HELD_OUT_GROUND)
    return (
        ((HELD_OUT_GROUND,), PIECE_FAMILIES),
        (seen_grounds, (HELD_OUT_PIECE,)),
        ((HELD_OUT_GROUND,), (HELD_OUT_PIECE,)),
    )[seed % 3]


def _respread_tag(respread: tuple[int, ...]) -> str:
    """The file-name part that tells a scene whose ``respread`` squares were laid out again."""
    return "_r" + "-".join(str(sq) for sq in sorted(respread)) if respread else ""


def _cached_png(path: Path) -> NDArray[np.uint8] | None:
    """A scene rendered before (None: not yet, or unreadable: render it again)."""
    image = cv2.imread(str(path)) if path.is_file() else None
    return None if image is None else np.asarray(image, dtype=np.uint8)


def kinds_of(seed: int, kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The grounds and piece kinds scene ``seed`` of set ``kind`` (not "classic") draws from."""
    return unseen_kinds(seed) if kind == "unseen" else (WIDE_GROUNDS, PIECE_FAMILIES)


def scene(
    seed: int, kind: str, respread: tuple[int, ...] = (), root: Path = CACHE
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """Scene ``seed`` of set ``kind`` (image, truth), rendered once and cached as PNG and JSON
    under ``root``; ``respread``: with those squares' pieces laid out again apart
    (``spread_scene``)."""
    folder = root / kind
    name = f"scene_{seed}{_respread_tag(respread)}"
    png, js = folder / f"{name}.png", folder / f"{name}.json"
    image = _cached_png(png) if js.is_file() else None
    if image is not None:
        cached: dict[str, Any] = json.loads(js.read_text())
        return image, cached
    if kind == "classic":
        if respread:
            raise ValueError("the classic scenes are never respread")
        image, truth = classic_scene(seed)
    else:
        from vision.synth_spread import spread_scene

        grounds, pieces = kinds_of(seed, kind)
        image, truth = spread_scene(seed, grounds=grounds, pieces=pieces, respread=respread)
    cond = truth["conditions"]
    keep = {
        "seed": seed,
        "board": truth["board"],
        "big": truth["big"],
        "corners": truth["corners"],
        "arc_depth": cond["arc_depth"],
        "ground": cond["ground"],
        "pieces": cond["pieces"],
        "light": truth["light"],
        "touch": truth["touch"],
        "piece_size": cond["pebble_size"],
        "small": [p["position"] for p in truth["pieces"] if p["kind"] == "small"],
    }
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(png), image)
    js.write_text(json.dumps(keep))
    return image, keep


# ---------------------------------------------------------------- readings


def empty_scene(seed: int, kind: str, root: Path = CACHE) -> NDArray[np.uint8]:
    """Scene ``seed``'s photo of the empty board before the spread (``--empty``), cached
    under ``root``."""
    if kind == "classic":
        raise ValueError("the classic scenes have no photo of the empty board")
    path = root / kind / f"scene_{seed}_empty.png"
    cached = _cached_png(path)
    if cached is not None:
        return cached
    from vision.synth_spread import empty_board

    grounds, pieces = kinds_of(seed, kind)
    image = empty_board(seed, grounds=grounds, pieces=pieces)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), image)
    return image


def with_detector(model: Path, pair: str) -> VisionConfig:
    """The shipped vision settings with ``model`` as the tally's piece detector and
    ``pair`` ("" for none) as the one read against the empty board."""
    count = replace(VisionConfig().count, spread_model=str(model), spread_pair_model=pair)
    return VisionConfig(count=count)


def _paired(config: VisionConfig, empty: bool) -> bool:
    """Whether the readings are the pair detector's, the spread read with its empty board
    (``read_spread``): their big-stone call is ``big_call(paired=True)``."""
    return empty and bool(config.count.spread_pair_model)


def _model_tag(config: VisionConfig, empty: bool = False) -> str:
    """Readings depend on the networks read and the big-stone call's weights (a stone
    takes its peak out of the pieces): a short hash of them; ``empty``: readings against
    the empty board, which the pair detector reads too."""
    h = hashlib.sha1(READING_VERSION.encode())
    h.update(repr(big_call(_paired(config, empty))).encode())
    for path in (
        config.count.spread_model,
        config.count.model,
        config.count.big_model,
        config.count.mandarin_big_model,
        config.count.spread_pair_model if empty else "",
    ):
        if path:  # ("" turns an optional network off)
            h.update(Path(path).read_bytes())
    h.update(_finder_tag(config.locate).encode())  # (stills locate their board)
    return h.hexdigest()[:10]


def contrast(image: NDArray[np.uint8], truth: dict[str, Any]) -> float:
    """How well the faintest pieces stand out: the 10th percentile over pieces of the Lab
    distance between
    a piece's middle and the ground around it (on the board rectified with the true
    corners)."""
    from vision import spread
    from vision.geometry import homography_from_corners

    rect = spread.rectify(image, homography_from_corners(np.array(truth["corners"])))
    lab = cv2.cvtColor(rect, cv2.COLOR_BGR2Lab).astype(np.float32)
    _, _, a = spread.canvas()
    r = truth["piece_size"] * spread.PX / 2
    ys, xs = np.mgrid[0 : lab.shape[0], 0 : lab.shape[1]]
    out = []
    for bx, by in truth["small"]:
        cx, cy = a[0, 0] * bx + a[0, 2], a[1, 1] * by + a[1, 2]
        d = np.hypot(xs - cx, ys - cy)
        inner, ring = lab[d <= 0.5 * r], lab[(d >= 1.6 * r) & (d <= 2.4 * r)]
        if len(inner) and len(ring):
            out.append(float(np.linalg.norm(inner.mean(axis=0) - np.median(ring, axis=0))))
    return float(np.percentile(out, 10)) if out else 0.0


@functools.cache
def _finder_tag(cfg: LocateConfig) -> str:
    """A located board depends on the search, its settings and its network: a short
    hash (once per configuration: ``located`` asks for every scene)."""
    h = hashlib.sha1(f"{SEARCH_VERSION} {cfg!r}".encode())
    h.update(Path(cfg.line_model).read_bytes())
    return h.hexdigest()[:8]


def located(seed: int, kind: str, respread: tuple[int, ...] = ()) -> Any:
    """The board as ``read_spread`` would locate it in scene ``seed`` (cached: corners,
    arc depth, quality), or the reason it is not found."""
    from vision.errors import BoardNotFoundError
    from vision.locate import locate_board, outline_from_corners

    cfg = VisionConfig().locate
    path = CACHE / kind / f"located_{seed}{_respread_tag(respread)}_{_finder_tag(cfg)}.json"
    if not path.is_file():
        image, _ = scene(seed, kind, respread)
        try:
            o = locate_board(image, cfg, np.random.default_rng(cfg.seed))
            rec: dict[str, Any] = {
                "corners": o.corners.tolist(),
                "depth": o.arc_depth,
                "quality": o.quality,
            }
        except BoardNotFoundError as exc:
            rec = {"reason": exc.reason or "board not found"}
        path.write_text(json.dumps(rec))
    rec = json.loads(path.read_text())
    if "corners" not in rec:
        return str(rec["reason"])
    return outline_from_corners(np.array(rec["corners"]), rec["depth"], rec["quality"])


def given_outline(truth: dict[str, Any]) -> Any:
    """The board as the fixed camera knew it from the game: the true corners with the
    error of a good fit (2 px per coordinate, 0.03 of arc depth; a located-right fit on
    these scenes is off by 1.6 px per corner in the median)."""
    from vision.locate import outline_from_corners

    rng = np.random.default_rng([int(truth["seed"]), 99])
    corners = np.array(truth["corners"]) + rng.normal(0.0, 2.0, (4, 2))
    depth = float(truth["arc_depth"]) + float(rng.normal(0.0, 0.03))
    return outline_from_corners(corners, depth, 1.0)


def reading_of(
    seed: int,
    kind: str,
    config: VisionConfig,
    tag: str,
    given: bool = False,
    respread: tuple[int, ...] = (),
    empty: bool = False,
    root: Path = CACHE,
    single: bool = False,
) -> dict[str, Any]:
    """Scene ``seed``'s reading (every square's evidence) with its truth: on the board
    located in the still, or (``given``) on the board the game already knew; ``tag``
    names ``config``'s networks in the cache; ``respread``: after those squares were
    laid out again; ``empty``: against the photo of the empty board (``empty_scene``);
    ``root``: the cache its scenes and readings are kept in (a still's board search
    keeps to the bench's own); ``single``: the scene's photos are means of frames, and
    ``scene_{seed}[_rN-M]_one.png`` (with ``scene_{seed}_one_empty.png``) one frame of
    each, which the big stones are called on (``read_spread``'s ``single``)."""
    folder = root / kind
    where = ("given" if given else "located") + (f"_{EMPTY_VERSION}" if empty else "")
    path = folder / f"reading_{seed}{_respread_tag(respread)}_{where}_{tag}.json"
    if path.is_file():
        cached: dict[str, Any] = json.loads(path.read_text())
        return cached
    from companion.commands.tally import SpreadReading, read_spread

    image, truth = scene(seed, kind, respread, root)
    outline = given_outline(truth) if given else located(seed, kind, respread)
    if isinstance(outline, str):
        reading = SpreadReading(False, reason=outline)
    else:
        before = empty_scene(seed, kind, root) if empty else None
        one = None
        if single:
            name = f"scene_{seed}{_respread_tag(respread)}_one.png"
            spread_one = _cached_png(folder / name)
            if spread_one is None:
                raise FileNotFoundError(f"scene {seed}: no {name} in {folder}")
            one = (spread_one, _cached_png(folder / f"scene_{seed}_one_empty.png"))
        reading = read_spread(image, config, outline=outline, empty=before, single=one)
    corner_err = None
    if reading.found:
        corner_err = float(np.abs(reading.corners - np.array(truth["corners"])).max())
    record: dict[str, Any] = {
        **{k: v for k, v in truth.items() if k != "small"},
        "found": reading.found,
        "reason": reading.reason,
        "quality": reading.quality,
        "corner_err_px": corner_err,
        "squares": [
            [s.peaks, round(s.mass, 4), round(s.big_prob, 4), [round(v, 4) for v in s.scores]]
            for s in reading.squares
        ],
        "changed": [list(s.changed) for s in reading.squares] if empty else None,
        "extra": [s.extra for s in reading.squares] if empty else None,
        "alone": [s.alone for s in reading.squares] if empty else None,
        "near": [list(s.near) for s in reading.squares] if empty else None,
        "outside": reading.outside,
        "inside_share": round(reading.inside_share, 4),
        "big_heat": [round(v, 4) for v in reading.big_heat],
        "big_net": [round(v, 4) for v in reading.big_net],
        "on_lines": round(reading.on_lines, 4),
        "candidates": [
            [round(c.x, 3), round(c.y, 3), round(c.score, 3), c.square] for c in reading.candidates
        ],
        "contrast": round(contrast(image, truth), 1),
        "respread": list(respread),
    }
    path.write_text(json.dumps(record))
    return record


def squares_of(record: dict[str, Any]) -> list[SpreadSquare]:
    squares = [
        SpreadSquare(int(n), float(m), float(b), tuple(float(v) for v in sc))
        for n, m, b, sc in record["squares"]
    ]
    if record.get("extra") is None or not squares:  # (no board: no squares)
        return squares
    alone = record.get("alone") or [None] * len(squares)
    near = record.get("near") or [()] * len(squares)
    return [
        replace(
            sq,
            changed=tuple(bool(c) for c in on),
            extra=e,
            alone=None if own is None else tuple(float(v) for v in own),
            near=tuple(bool(c) for c in close),
        )
        for sq, on, e, own, close in zip(
            squares, record["changed"], record["extra"], alone, near, strict=True
        )
    ]


def located_right(record: dict[str, Any]) -> bool:
    return bool(record["found"]) and (record["corner_err_px"] or 1e9) < LOCATED_PX


def guided(
    seed: int,
    kind: str,
    config: VisionConfig,
    tag: str,
    model: SpreadModel,
    rounds: int,
    given: bool = False,
    answered: Callable[[dict[str, Any]], bool] = lambda r: bool(r["found"]),
    empty: bool = False,
) -> tuple[dict[str, Any], list[int]]:
    """Scene ``seed`` read as tally mode guides the players (``follow_lit``), each layout
    its cached photo."""
    return follow_lit(
        reading_of(seed, kind, config, tag, given, empty=empty),
        lambda laid: reading_of(seed, kind, config, tag, given, laid, empty),
        model,
        rounds,
        answered,
    )


def follow_lit(
    record: dict[str, Any],
    read: Callable[[tuple[int, ...]], dict[str, Any]],
    model: SpreadModel,
    rounds: int,
    answered: Callable[[dict[str, Any]], bool] = lambda r: bool(r["found"]),
) -> tuple[dict[str, Any], list[int]]:
    """The screen's loop from the first reading ``record``: while it lights unsure squares
    that were not yet spread out again, the players lay those out apart and the scene is
    read again (``read(squares laid out so far)``), up to ``rounds`` times (the truth never
    decides: only the lit squares do). The last reading, and how many squares each round
    lit."""
    spread: set[int] = set()
    lit: list[int] = []
    for _ in range(rounds):
        if not answered(record):
            break  # (a still with no board answered: the players are told so, not guided)
        unsure = set(count_spread(squares_of(record), model, outside=record["outside"]).unsure)
        if unsure <= spread:  # nothing lit the players can spread more
            break
        spread |= unsure
        lit.append(len(unsure))
        record = read(tuple(sorted(spread)))
    return record, lit


def guided_figures(
    results: list[tuple[dict[str, Any], list[int]]], figures: dict[str, Any]
) -> dict[str, Any]:
    """``figures`` of the last readings, with how often and how much the players respread."""
    asked = [lit for _, lit in results if lit]
    return {
        "scenes respread at least once": len(asked),
        "rounds, mean over those": round(statistics.mean(len(x) for x in asked), 2) if asked else 0,
        "squares lit in the first round, mean": (
            round(statistics.mean(x[0] for x in asked), 2) if asked else 0
        ),
        # (what the players are asked to lay out again, every round, over every scene)
        "squares lit a scene, all rounds": (
            round(sum(sum(lit) for _, lit in results) / len(results), 2) if results else 0
        ),
        **figures,
    }


def by_hand(records: list[dict[str, Any]], model: SpreadModel) -> dict[str, Any]:
    """The screen's last step (``count_spread(known=)``): the players count the squares
    still lit by hand (the truth stands for their count), and the camera the rest."""
    tallies: list[tuple[Tally, int]] = []
    squares, pieces = [], []
    for r in records:
        squares_now = squares_of(r)
        t = count_spread(squares_now, model, outside=r["outside"])
        known = {sq: int(r["board"][sq]) for sq in t.unsure}
        if known:
            t = count_spread(squares_now, model, outside=r["outside"], known=known)
        tallies.append((t, sum(r["board"])))
        squares.append(len(known))
        pieces.append(sum(known.values()))
    return {
        **_held(tallies),
        "scenes with a square counted by hand": sum(n > 0 for n in squares),
        "squares counted by hand a scene, mean": (
            round(statistics.mean(squares), 2) if squares else 0
        ),
        "pieces counted by hand a scene, mean": (
            round(statistics.mean(pieces), 1) if pieces else 0
        ),
        "pieces a scene, mean": (
            round(statistics.mean(truth for _, truth in tallies), 1) if tallies else 0
        ),
    }


# ---------------------------------------------------------------- figures


def _held(tallies: list[tuple[Tally, int]]) -> dict[str, Any]:
    """How often the total was exact and the interval held the truth, and how wide it
    was, over (tally, true total) pairs."""
    n = max(len(tallies), 1)
    widths = [t.high - t.low for t, _ in tallies]
    return {
        "scenes": len(tallies),
        "exact_total": round(sum(t.total == truth for t, truth in tallies) / n, 4),
        "in_interval": round(sum(t.low <= truth <= t.high for t, truth in tallies) / n, 4),
        "mean_width": round(statistics.mean(widths), 2) if widths else None,
    }


def _scores(records: list[dict[str, Any]], model: SpreadModel) -> dict[str, Any]:
    tallies = [
        (count_spread(squares_of(r), model, outside=r["outside"]), sum(r["board"])) for r in records
    ]
    bigs_ok = sum(
        (t.bigs[0], t.bigs[6]) == tuple(r["big"])
        for (t, _), r in zip(tallies, records, strict=True)
    )
    misses = [
        f"{r['seed']}: {t.total}/{truth} [{t.low}-{t.high}]"
        for (t, truth), r in zip(tallies, records, strict=True)
        if not t.low <= truth <= t.high
    ]
    widths = [t.high - t.low for t, _ in tallies]
    return {
        **_held(tallies),
        "median_width": statistics.median(widths) if widths else None,
        "big_right": round(bigs_ok / max(len(records), 1), 4),
        "outside the interval (seed: read/true [interval])": misses[:12],
    }


def _by(
    records: list[dict[str, Any]], key: Callable[[dict[str, Any]], str], model: SpreadModel
) -> dict[str, str]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[key(r)].append(r)
    out = {}
    for name in sorted(groups):
        s = _scores(groups[name], model)
        out[name] = (
            f"{s['scenes']:3d} scenes: exact {100 * s['exact_total']:5.1f}%,"
            f" inside {100 * s['in_interval']:5.1f}%, mean width {s['mean_width']}"
        )
    return out


def _contrast_bucket(record: dict[str, Any]) -> str:
    c = record["contrast"]
    return (
        "faintest pieces <12 (hard)" if c < 12 else "faintest 12-25" if c < 25 else "faintest >=25"
    )


def _size_bucket(record: dict[str, Any]) -> str:
    size = record["piece_size"]
    return (
        "pieces 0.065-0.1"
        if size < 0.1
        else "pieces 0.1-0.14"
        if size < 0.14
        else "pieces 0.14-0.2"
    )


def evidence_of(record: dict[str, Any]) -> BoardEvidence:
    return BoardEvidence(
        record["quality"],
        record["on_lines"],
        record["outside"],
        record["inside_share"],
        sum(sq[0] for sq in record["squares"]),
    )


def trusted(record: dict[str, Any], weights: tuple[float, ...], floor: float) -> bool:
    """A still's board that ``oanquan tally`` answers for (found, and trusted)."""
    return bool(record["found"]) and board_trust(evidence_of(record), weights) >= floor


def evaluate(records: list[dict[str, Any]], model: SpreadModel) -> dict[str, Any]:
    """The answered scenes, then per condition."""
    return {
        "all": _scores(records, model),
        "per ground": _by(records, lambda r: r["ground"], model),
        "per piece kind": _by(records, lambda r: r["pieces"], model),
        "per light": _by(records, lambda r: r["light"], model),
        "per touching share": _by(records, lambda r: f"touch {min(int(r['touch'] * 5), 2)}", model),
        "per faintest pieces": _by(records, _contrast_bucket, model),
        "per piece size (square sides)": _by(records, _size_bucket, model),
    }


def evaluate_stills(
    records: list[dict[str, Any]],
    model: SpreadModel,
    weights: tuple[float, ...],
    floor: float,
) -> dict[str, Any]:
    """Stills: how many boards were found and trusted, the answered ones' figures, and
    the located-wrong boards among them."""
    found = [r for r in records if r["found"]]
    answered = [r for r in found if trusted(r, weights, floor)]
    wrong = [r for r in answered if not located_right(r)]
    return {
        "scenes": len(records),
        "board found": len(found),
        "board found and located right": sum(located_right(r) for r in found),
        "answered (found and trusted)": len(answered),
        "located wrong among answered": len(wrong),
        "refused though located right": sum(
            located_right(r) and not trusted(r, weights, floor) for r in found
        ),
        "exact over all scenes (no answer = not exact)": round(
            sum(
                count_spread(squares_of(r), model, outside=r["outside"]).total == sum(r["board"])
                for r in answered
            )
            / max(len(records), 1),
            4,
        ),
        **evaluate(answered, model),
        "located wrong among answered, figures": _scores(wrong, model),
    }


def time_still(
    seeds: range, kind: str, config: VisionConfig, model: SpreadModel, empty: bool = False
) -> tuple[float, float, float]:
    """Median ms of ``tally_image`` on a still JPEG (decode, locate, count, tally maths),
    its CPU ms (what a shared, busy machine cannot inflate), and the live path's CPU ms
    (the fixed camera's outline known: count and maths only); ``empty``: each against
    its photo of the empty board (decoded beforehand, as ``--empty`` does once)."""
    from companion.commands.tally import read_spread, tally_image
    from vision.locate import outline_from_corners

    wall, cpu, live = [], [], []
    for seed in seeds:
        image, truth = scene(seed, kind)
        path = CACHE / kind / f"still_{seed}.jpg"
        cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        before = empty_scene(seed, kind) if empty else None
        t0, c0 = time.perf_counter(), time.process_time()
        tally_image(str(path), config, model, before)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        outline = outline_from_corners(np.array(truth["corners"]), truth["arc_depth"])
        c0 = time.process_time()
        reading = read_spread(image, config, outline=outline, empty=before)
        count_spread(reading.squares, model, outside=reading.outside)
        live.append((time.process_time() - c0) * 1000)
    return statistics.median(wall), statistics.median(cpu), statistics.median(live)


def write_frames(out: Path) -> None:
    """Small stills for the demo: the heaps at the end of the demo's game (rules V40:
    A 37 pebbles and a quan, B 13 and a quan), each spread in one layer, and the board
    before them, empty."""
    from vision.synth import render_scene

    out.mkdir(parents=True, exist_ok=True)
    for name, seed, board, big in (
        ("spread_a", 3, [0, 4, 3, 5, 4, 3, 0, 4, 3, 4, 4, 3], (1, 0)),
        ("spread_b", 3, [0, 1, 2, 1, 2, 1, 0, 1, 2, 1, 1, 1], (0, 1)),
    ):
        image, _ = render_scene(
            board,
            big,
            seed,
            size=(960, 720),
            ground="concrete",
            tilt_deg=12.0,
            placer=_classic_place,
        )
        cv2.imwrite(str(out / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 80])
        (out / f"{name}.json").write_text(json.dumps({"board": board, "big": list(big)}) + "\n")
    # the board before the spreads, as tally mode's first frame sees it (another photo)
    image, _ = render_scene(
        [0] * 12,
        (0, 0),
        3,
        size=(960, 720),
        ground="concrete",
        tilt_deg=12.0,
        placer=_classic_place,
        noise_seed=1,
    )
    cv2.imwrite(str(out / "board_empty.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 80])


def fitted(
    config: VisionConfig, tag: str, kind: str, scenes: int, empty: bool
) -> tuple[SpreadModel, tuple[float, ...]]:
    """The interval model and the board trust fitted on the fitting seeds' readings
    (``--fit``), with what was fitted printed; the big-stone call is printed, not
    used: the readings took a stone's peak out by the shipped one."""
    seeds = range(FIT_SEEDS, FIT_SEEDS + scenes)
    given = [reading_of(s, kind, config, tag, True, empty=empty) for s in seeds]
    stills = [reading_of(s, kind, config, tag, empty=empty) for s in seeds]
    found = [r for r in stills if r["found"]]
    weights = fit_board_trust([(evidence_of(r), located_right(r)) for r in found])
    answered = [r for r in found if trusted(r, weights, TRUST_MIN)]
    samples = [(squares_of(r), r["board"], r["outside"]) for r in given + answered]
    model = fit_spread_model(samples)
    if empty:  # (what lights a square read against the empty board)
        model = replace(model, doubt=fit_doubt(samples, model))
    big = fit_big_call(
        [(r["big_heat"][m], r["big_net"][m], bool(r["big"][m])) for r in given for m in (0, 1)]
    )
    paired = _paired(config, empty)
    call_name = "FITTED_BIG_EMPTY" if paired else "FITTED_BIG"
    print(
        f"fitted on seeds {FIT_SEEDS}..{FIT_SEEDS + scenes - 1}: board trust"
        f" {weights} on {len(found)} stills with a board; spread model on"
        f" {len(given)} known boards and {len(answered)} trusted stills:\n{model!r}\n"
        f"big-stone call ({call_name}) on their {2 * len(given)} quan squares: {big}"
        + (
            ""
            if big == big_call(paired)
            else " (the readings used the shipped one: put this in, then --fit again for"
            " the rest, which depends on it)"
        )
    )
    return model, weights


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scenes", type=int, default=300, help="held-out scenes to evaluate")
    ap.add_argument(
        "--fit",
        action="store_true",
        help="refit the board trust, the interval model and the big-stone call first",
    )
    ap.add_argument("--fit-scenes", type=int, default=FIT_SCENES)
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--classic", action="store_true", help="the first bench's narrow scenes")
    group.add_argument(
        "--unseen",
        action="store_true",
        help="measure on the kinds the detector never saw (brick ground, shells; seeds 20000..)",
    )
    ap.add_argument(
        "--first-seed",
        type=int,
        help=f"measure on seeds from this one (default {EVAL_SEEDS}, or {UNSEEN_SEEDS} with"
        " --unseen): a range no decision was taken on, to confirm one",
    )
    ap.add_argument(
        "--respread",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="also measure the guided loop: the players lay the lit (unsure) squares out"
        " again apart and count again, up to ROUNDS times",
    )
    ap.add_argument(
        "--empty",
        action="store_true",
        help="count each spread against a photo of the empty board taken before it (the"
        " same camera, the light drifted a little); --fit then fits that model's tables",
    )
    ap.add_argument("--timing", type=int, default=15, help="stills to time")
    ap.add_argument("--write-frames", metavar="DIR", type=Path)
    ap.add_argument(
        "--model",
        type=Path,
        default=Path(VisionConfig().count.spread_model),
        help="the piece detector (ONNX) to measure; the shipped one by default",
    )
    ap.add_argument(
        "--pair-model",
        default=VisionConfig().count.spread_pair_model,
        help="with --empty, the detector reading spread and empty board together (ONNX;"
        ' the shipped one by default, "" for none: the spread\'s detector alone)',
    )
    args = ap.parse_args()
    if not args.model.is_file():
        ap.error(f"--model: no such file: {args.model}")
    if args.pair_model and not Path(args.pair_model).is_file():
        ap.error(f"--pair-model: no such file: {args.pair_model}")
    if args.write_frames:
        write_frames(args.write_frames)
        return 0
    cv2.setNumThreads(1)
    keep_freed_memory()  # (as every oanquan command does: companion.appliance.memory)
    config = with_detector(args.model, args.pair_model)
    tag = _model_tag(config, args.empty)
    fit_kind = "classic" if args.classic else "wide"
    kind = "unseen" if args.unseen else fit_kind
    first = UNSEEN_SEEDS if args.unseen else EVAL_SEEDS
    if args.first_seed is not None:
        first = args.first_seed
    if first < FIT_SEEDS + args.fit_scenes:
        ap.error(
            f"measuring from seed {first}: the fitting scenes run to"
            f" {FIT_SEEDS + args.fit_scenes - 1}"
        )
    if first + args.scenes > TRAIN_SEEDS:
        ap.error(
            f"measuring to seed {first + args.scenes - 1}: the detector trained from {TRAIN_SEEDS}"
        )
    weights: tuple[float, ...]  # the shipped six, or as many as fit_board_trust gives
    model, weights = SpreadModel(), FITTED_TRUST
    if args.fit:
        model, weights = fitted(config, tag, fit_kind, args.fit_scenes, args.empty)
    seeds = range(first, first + args.scenes)
    print(f"measured on {kind} scenes, seeds {first}..{first + args.scenes - 1}")
    if args.empty and args.classic:
        ap.error("--empty: the classic scenes have no photo of the empty board")
    live = [reading_of(s, kind, config, tag, True, empty=args.empty) for s in seeds]
    stills = [reading_of(s, kind, config, tag, empty=args.empty) for s in seeds]
    out = {
        "live (the board known from the game)": {"scenes": len(live), **evaluate(live, model)},
        "live, the squares lit counted by hand at once (no respread)": by_hand(live, model),
        "stills (the board located in the still)": evaluate_stills(
            stills, model, weights, TRUST_MIN
        ),
    }
    if args.respread:
        if args.classic:
            ap.error("--respread: the classic scenes are laid out apart already")
        rounds = args.respread
        live_g = [
            guided(s, kind, config, tag, model, rounds, given=True, empty=args.empty) for s in seeds
        ]
        out[f"live, after up to {rounds} respreads of the lit squares"] = guided_figures(
            live_g, evaluate([r for r, _ in live_g], model)
        )
        out["live, then the squares still lit counted by hand"] = by_hand(
            [r for r, _ in live_g], model
        )
        still_g = [
            guided(
                s,
                kind,
                config,
                tag,
                model,
                rounds,
                answered=lambda r: trusted(r, weights, TRUST_MIN),
                empty=args.empty,
            )
            for s in seeds
        ]
        out[f"stills, after up to {rounds} respreads of the lit squares"] = guided_figures(
            still_g, evaluate_stills([r for r, _ in still_g], model, weights, TRUST_MIN)
        )
        out["stills answered, then the squares still lit counted by hand"] = by_hand(
            [r for r, _ in still_g if trusted(r, weights, TRUST_MIN)], model
        )
    print(json.dumps(out, indent=1, ensure_ascii=False))
    if args.timing:
        wall, cpu, live_ms = time_still(
            range(first, first + args.timing), kind, config, model, args.empty
        )
        print(
            f"tally of a 1280x960 still, median of {args.timing}: {wall:.0f} ms wall,"
            f" {cpu:.0f} ms CPU (1 thread); board already located (live camera):"
            f" {live_ms:.0f} ms CPU"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
