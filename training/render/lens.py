"""A real lens's distortion for the renders, and lens-bent copies of any dataset.

Blender's camera is a pinhole, but the cameras the product meets are not: the Camera
Module 3 Wide and most webcams bow straight lines towards the frame's edges, phones
leave a trace of it after their own correction. The renders are bent after the fact:
the pinhole render is resampled through the one-parameter division model that
``vision.lens`` undoes (radial about the image centre, in units of the half-diagonal ``R``: a raw point at ``d`` is the pinhole's
``d / (1 + k1 |d|^2)``), and every pixel of the truth is moved the same way. Geometry is
exact so (a lens bends light before it reaches the sensor; the render is that light);
sharpness is not quite: see ``bend_image``.

A barrel shows more of the world than the pinhole it bends, so the raw frame is the
middle of the render magnified by ``1 / zoom`` (``zoom`` = 1 + k1 for a barrel, 1 for a
pincushion): the render's corners land on the raw frame's corners and every raw pixel
has a rendered source, with no black borders (the camera then frames a little less than
the render did, as a slightly longer lens would). With that ``zoom``, a world point goes
through ``camera_model.K`` to the pinhole pixel ``q``, then ``u = (q - c) / (zoom R)``
and the raw ``d = 2 u / (1 + sqrt(1 - 4 k1 |u|^2))``; the truth records ``k1`` and
``zoom`` under ``camera_model.lens`` and ``k1`` under ``conditions.camera.lens_k1``, which
is what ``[vision.lens] k1`` must say to undo it.

numpy, and Pillow for the copies' images (the render venv has no OpenCV). ``python -m training.render.lens
SRC DST`` writes a bent copy of a dataset folder (singles or game sequences; one lens
per game), for measuring what an uncalibrated wide camera costs on sets rendered
without one. Code that reads a truth as a pinhole's (``camera_model.K`` alone, a
homography of its corners) must undo ``camera_model.lens`` first, or refuse it.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.render.geometry import Camera, polygon_area, sample_polygon

#: the strongest bend drawn or accepted (as ``vision.lens.MAX_K``: within it both
#: directions are defined over the whole frame)
MAX_K = 0.25

#: k1 drawn per camera kind (uniform in the range): phones correct their lens in
#: software and keep a trace; the Pi's standard modules and a 6 mm lens on the HQ
#: module bend a little; the 120-degree Camera Module 3 Wide and cheap webcams a lot
LENS_K1: dict[str, tuple[float, float]] = {
    "phone_main": (-0.03, 0.02),
    "phone_tele": (0.0, 0.03),
    "pi_v2": (-0.06, -0.01),
    "pi_v3": (-0.05, 0.0),
    "pi_v3_wide": (-0.25, -0.14),
    "pi_hq_6mm": (-0.12, -0.04),
    "webcam": (-0.16, -0.02),
}
#: the range for a camera kind the table does not know (render-public's truth names none)
OTHER_K1 = (-0.16, 0.02)
#: truth polygons' edges are cut into pieces at most this long (px) before bending, so
#: a square's straight side follows the curve the lens draws it as
EDGE_PX = 12.0
#: points sampled on the ground per region to measure how much of it the frame shows
FRAME_SAMPLES = 1024


#: the truth's ``camera_model`` keys of the pinhole's K, R and t (``geometry.Camera``)
_POSE = ("K", "R_world_to_cam_opencv", "t_opencv")


class LensError(ValueError):
    """A lens or a dataset folder that cannot be bent (one line, for the CLI)."""


def check_k1(k1: float) -> float:
    """``k1`` itself, or LensError when no lens the product accepts bends so."""
    if not math.isfinite(k1) or abs(k1) > MAX_K:
        raise LensError(f"k1 must be between -{MAX_K} and {MAX_K}, got {k1}")
    return float(k1)


def draw_k1(rng: random.Random, device: str | None) -> float:
    """A lens for a camera of this kind (``LENS_K1``), three decimals."""
    lo, hi = LENS_K1.get(device or "", OTHER_K1)
    return round(rng.uniform(lo, hi), 3)


def zoom(k1: float) -> float:
    """How much of the render's half-diagonal the raw frame's pinhole view spans."""
    return 1.0 + k1 if k1 < 0.0 else 1.0


def _centre(width: int, height: int) -> tuple[np.ndarray, float]:
    return np.array([width / 2.0, height / 2.0]), math.hypot(width, height) / 2.0


def to_raw(points: np.ndarray, width: int, height: int, k1: float) -> np.ndarray:
    """Render (pinhole) pixels -> where the bent camera shows them (shape (..., 2))."""
    pts = np.asarray(points, np.float64)
    if k1 == 0.0:
        return pts.copy()
    c, r = _centre(width, height)
    u = (pts - c) / (zoom(k1) * r)
    uu = np.sum(u * u, axis=-1, keepdims=True)
    # the division model solved for the raw radius (the root that is 1 at k1 = 0); past
    # where a pincushion's model ends, points are taken to its edge
    d = 2.0 * u / (1.0 + np.sqrt(np.maximum(1.0 - 4.0 * k1 * uu, 0.0)))
    return np.asarray(c + d * r, np.float64)


def from_raw(points: np.ndarray, width: int, height: int, k1: float) -> np.ndarray:
    """Pixels of the bent frame -> the render pixels they show (inverse of ``to_raw``)."""
    pts = np.asarray(points, np.float64)
    if k1 == 0.0:
        return pts.copy()
    c, r = _centre(width, height)
    d = (pts - c) / r
    dd = np.sum(d * d, axis=-1, keepdims=True)
    return np.asarray(c + d / (1.0 + k1 * dd) * (zoom(k1) * r), np.float64)


def bend_image(rgb: np.ndarray, k1: float) -> np.ndarray:
    """The image (H, W, C, any dtype) as the bent camera takes it: bilinear, same size.

    Pixel (i, j)'s centre is at (i + 0.5, j + 0.5), as in the truth (``K``'s principal
    point is the frame's middle, W / 2). Bilinear without smoothing first: where a
    barrel shrinks the render (its corners, by up to 1 / zoom) fine texture may alias,
    and where it enlarges it (the middle) the picture is a little softer than a lens of
    that focal length would give.
    """
    if k1 == 0.0:
        return rgb.copy()
    h, w = rgb.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64) + 0.5
    src = from_raw(np.stack([xs, ys], axis=-1), w, h, k1) - 0.5
    sx = np.clip(src[..., 0], 0.0, w - 1.0)
    sy = np.clip(src[..., 1], 0.0, h - 1.0)
    x0 = np.minimum(np.floor(sx).astype(np.intp), w - 2)
    y0 = np.minimum(np.floor(sy).astype(np.intp), h - 2)
    fx = (sx - x0)[..., None].astype(np.float32)
    fy = (sy - y0)[..., None].astype(np.float32)
    a = rgb.astype(np.float32)
    a = a.reshape(h, w, -1)
    top = a[y0, x0] * (1.0 - fx) + a[y0, x0 + 1] * fx
    bottom = a[y0 + 1, x0] * (1.0 - fx) + a[y0 + 1, x0 + 1] * fx
    out = top * (1.0 - fy) + bottom * fy
    if np.issubdtype(rgb.dtype, np.integer):
        info = np.iinfo(rgb.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return np.asarray(out.astype(rgb.dtype).reshape(rgb.shape))


def _densify(poly: Sequence[Sequence[float]]) -> np.ndarray:
    """The closed polygon with every edge cut into pieces of at most ``EDGE_PX``."""
    p = np.asarray(poly, np.float64)
    out: list[np.ndarray] = []
    for a, b in zip(p, np.roll(p, -1, axis=0), strict=True):
        n = max(1, math.ceil(float(np.linalg.norm(b - a)) / EDGE_PX))
        t = np.arange(n)[:, None] / n
        out.append(a + (b - a) * t)
    return np.concatenate(out, axis=0)


def _inside(px: np.ndarray, width: int, height: int) -> np.ndarray:
    ok = np.isfinite(px).all(axis=-1)
    x, y = np.nan_to_num(px[..., 0], nan=-1.0), np.nan_to_num(px[..., 1], nan=-1.0)
    return np.asarray(ok & (x >= 0) & (x < width) & (y >= 0) & (y < height))


def _r2(points: np.ndarray) -> list[list[float]]:
    return [[round(float(x), 2), round(float(y), 2)] for x, y in points]


def _bend_px(node: Any, w: int, h: int, k1: float) -> None:
    """Move every ``*_px`` point (``[x, y]``) under ``node`` in place: pieces'
    ``ground_px`` (the wide generator's), a hand's ``tip_px``; ``center_px`` too."""
    if isinstance(node, dict):
        for key, value in node.items():
            point = (
                key.endswith("_px")
                and isinstance(value, list)
                and len(value) == 2
                and all(isinstance(v, int | float) for v in value)
            )
            if point:
                raw = to_raw(np.asarray([value], np.float64), w, h, k1)[0]
                node[key] = [round(float(raw[0]), 2), round(float(raw[1]), 2)]
            else:
                _bend_px(value, w, h, k1)
    elif isinstance(node, list):
        for item in node:
            _bend_px(item, w, h, k1)


def lens_of(truth: dict[str, Any]) -> float:
    """The k1 a truth says its photo was taken with (0: a pinhole's, or none recorded)."""
    model = truth.get("camera_model")
    if isinstance(model, dict) and isinstance(model.get("lens"), dict):
        return float(model["lens"].get("k1", 0.0))
    camera = truth.get("conditions", {}).get("camera")
    return float(camera.get("lens_k1", 0.0)) if isinstance(camera, dict) else 0.0


def pinhole_only(truth: dict[str, Any], where: object) -> None:
    """For the trainers' command lines, which cut samples with a homography of a truth's
    corners: stop (SystemExit, one line) at a truth taken through a lens."""
    k1 = lens_of(truth)
    if k1 != 0.0:
        raise SystemExit(
            f"{where}: taken through a lens (k1 {k1}); training takes pinhole renders only"
        )


def bend_truth(truth: dict[str, Any], k1: float) -> dict[str, Any]:
    """The truth of a pinhole render as the bent camera shows it (a new dict; see the
    module). A truth already bent is refused (LensError): two lenses would be recorded
    as one.

    Corners and every ``*_px`` point are moved (pieces' centres, the wide generator's
    ``ground_px``, a hand's ``tip_px``); region polygons are densified first, so their
    sides curve as the lens draws them. What the frame shows is measured again: the raw
    frame is the middle of the render, so a piece whose centre leaves it is no longer in
    frame nor visible (a piece cut by the new edge keeps its visible share: judged by
    its centre only), and a region's in-frame share is 1 where its bent outline lies in
    the frame and otherwise sampled on the ground through the pinhole and the lens
    (where the truth has ``board_m`` and ``camera_model``; never more than it was, the raw
    frame being inside the render's). Counts are the world's and do not change.
    """
    check_k1(k1)
    if lens_of(truth) != 0.0:
        raise LensError(f"already taken through a lens (k1 {lens_of(truth)}): bend a pinhole's")
    out = copy.deepcopy(truth)
    w, h = int(truth["width"]), int(truth["height"])
    cond = out.setdefault("conditions", {})
    camera = cond.get("camera")
    cond["camera"] = {**(camera if isinstance(camera, dict) else {}), "lens_k1": k1}
    if k1 == 0.0:
        return out
    out["corners"] = _r2(to_raw(np.asarray(truth["corners"], np.float64), w, h, k1))
    _bend_px(out.get("pieces", []), w, h, k1)
    _bend_px(out.get("hand", {}), w, h, k1)
    for piece in out.get("pieces", []):
        centre = piece.get("center_px")
        if centre is not None and not bool(_inside(np.asarray(centre, np.float64), w, h)):
            piece.update(in_frame=False, visible=False, visible_fraction=0.0, top_visible=False)
    model = out.get("camera_model")
    board = out.get("board_m")
    # (where the truth has no camera or ground polygons, the in-frame shares are kept)
    ground_polys = board.get("regions") if isinstance(board, dict) else None
    camera = None
    if isinstance(model, dict):
        k, r, t = (np.asarray(model[key], np.float64) for key in _POSE)
        camera = Camera(k, r, t, w, h)
    outline: list[np.ndarray] = []
    weights: dict[str, float] = {}
    for i, (name, region) in enumerate(out["regions"].items()):
        bent = to_raw(_densify(region["polygon"]), w, h, k1)
        region["polygon"] = _r2(bent)
        outline.append(bent)
        pieces = [p for p in out.get("pieces", []) if p.get("region") == name]
        if pieces:
            region["hidden_pieces"] = sum(not p.get("visible", True) for p in pieces)
        if not isinstance(ground_polys, dict) or camera is None:
            continue
        poly = ground_polys[name]
        if _inside(bent, w, h).all():
            region["in_frame_fraction"] = 1.0
        else:
            ground = sample_polygon(poly, FRAME_SAMPLES, np.random.default_rng(1_000 + i))
            pinhole = camera.project(np.c_[ground, np.zeros(len(ground))])
            seen = _inside(to_raw(pinhole, w, h, k1), w, h)
            before = float(region["in_frame_fraction"])
            region["in_frame_fraction"] = round(min(before, float(seen.mean())), 3)
        weights[name] = polygon_area(np.asarray(poly, np.float64))
    everything = np.concatenate(outline)
    out["board_partially_outside"] = bool(not _inside(everything, w, h).all())
    if weights:
        total = sum(weights.values())
        share = sum(weights[n] * out["regions"][n]["in_frame_fraction"] for n in weights)
        out["board_visible_fraction"] = round(share / total, 3)
    if isinstance(model, dict):
        model["lens"] = {"model": "division", "k1": k1, "zoom": round(zoom(k1), 6)}
    return out


# ---------------------------------------------------------------- bent copies of datasets


def _pairs(folder: Path) -> list[tuple[Path, Path]]:
    """(truth, image) pairs directly in ``folder``, sorted by name."""
    out = []
    for js in sorted(folder.glob("*.json")):
        for ext in (".jpg", ".png", ".jpeg"):
            if js.with_suffix(ext).is_file():
                out.append((js, js.with_suffix(ext)))
                break
    return out


def _folders(root: Path) -> list[tuple[Path, list[tuple[Path, Path]]]]:
    """Every folder under ``root`` (itself included, links followed) that holds image +
    truth pairs, with its pairs."""
    found = [
        (folder, _pairs(folder))
        for folder in sorted(
            Path(d)
            for d, _, files in os.walk(root, followlinks=True)
            if any(f.endswith(".json") for f in files)
        )
    ]
    return [(folder, pairs) for folder, pairs in found if pairs]


def _device(truth: dict[str, Any]) -> str | None:
    conditions = truth.get("conditions")
    camera = conditions.get("camera") if isinstance(conditions, dict) else None
    return camera.get("device") if isinstance(camera, dict) else None


def _settings(dst: Path, k1: float | None, seed: int) -> None:
    """Record how ``dst`` is bent before the first pair; refuse to add to a copy bent
    otherwise (its kept pairs would carry another lens than the record)."""
    settings = {"k1": "drawn" if k1 is None else k1, "seed": seed}
    record = dst / "lens.json"
    if record.is_file():
        try:
            before = json.loads(record.read_text("utf-8"))
        except ValueError as e:
            raise LensError(f"{record}: {e}") from e
        if before != settings:
            raise LensError(f"{dst} was bent with {before}, not {settings}: use another copy")
        return
    dst.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(settings) + "\n", "utf-8")


def _read(js: Path) -> dict[str, Any]:
    """A truth file's JSON object, or LensError naming the file."""
    try:
        truth = json.loads(js.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise LensError(f"{js}: {e}") from e
    if not isinstance(truth, dict):
        raise LensError(f"{js}: not a JSON object")
    return truth


def _bend_pair(
    truth: dict[str, Any], js: Path, img: Path, out: Path, lens: float, quality: int
) -> None:
    """Bend one image and its truth (read from ``js``) into ``out``; LensError naming the
    file if either cannot be bent (nothing is written then)."""
    from PIL import Image  # (here: the trainers' venv, which checks truths, has no Pillow)

    try:
        name = img.with_suffix(".jpg").name
        bent = bend_truth(truth, lens) | {"image": name}
        rgb = np.asarray(Image.open(img).convert("RGB"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        why = e if str(e) else type(e).__name__
        raise LensError(f"{js}: {why}") from e
    Image.fromarray(bend_image(rgb, lens)).save(out / name, quality=quality)
    part = (out / js.name).with_suffix(".part")
    part.write_text(json.dumps(bent, separators=(",", ":")), "utf-8")
    part.replace(out / js.name)  # the image first: a truth means the pair is complete


def bend_dataset(
    src: Path, dst: Path, k1: float | None, seed: int, quality: int = 95
) -> dict[str, int]:
    """Write a bent copy of every image + truth under ``src`` to ``dst`` (same layout).

    ``k1`` None draws one lens per still and per game from its camera kind
    (``LENS_K1``), seeded by ``seed`` and the file's name with its folder's (a game's:
    the folder's), so the same photo gets the same lens on every machine and whether
    ``src`` is a dataset or one of its folders. Pairs already in ``dst`` are kept (an
    interrupted copy resumes), but only into a copy bent the same way.
    Returns how many images were written and kept.
    """
    if k1 is not None:
        check_k1(k1)
    src, dst = src.resolve(), dst.resolve()
    if not src.is_dir():
        raise LensError(f"no dataset folder {src}")
    if dst == src or src in dst.parents:
        raise LensError(f"the copy {dst} must not lie inside the dataset {src}")
    folders = _folders(src)
    if not folders:
        raise LensError(f"no image with its truth JSON under {src}")
    _settings(dst, k1, seed)
    written = kept = 0
    for folder, pairs in folders:
        out = dst / folder.relative_to(src)
        out.mkdir(parents=True, exist_ok=True)
        # a game's frames share one camera, hence one lens, drawn by the folder's name
        game = any(js.name.startswith("frame_") for js, _ in pairs)
        game_k1 = None
        for js, img in pairs:
            if (out / js.name).exists() and (out / img.with_suffix(".jpg").name).exists():
                kept += 1
                continue
            truth = _read(js)
            lens = k1
            if lens is None and game:
                if game_k1 is None:
                    key = zlib.crc32(f"{seed}:{folder.name}".encode())
                    game_k1 = draw_k1(random.Random(key), _device(truth))
                lens = game_k1
            elif lens is None:
                key = zlib.crc32(f"{seed}:{folder.name}/{js.name}".encode())
                lens = draw_k1(random.Random(key), _device(truth))
            _bend_pair(truth, js, img, out, lens, quality)
            written += 1
    return {"written": written, "kept": kept}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m training.render.lens",
        description="Write a copy of a dataset folder as a camera with a real lens takes it.",
    )
    ap.add_argument("src", type=Path, help="dataset folder (singles, or sequence_* games)")
    ap.add_argument("dst", type=Path, help="where the bent copy goes (same layout)")
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--k1", type=float, help="one lens for every image (k1 < 0: barrel)")
    how.add_argument(
        "--draw", action="store_true", help="a lens per still and per game, by its camera kind"
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the drawn lenses")
    args = ap.parse_args(argv)
    try:
        done = bend_dataset(args.src, args.dst, None if args.draw else args.k1, args.seed)
    except (LensError, OSError) as e:
        print(f"lens: {e}", file=sys.stderr)
        return 2
    print(f"lens: {done['written']} written, {done['kept']} already there -> {args.dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
