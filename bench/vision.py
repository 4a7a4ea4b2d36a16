"""Accuracy and latency of the vision pipeline against ground truth.

    python bench/vision.py DATASET_DIR            # render-public layout, recursive
    python bench/vision.py --synth 100 --seed 7   # fresh vision.synth scenes
    python bench/vision.py DATASET_DIR --only sequence --oracle-corners
    python bench/vision.py DATASET_DIR --only singles --fold 0/4 --model fold0.onnx
    python bench/vision.py DATASET_DIR --only singles --cv-dir out/counter   # 4-fold CV models
    python bench/vision.py DATASET_DIR --only singles --big-cv-dir out/bigstone

Prints board-found rate, corner error, exact-count accuracy per true-count
bucket, within-one for 8-15, MAE (relative for 16+), big-stone accuracy, the
share of images with all 12 squares exact, and single-thread latency by image
size. ``--csv FILE`` writes one row per image for digging into failures and
``--annotate DIR`` draws every failing image (reading and truth) into DIR.
``--oracle-corners`` counts on the true board outline, so counting is measured
apart from localisation; ``--only``/``--fold`` pick a subset and ``--model`` a
counter network; ``--cv-dir`` counts each image with the cross-validation model
that did not see it (``foldK.onnx`` for index % 4 == K, from bench/train_counter.py);
``--big-cv-dir`` does the same for the big-stone classifier (bench/train_bigstone.py)
and ``--big-model`` picks one. ``--truth-lens`` undoes each photo's lens with the k1
its truth records (copies bent by ``python -m training.render.lens``): a camera
calibrated exactly (it takes the place of any ``[lens]`` the ``--config`` names); a
``--config`` with ``[lens] k1`` is one calibrated lens for all.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.figures import bucket_lines
from companion.appliance.memory import keep_freed_memory
from engine.board import MANDARINS
from training.render.lens import lens_of
from vision.api import read_board
from vision.config import VisionConfig, load_config
from vision.geometry import canonical_corners
from vision.lens import Lens, distort_points, undistort, undistort_points
from vision.locate import outline_from_corners
from vision.synth import REGION_NAMES

RING_NAMES = REGION_NAMES


@dataclass
class Tally:
    """Running totals over the benchmark."""

    images: int = 0
    found: int = 0
    corner_px: list[float] = field(default_factory=list)
    corner_frac: list[float] = field(default_factory=list)
    true: list[int] = field(default_factory=list)
    pred: list[int] = field(default_factory=list)
    true_good: list[int] = field(default_factory=list)  # boards located within 3%
    pred_good: list[int] = field(default_factory=list)
    big_ok: list[bool] = field(default_factory=list)
    all_exact: int = 0
    latency: dict[str, list[float]] = field(default_factory=dict)
    count_ms: dict[str, list[float]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)


def load_truth(path: Path) -> tuple[list[int], list[int], np.ndarray]:
    """Ring-ordered counts, big stones and corners from a truth JSON, named as ``analyze``
    names a still's squares: south is the long side nearer the bottom of the image.

    A render's truth names P0's side south wherever the camera stood; from the far side
    (our generator's cameras go all round) the board is turned half round in the photo,
    and a still cannot show which side P0 sat on, so the truth is turned to match
    (square i is then square i + 6 of the ring).
    """
    data = json.loads(path.read_text("utf-8"))
    regions = data["regions"]
    counts = [int(regions[n]["count"]) for n in RING_NAMES]
    bigs = [int(regions[n]["big"]) for n in RING_NAMES]
    corners = np.array(data["corners"], dtype=np.float64)
    named = canonical_corners(corners)  # the finder's own naming of a photo's corners
    if not np.array_equal(named, corners):
        half = len(counts) // 2
        counts, bigs = counts[half:] + counts[:half], bigs[half:] + bigs[:half]
    return counts, bigs, named


def image_truths(root: Path) -> list[tuple[Path, Path]]:
    """(image, truth JSON) for every image with a sibling JSON, recursively, in order."""
    out = []
    for js in sorted(root.rglob("*.json")):
        img = next((i for i in map(js.with_suffix, (".jpg", ".png", ".jpeg")) if i.exists()), None)
        if img is not None:
            out.append((img, js))
    return out


def dataset_items(root: Path) -> Iterator[tuple[str, np.ndarray | None, Path]]:
    """(name, image, truth path) for every image with a sibling JSON, recursively."""
    for img, js in image_truths(root):
        yield str(img.relative_to(root)), cv2.imread(str(img)), js


def evaluate(
    tally: Tally,
    name: str,
    image: np.ndarray | None,
    counts: list[int],
    bigs: list[int],
    corners: np.ndarray,
    config: VisionConfig,
    extra: dict[str, Any],
    oracle: bool = False,
    annotate: Path | None = None,
) -> None:
    """Run read_board on one image and add its errors to the tally.

    With ``annotate``, a failing image (board not found or off by 3% of the
    diagonal, a square off by two or more, a big stone wrong) is written
    there with what vision saw and, in green, the true outline and counts.
    """
    tally.images += 1
    if image is None:
        tally.rows.append({"image": name, "found": False, "reason": "unreadable"})
        return
    # A configured lens is undone first, as the app does: the truth stays in the photo as
    # taken, where corners are compared, and is moved to the frame as read to be drawn.
    raw_shape = image.shape
    seen = undistort_points(corners, raw_shape, config.lens)
    t0 = time.perf_counter()
    image = undistort(image, config.lens)
    outline = outline_from_corners(seen, config.locate.arc_depth) if oracle else None
    reading = read_board(image, config, outline=outline, gate=False)
    ms = (time.perf_counter() - t0) * 1000
    key = f"{image.shape[1]}x{image.shape[0]}"
    tally.latency.setdefault(key, []).append(ms)
    row: dict[str, Any] = {"image": name, "found": reading.found, "ms": round(ms, 1), **extra}
    row["quality"] = round(float(reading.quality), 4)
    if not reading.found or reading.corners is None or not reading.squares:
        row["reason"] = reading.reason
        tally.rows.append(row)
        if annotate is not None:
            _write_failure(annotate, name, image, reading, seen, counts, bigs, "not found")
        return
    tally.found += 1
    raw_corners = distort_points(reading.corners, raw_shape, config.lens)
    if reading.outline is not None:  # a board check beside the chalk fit's quality
        from vision.count import densities, inside_share

        dens, labels, _ = densities(image, reading.outline, config.count)
        row["inside_share"] = round(inside_share(dens, labels), 4)
        row["pred_corners"] = np.round(raw_corners, 1).tolist()
    if "count" in reading.timings_ms:
        tally.count_ms.setdefault(key, []).append(reading.timings_ms["count"])
    err = float(np.linalg.norm(raw_corners - corners, axis=1).mean())
    diag = float(np.linalg.norm(corners[2] - corners[0]))
    tally.corner_px.append(err)
    tally.corner_frac.append(err / max(diag, 1e-6))
    pred = [sq.count for sq in reading.squares]
    pbig = [sq.big for sq in reading.squares]
    tally.true.extend(counts)
    tally.pred.extend(pred)
    if err / max(diag, 1e-6) < 0.03:
        tally.true_good.extend(counts)
        tally.pred_good.extend(pred)
    tally.big_ok.extend(pbig[i] == bigs[i] for i in MANDARINS)
    exact = pred == counts
    tally.all_exact += int(exact)
    row.update(
        corner_frac=round(err / max(diag, 1e-6), 5),
        conf=[round(sq.confidence, 4) for sq in reading.squares],
        p_true=[
            round(sq.probs[t], 5) if t < len(sq.probs) else 0.0
            for sq, t in zip(reading.squares, counts, strict=True)
        ],
        big_prob=[round(sq.big_prob, 4) for sq in reading.squares],
        corner_px=round(err, 1),
        all_exact=exact,
        wrong=sum(p != t for p, t in zip(pred, counts, strict=True)),
        true=counts,
        pred=pred,
        big=bigs,
        pred_big=pbig,
    )
    tally.rows.append(row)
    if annotate is not None:
        why = []
        if err / max(diag, 1e-6) >= 0.03:
            why.append(f"corners off {100 * err / diag:.0f}% of diagonal")
        if any(abs(p - t) >= 2 for p, t in zip(pred, counts, strict=True)):
            why.append("count off by 2+")
        if any(pbig[i] != bigs[i] for i in MANDARINS):
            why.append("big stone wrong")
        if why:
            why_all = "; ".join(why)
            _write_failure(annotate, name, image, reading, seen, counts, bigs, why_all)


def _write_failure(
    folder: Path,
    name: str,
    image: np.ndarray,
    reading: Any,
    corners: np.ndarray,
    counts: list[int],
    bigs: list[int],
    why: str,
) -> None:
    """Half-size JPEG: vision's reading (yellow/white), the truth (green), and why it failed."""
    from vision.annotate import annotate
    from vision.locate import outline_from_corners

    out = annotate(image, reading)
    truth = outline_from_corners(corners, 0.95)
    scale = max(0.4, out.shape[1] / 1600.0)
    cv2.polylines(out, [np.rint(corners).astype(np.int32)], True, (0, 200, 0), 2, cv2.LINE_AA)
    for i, poly in enumerate(truth.regions):
        c = poly.mean(axis=0)
        label = f"{counts[i]}" + ("+Q" if bigs[i] else "")
        org = (round(c[0] - 30 * scale), round(c[1] + 28 * scale))
        for ink, width in (((0, 0, 0), 4), ((0, 230, 0), 2)):
            cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.7 * scale, ink, width)
    h = out.shape[0]
    for ink, width in (((0, 0, 0), 4), ((0, 230, 0), 2)):
        cv2.putText(
            out, f"{name}: {why}", (10, h - 15), cv2.FONT_HERSHEY_SIMPLEX, scale, ink, width
        )
    small = cv2.resize(out, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / (name.replace("/", "_").rsplit(".", 1)[0] + ".jpg")), small)


