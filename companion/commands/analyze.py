"""``oanquan analyze``: vision on still images.

It follows the interchange contract (interchange.md in the shared project material):
one JSON object per image, JSON Lines on stdout or one file per image with
``--json-out``; no board is an answer (exit 0), an unreadable file an error
(exit 1). Whatever goes wrong with one image (a file that will not decode, an
image so large it would exhaust memory, vision failing on it) is that image's
``error``: the rest of the batch is still read.

``--config`` is the appliance's config file, read by the loader ``oanquan run``
uses (:mod:`companion.appliance.config`), so the site's file, or the one
``oanquan calibrate --out`` writes, works the same everywhere; without it,
``$OANQUAN_CONFIG`` or ``/etc/oanquan/config.toml`` as for ``run``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.commands._cli import guarded, output_dir, why
from vision.config import VisionConfig, config_from_dict
from vision.errors import ImageReadError

log = logging.getLogger("oanquan")

#: Largest image decoded, in pixels (width x height): 4x a 12 MP camera frame. A
#: small compressed file can claim a huge size (a "PNG bomb"); it is refused
#: from its header, before any memory is taken for its pixels.
MAX_PIXELS = 50_000_000


#: Height over width beyond which an image is refused. Vision scales every image to a
#: fixed working width, so a thin, tall strip becomes an enormous working copy (a
#: 100x10000 image took 45 s and crashed); no camera frame or photo of a board is so tall.
MAX_TALL = 8


def image_size(data: bytes | NDArray[np.uint8]) -> tuple[int, int] | None:
    """Width and height from an image file's header, without decoding it; None if unknown."""
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(bytes(data))) as im:
            return int(im.width), int(im.height)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None


def read_image(path: str) -> NDArray[np.uint8]:
    """Decode an image file as 8-bit BGR or raise ImageReadError with a one-line reason.

    Grey, alpha and 16-bit images are converted; an image larger than
    :data:`MAX_PIXELS` is refused.
    """
    p = Path(path)
    try:
        found = p.is_file()
    except OSError as exc:  # a name too long, a path through a file
        raise ImageReadError(f"cannot read {path}: {why(exc)}") from None
    if not found:
        raise ImageReadError(f"no such file: {path}")
    try:
        data = np.fromfile(str(p), dtype=np.uint8)
    except OSError as exc:
        raise ImageReadError(f"cannot read {path}: {why(exc)}") from exc
    if data.size == 0:
        raise ImageReadError(f"empty file: {path}")
    return decode_image(data, path)


def decode_image(data: NDArray[np.uint8], name: str) -> NDArray[np.uint8]:
    """Decode file bytes as 8-bit BGR, refusing what is unreadable or too large."""
    size = image_size(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ImageReadError(
            f"image too large: {name} is {size[0]}x{size[1]} (at most {MAX_PIXELS:,} pixels)"
        )
    try:
        img = cv2.imdecode(data, cv2.IMREAD_COLOR)
    except cv2.error as exc:
        raise ImageReadError(f"not a readable image: {name} ({_first_line(exc)})") from None
    if img is None or img.size == 0:
        raise ImageReadError(f"not a readable image: {name}")
    h, w = img.shape[:2]
    if w * h > MAX_PIXELS:
        raise ImageReadError(f"image too large: {name} is {w}x{h} (at most {MAX_PIXELS:,} pixels)")
    if h > MAX_TALL * w:
        raise ImageReadError(
            f"image too tall: {name} is {w}x{h}, more than {MAX_TALL}x taller than wide"
        )
    return np.ascontiguousarray(img, dtype=np.uint8)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__


def _round(v: float) -> float:
    return round(float(v), 1)


def analyze_image(path: str, config: VisionConfig) -> dict[str, Any]:
    """The interchange JSON object for one image."""
    from vision.api import read_board
    from vision.lens import distort_points, undistort
    from vision.locate import manual_outline

    name = Path(path).name
    try:
        image = undistort(read_image(path), config.lens)
    except ImageReadError as exc:
        return {"image": name, "error": str(exc)}
    try:
        reading = read_board(image, config, gate=False, outline=manual_outline(config, image.shape))
    except MemoryError:
        return {"image": name, "error": f"out of memory reading {name}"}
    except Exception as exc:  # a vision failure is this image's error, never the batch's end
        log.debug("analyze %s", name, exc_info=True)
        return {"image": name, "error": f"vision failed on {name}: {_first_line(exc)}"}
    out: dict[str, Any] = {"image": name, "board_found": reading.found}
    if not reading.found or reading.corners is None:
        out.update(corners=None, squares=None, reason=reading.reason or "board not found")
    else:
        # (in the photo as taken: with a lens undone, the corners move back to where they
        # show, as the corners a person gives are read)
        raw = distort_points(reading.corners, image.shape, config.lens)
        out["corners"] = [[_round(x), _round(y)] for x, y in raw]
        out["squares"] = [
            {
                "count": sq.count,
                "big": sq.big,
                "confidence": round(sq.confidence, 3),
                "big_prob": round(sq.big_prob, 3),
                "probs": [round(p, 4) for p in sq.probs],
            }
            for sq in reading.squares
        ]
        out["quality"] = round(reading.quality, 3)
        out["board_doubt"] = round(reading.doubt, 3)
        if reading.outline is not None and reading.outline.manual:
            out["corners_source"] = "manual"
        if reading.frame is not None and not reading.frame.ok:
            out["frame"] = {"ok": False, "reason": reading.frame.reason}
    out["timings_ms"] = {k: _round(v) for k, v in reading.timings_ms.items()}
    out["_reading"] = reading
    out["_image"] = image
    return out


def vision_config(path: str | None) -> VisionConfig:
    """The ``[vision]`` settings of the appliance config (raises its one-line ConfigError)."""
    from companion.appliance.config import load_config

    return config_from_dict({"vision": load_config(path).vision})


def clashing_stems(paths: list[str]) -> str | None:
    """Two images whose per-image output files would have the same name, or None."""
    stems = Counter(Path(p).stem for p in paths)
    twice = [stem for stem, n in stems.items() if n > 1]
    if not twice:
        return None
    same = [p for p in paths if Path(p).stem == twice[0]]
    return f"{same[0]} and {same[1]} would both write {twice[0]}"


def prepare_batch(
    images: list[str], config_path: str | None, outputs: dict[str, str | None], verb: str
) -> tuple[VisionConfig, dict[str, Path | None]]:
    """What ``analyze`` and ``tally`` check before reading any image, in this order:
    the config, output names that would overwrite each other, the output folders.

    ``outputs`` maps an option (``"--json-out"``) to its folder or None; raises
    ``ConfigError`` or ``ValueError`` with the one line to print (exit 2).
    """
    config = vision_config(config_path)
    clash = clashing_stems(images) if any(outputs.values()) else None
    if clash:
        raise ValueError(
            f"{clash}.json: one result would overwrite the other; "
            f"rename one or {verb} them into different folders"
        )
    dirs = {flag: output_dir(path, flag) if path else None for flag, path in outputs.items()}
    return config, dirs


def analyze_main(argv: list[str]) -> int:
    """Entry point of ``oanquan analyze IMAGE... [--json-out DIR] [--annotate DIR]``."""
    return guarded("oanquan analyze", lambda: _analyze(argv))


def _analyze(argv: list[str]) -> int:
    from companion.appliance.config import ConfigError

    ap = argparse.ArgumentParser(
        prog="oanquan analyze",
        description="Find the board in each photo and count the pebbles per square; "
        "prints one JSON object per image (docs/interchange.md).",
    )
    ap.add_argument("images", nargs="+", metavar="IMAGE", help="photos of the board (JPEG, PNG)")
    ap.add_argument("--json-out", metavar="DIR", help="write DIR/<image stem>.json per image")
    ap.add_argument("--annotate", metavar="DIR", help="write annotated copies of the images")
    ap.add_argument(
        "--config",
        metavar="TOML",
        help="config file as for oanquan run (its [vision] table; e.g. from calibrate)",
    )
    args = ap.parse_args(argv)
    outputs = {"--json-out": args.json_out, "--annotate": args.annotate}
    try:
        config, dirs = prepare_batch(args.images, args.config, outputs, "analyze")
    except (ConfigError, ValueError) as exc:
        print(f"oanquan analyze: {exc}", file=sys.stderr)
        return 2
    json_dir, annotate_dir = dirs["--json-out"], dirs["--annotate"]
    status = 0
    for path in args.images:
        result = analyze_image(path, config)
        reading = result.pop("_reading", None)
        image = result.pop("_image", None)
        if "error" in result:
            status = 1
        if annotate_dir is not None and reading is not None and image is not None:
            problem = _annotate(image, reading, annotate_dir / f"{Path(path).stem}.png")
            if problem:
                print(f"oanquan analyze: {problem}", file=sys.stderr)
                status = 1
        text = json.dumps(result, ensure_ascii=False)
        if json_dir is not None:
            target = json_dir / f"{Path(path).stem}.json"
            try:
                target.write_text(text + "\n", "utf-8")
            except OSError as exc:
                print(f"oanquan analyze: cannot write {target}: {why(exc)}", file=sys.stderr)
                status = 1
        else:
            print(text, flush=True)
    return status


def _annotate(image: NDArray[np.uint8], reading: Any, target: Path) -> str | None:
    """Write the annotated copy; the problem in one line if it could not be written."""
    from vision.annotate import annotate

    try:
        ok = cv2.imwrite(str(target), annotate(image, reading))
    except cv2.error as exc:
        return f"cannot write {target}: {_first_line(exc)}"
    return None if ok else f"cannot write {target}"