def _count_lines(t: np.ndarray, p: np.ndarray, what: str) -> list[str]:
    """Per-bucket count accuracy lines."""
    return [f"-- counts over {what} ({t.size} squares)", *bucket_lines(t, p, empty=True)]


def report(tally: Tally, title: str) -> str:
    """Human-readable summary of a tally."""
    lines = [f"== {title}: {tally.images} images"]
    n = max(tally.images, 1)
    lines.append(f"board found: {tally.found}/{tally.images} = {100 * tally.found / n:.1f}%")
    if tally.corner_px:
        lines.append(
            f"corner error: mean {np.mean(tally.corner_px):.1f} px, median "
            f"{np.median(tally.corner_px):.1f} px; mean {100 * np.mean(tally.corner_frac):.2f}% "
            f"of board diagonal; boards within 3%: "
            f"{100 * np.mean(np.array(tally.corner_frac) < 0.03):.1f}%"
        )
    if tally.corner_frac:
        good = int(np.sum(np.array(tally.corner_frac) < 0.03))
        lines.append(
            f"board found and within 3% of diagonal: {good}/{tally.images} = {100 * good / n:.1f}%"
        )
    t = np.array(tally.true)
    p = np.array(tally.pred)
    lines.extend(_count_lines(t, p, "all found boards"))
    lines.extend(
        _count_lines(
            np.array(tally.true_good), np.array(tally.pred_good), "boards located within 3%"
        )
    )
    if t.size:
        lines.append(f"all squares MAE {np.abs(p - t).mean():.3f}")
        lines.append(
            f"big stone accuracy: {100 * np.mean(tally.big_ok):.1f}% (n={len(tally.big_ok)})"
        )
        lines.append(
            f"images with all 12 exact: {tally.all_exact}/{tally.found} found "
            f"({100 * tally.all_exact / max(tally.found, 1):.1f}%), "
            f"{100 * tally.all_exact / n:.1f}% of all"
        )
    for size, ms in sorted(tally.latency.items()):
        if size in tally.count_ms:
            cm = tally.count_ms[size]
            lines.append(
                f"counting {size}: median {np.median(cm):.0f} ms, p95 {np.percentile(cm, 95):.0f} ms"
            )
        lines.append(
            f"latency {size}: median {np.median(ms):.0f} ms, p95 "
            f"{np.percentile(ms, 95):.0f} ms (n={len(ms)}, 1 thread)"
        )
    return "\n".join(lines)


def conditions_of(data: dict[str, Any]) -> dict[str, Any]:
    """The conditions the figures are split by, from render-public's, training/render's or
    the wide generator's truth: ground and piece family, light, tilt bucket, hand, lens."""
    cond = data.get("conditions", {})
    pieces = cond.get("pieces")
    piece = cond.get("piece_family") or (pieces.get("kind") if isinstance(pieces, dict) else pieces)
    light = cond.get("light")
    tilt = cond.get("tilt_deg", (cond.get("camera") or {}).get("tilt_deg"))
    bucket = None
    if isinstance(tilt, int | float):
        bucket = next(
            f"{lo}-{hi}" for lo, hi in TILT_BUCKETS if tilt < hi or hi == TILT_BUCKETS[-1][1]
        )
    k1 = lens_of(data)
    lens = "pinhole" if k1 == 0.0 else "pincushion" if k1 > 0 else "barrel"
    if k1 <= -LENS_WIDE:
        lens = "wide barrel"
    return {
        "lens": lens,
        "hand": bool(data.get("hand", {}).get("present", False)),
        "ground": cond.get("ground_family") or cond.get("ground"),
        "piece": piece,
        "light": light.get("type") if isinstance(light, dict) else light,
        "tilt": bucket,
    }


TILT_BUCKETS = [(0, 15), (15, 30), (30, 45), (45, 90)]
#: a barrel this strong (k1) or more is reported apart: wide lenses (Camera Module 3 Wide)
LENS_WIDE = 0.1


def _selected(
    name: str, only: str | None, fold: tuple[int, int] | None, first: int | None = None
) -> bool:
    """Subset filter: path substring, first image index, and index modulo the fold count.

    Folds follow ``bench/train_counter.py``: sorted images of one folder, index % n.
    """
    if only is not None and only not in name:
        return False
    if first is not None and image_index(name) < first:
        return False
    if fold is None:
        return True
    return image_index(name) % fold[1] == fold[0]


def image_index(name: str) -> int:
    """Image number within its folder (img_00042.jpg -> 42)."""
    return int("".join(ch for ch in Path(name).stem if ch.isdigit()) or 0)


def run_dataset(
    root: Path,
    config: VisionConfig,
    limit: int | None,
    only: str | None = None,
    fold: tuple[int, int] | None = None,
    oracle: bool = False,
    cv_dir: Path | None = None,
    cv_folds: int = 4,
    big_cv_dir: Path | None = None,
    annotate: Path | None = None,
    first: int | None = None,
    lens_from_truth: bool = False,
) -> Tally:
    """Evaluate every selected image of a dataset folder; ``lens_from_truth``: undo each
    photo's lens with the k1 its truth records, as a camera calibrated exactly would."""
    tally = Tally()
    done = 0
    for name, image, js in dataset_items(root):
        if not _selected(name, only, fold, first):
            continue
        if limit is not None and done >= limit:
            break
        done += 1
        fold_model = f"fold{image_index(name) % cv_folds}.onnx"
        count = config.count
        if cv_dir is not None:
            count = replace(count, model=str(cv_dir / fold_model))
        if big_cv_dir is not None:
            count = replace(count, big_model=str(big_cv_dir / fold_model))
        counts, bigs, corners = load_truth(js)
        data = json.loads(js.read_text("utf-8"))
        extra = conditions_of(data)
        image_config = replace(config, count=count)
        if lens_from_truth:
            image_config = replace(image_config, lens=Lens(lens_of(data)))
        evaluate(tally, name, image, counts, bigs, corners, image_config, extra, oracle, annotate)
    return tally


def run_synth(
    n: int, seed: int, config: VisionConfig, save: Path | None, annotate: Path | None = None
) -> Tally:
    from vision.synth import random_position, render_scene

    tally = Tally()
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        counts, big = random_position(rng)
        image, truth = render_scene(counts, big, seed=seed * 100_003 + i)
        bigs = [big[0]] + [0] * 5 + [big[1]] + [0] * 5
        name = f"synth_{seed}_{i:05d}"
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(save / f"{name}.png"), image)
            (save / f"{name}.json").write_text(json.dumps(truth), "utf-8")
        extra = {"ground": truth["conditions"]["ground"]}
        corners = np.array(truth["corners"])
        evaluate(tally, name, image, counts, bigs, corners, config, extra, annotate=annotate)
    return tally


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", nargs="?", type=Path, help="folder with images + truth JSON")
    ap.add_argument("--synth", type=int, metavar="N", help="evaluate N generated scenes")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated scenes")
    ap.add_argument("--save", type=Path, help="also write the generated scenes here")
    ap.add_argument("--config", help="vision TOML config")
    ap.add_argument("--limit", type=int, help="evaluate at most this many images")
    ap.add_argument("--csv", type=Path, help="write one row per image")
    ap.add_argument("--annotate", type=Path, help="write failing images, annotated, here")
    ap.add_argument("--oracle-corners", action="store_true", help="count on the true outline")
    ap.add_argument(
        "--truth-lens",
        action="store_true",
        help="undo each photo's lens with the k1 its truth records (a calibrated camera)",
    )
    ap.add_argument("--only", help="evaluate only images whose path contains this")
    ap.add_argument("--fold", help="K/N: only images whose index %% N == K")
    ap.add_argument("--first-index", type=int, help="only images numbered at least this")
    ap.add_argument(
        "--dump", type=Path, help="write every image's row as JSON lines (bench/vision_report.py)"
    )
    ap.add_argument("--model", type=Path, help="counter network (ONNX) to use instead")
    ap.add_argument("--cv-dir", type=Path, help="folder of foldK.onnx cross-validation models")
    ap.add_argument("--big-model", type=Path, help="big-stone classifier (ONNX) to use instead")
    ap.add_argument("--big-cv-dir", type=Path, help="folder of foldK.onnx big-stone CV models")
    args = ap.parse_args(argv)
    fold = None
    if args.fold:
        k, n = (int(v) for v in args.fold.split("/"))
        fold = (k, n)
    if args.dataset is None and not args.synth:
        ap.error("give DATASET_DIR or --synth N")
    cv2.setNumThreads(1)
    keep_freed_memory()  # (as every oanquan command does: companion.appliance.memory)
    config = load_config(args.config) if args.config else VisionConfig()
    if args.model is not None:
        config = replace(config, count=replace(config.count, model=str(args.model)))
    if args.big_model is not None:
        config = replace(config, count=replace(config.count, big_model=str(args.big_model)))
    tallies: list[tuple[str, Tally]] = []
    if args.dataset is not None:
        title = str(args.dataset)
        if args.only or fold or args.first_index:
            title += f" [only={args.only} fold={args.fold} first={args.first_index}]"
        if args.oracle_corners:
            title += " [oracle corners]"
        if args.truth_lens:
            title += " [lens from truth]"
        if args.cv_dir:
            title += f" [CV models {args.cv_dir}]"
        if args.big_cv_dir:
            title += f" [big-stone CV models {args.big_cv_dir}]"
        tally = run_dataset(
            args.dataset,
            config,
            args.limit,
            args.only,
            fold,
            args.oracle_corners,
            args.cv_dir,
            big_cv_dir=args.big_cv_dir,
            annotate=args.annotate,
            first=args.first_index,
            lens_from_truth=args.truth_lens,
        )
        tallies.append((title, tally))
    if args.synth:
        tallies.append(
            (
                f"synth n={args.synth} seed={args.seed}",
                run_synth(args.synth, args.seed, config, args.save, args.annotate),
            )
        )
    for title, tally in tallies:
        print(report(tally, title))
        if args.dump:
            with open(args.dump, "a", encoding="utf-8") as fh:
                for r in tally.rows:
                    fh.write(json.dumps({"set": title, **r}) + "\n")
        if args.csv:
            with open(args.csv, "w", newline="", encoding="utf-8") as fh:
                keys = sorted({k for r in tally.rows for k in r})
                wr = csv.DictWriter(fh, fieldnames=keys)
                wr.writeheader()
                wr.writerows(tally.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
