"""Train the board-line network on rendered scenes and export it as ONNX for cv2.dnn.

    python -m training.finder --data ~/.cache/oanquan/renders/train-v4 --holdout 19/20 \
        --minutes 40 --out vision/models/boardlines.onnx

Targets are the board's drawn lines rasterised from each scene's region polygons
(every square's and both semicircles' outlines) at the chalk's width in the image
(``conditions.lines.width_mm`` against the square size). Inputs are random crops at
random scale, rotation and flip, with colour, blur, noise, hard-shadow and JPEG
changes. Scenes whose index % N == K (``--holdout K/N``) are never trained on; a few
of them give the validation F1 printed while training. Scenes still being rendered
are picked up as they appear. Seeds are fixed; the step budget is a wall-time one
(``--minutes``), so runs on a loaded machine differ in length, not in recipe.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch
from torch import nn

from training.augment import ColourJitter
from training.counter.calibrate import in_fold, parse_fold
from training.nets import conv_bn_relu, export_onnx
from training.render.lens import pinhole_only
from vision import detect

#: The locator's work width for a 640 px render is 480: the net sees that scale, +-.
WORK_SCALE = 0.75
CROP = 192  # training window, input px (square)
LR = 4e-3
JOINTS_P = 0.35  # share of crops given a floor of joints (``_joints``)
#: share of crops of a bare floor (sensor noise, blotches, joints, no board): the
#: renders always hold a board near the middle, and a net never shown a floor without
#: one marks lines on it (a board "found" on blank ground)
BLANK_P = 0.0


@dataclass
class Scene:
    """One render: the encoded JPEG (decoded per sample) and its line polylines."""

    name: str
    jpeg: np.ndarray
    lines: list[np.ndarray]  # closed polygons, image px
    width_px: float  # chalk width in image px

    def image(self) -> np.ndarray:
        """The render decoded (a ValueError naming the scene if its JPEG will not)."""
        img = cv2.imdecode(self.jpeg, cv2.IMREAD_COLOR)
        if img is None:
            raise ValueError(f"cannot decode the JPEG of scene {self.name}")
        return img


def _width_px(data: dict[str, Any]) -> float:
    """Chalk width in image px: width_mm over the square size, times the square in px."""
    c = np.array(data["corners"], np.float64)
    cm = np.array(data["board_m"]["corners"], np.float64)
    long_px = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 10.0
    short_px = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 4.0
    long_m = (np.linalg.norm(cm[1] - cm[0]) + np.linalg.norm(cm[2] - cm[3])) / 10.0
    short_m = (np.linalg.norm(cm[3] - cm[0]) + np.linalg.norm(cm[2] - cm[1])) / 4.0
    sq_px, sq_m = (long_px + short_px) / 2.0, (long_m + short_m) / 2.0
    lines = data.get("conditions", {}).get("lines", {})
    width_m = float(lines.get("width_mm", 20.0)) / 1000.0
    return float(width_m / max(float(sq_m), 1e-6) * sq_px)


def load_scenes(
    folder: Path, holdout: tuple[int, int] | None, val: bool, seen: set[str]
) -> list[Scene]:
    """Scenes of ``folder`` not in ``seen``: the holdout fold when ``val``, else the rest."""
    out = []
    for js in sorted(folder.glob("img_*.json")):
        if js.name in seen or not js.with_suffix(".jpg").exists():
            continue
        if holdout is not None and in_fold(js.name, holdout) != val:
            continue
        try:
            data = json.loads(js.read_text("utf-8"))
        except (OSError, json.JSONDecodeError):
            continue  # being written
        pinhole_only(data, js)
        raw = np.fromfile(str(js.with_suffix(".jpg")), np.uint8)
        if raw.size == 0:
            continue
        seen.add(js.name)
        polys = [np.array(r["polygon"], np.float64) for r in data["regions"].values()]
        out.append(Scene(js.stem, raw, polys, _width_px(data)))
    return out


def target(
    lines: list[np.ndarray], m: np.ndarray, size: tuple[int, int], width: float
) -> np.ndarray:
    """Line mask (0/1 float) of the polygons mapped by the 2x3 affine ``m``, 4x supersampled."""
    w, h = size
    ss = 4
    canvas = np.zeros((h * ss, w * ss), np.uint8)
    thick = max(1, round(width * ss))
    for p in lines:
        q = p @ m[:, :2].T + m[:, 2]
        pts = np.round(q * ss * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(canvas, [pts], True, 255, thick, cv2.LINE_8, 4)
    small = cv2.resize(canvas, (w, h), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32) / 255.0


#: colour changes of a training crop, a hard shadow edge included (shadows beat faint chalk)
COLOUR = ColourJitter(
    white_balance=(0.7, 1.3),
    gamma=(0.6, 1.5),
    contrast=(0.6, 1.3),
    shift=0.12,
    desat_p=0.15,
    desat_keep=0.5,
    shadow_p=0.3,
    blur_p=0.35,
    blur_sigma=(0.4, 1.5),
    noise=0.04,
    jpeg_p=0.4,
    jpeg_quality=(25, 90),
)


def _joints(crop: np.ndarray, lines: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A floor of joints under the chalk: cells of random size and aspect, stacked or
    offset row by row (tiles, slabs, any bond of bricks), each cell's shade varied,
    in a random perspective. Joints are long, straight and regular like a board's
    lines, so they must be learnt as not-board; ``lines`` (0..1, crop size) stays on top.
    """
    size = 2 * CROP
    cw = rng.uniform(12, 50)
    ch = cw * rng.uniform(0.3, 1.0)
    bond = float(rng.choice([0.0, 0.5, rng.uniform(0, 1)]))
    shade = np.ones((size, size), np.float32)
    joint = np.zeros((size, size), np.uint8)
    spread = rng.uniform(0.0, 0.2)
    thick = int(rng.integers(1, 4))
    for r in range(int(size / ch) + 2):
        y0 = r * ch
        off = (r * bond % 1.0) * cw
        for c in range(-1, int(size / cw) + 2):
            x0 = c * cw + off
            p0 = (int(x0), int(y0))
            p1 = (int(x0 + cw), int(y0 + ch))
            cv2.rectangle(shade, p0, p1, float(1 + rng.normal(0, spread)), -1)
            cv2.rectangle(joint, p0, p1, 255, thick)
    src = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32)
    jit = rng.uniform(-0.25, 0.25, (4, 2)) * CROP
    dst = np.array([[0, 0], [CROP, 0], [CROP, CROP], [0, CROP]], np.float32) * rng.uniform(1.0, 2.5)
    m = cv2.getPerspectiveTransform(src, (dst + jit).astype(np.float32))
    rot = cv2.getRotationMatrix2D((CROP / 2, CROP / 2), rng.uniform(0, 360), 1.0)
    m = np.vstack([rot, [0, 0, 1]]) @ m
    jm = cv2.warpPerspective(joint, m, (CROP, CROP)).astype(np.float32) / 255.0
    sm = cv2.warpPerspective(shade, m, (CROP, CROP), borderValue=1.0)
    x = crop.astype(np.float32) * np.clip(sm, 0.5, 1.5)[..., None]
    tone = x.reshape(-1, 3).mean(axis=0) * rng.uniform(0.4, 1.8)
    if rng.random() < 0.3:
        tone = rng.uniform(30, 230, 3)
    a = jm * rng.uniform(0.4, 1.0) * (1.0 - lines)
    x = x * (1 - a[..., None]) + tone[None, None, :] * a[..., None]
    out: np.ndarray = np.clip(x, 0, 255).astype(np.uint8)
    return out


def bare_floor(rng: np.random.Generator) -> np.ndarray:
    """A crop of ground with no board: noise of any level and grain, blotches, joints."""
    base = rng.uniform(30, 225, 3)
    grain = rng.normal(0.0, rng.uniform(2, 25), (CROP, CROP, 3))
    blot = np.asarray(
        cv2.GaussianBlur(rng.normal(0.0, 1.0, (CROP, CROP)), (0, 0), rng.uniform(3, 30)), np.float64
    )  # float64 as its input: the asarray only tells mypy (the same array, no copy)
    blot *= rng.uniform(0, 40) / max(float(blot.std()), 1e-6)
    x = np.clip(base[None, None, :] + grain + blot[..., None], 0, 255).astype(np.uint8)
    if rng.random() < JOINTS_P:
        x = _joints(x, np.zeros((CROP, CROP), np.float32), rng)
    return np.asarray(COLOUR(x, rng), np.uint8)


def sample(
    s: Scene, rng: np.random.Generator, blank: float = BLANK_P
) -> tuple[np.ndarray, np.ndarray]:
    """A random crop at a random scale, rotation and flip, and its half-resolution target
    (a share ``blank`` of them a bare floor, whose target is empty)."""
    if rng.random() < blank:
        return bare_floor(rng), np.zeros((CROP // 2, CROP // 2), np.float32)
    img = s.image()
    h, w = img.shape[:2]
    scale = WORK_SCALE * float(np.exp(rng.uniform(np.log(0.55), np.log(1.5))))
    ang = rng.uniform(-25, 25) if rng.random() < 0.5 else 0.0
    # crop centre: near the board most of the time (its lines are the rare class)
    if rng.random() < 0.7:
        allp = np.concatenate(s.lines)
        cx, cy = allp[rng.integers(len(allp))] + rng.normal(0, 40, 2)
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), ang, scale)
    m[:, 2] += np.array([CROP / 2 - cx, CROP / 2 - cy])
    if rng.random() < 0.5:
        m = np.array([[-1, 0, CROP], [0, 1, 0]], np.float64) @ np.vstack([m, [0, 0, 1]])
    crop = cv2.warpAffine(
        img,
        m,
        (CROP, CROP),
        flags=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REFLECT,
    )
    if rng.random() < JOINTS_P:
        full = target(s.lines, m, (CROP, CROP), s.width_px * scale)
        crop = _joints(crop, full, rng)
    crop = COLOUR(crop, rng)
    half = np.array([[0.5, 0, -0.25], [0, 0.5, -0.25]]) @ np.vstack([m, [0, 0, 1]])
    t = target(s.lines, half, (CROP // 2, CROP // 2), s.width_px * scale * 0.5)
    return crop, t


#: channels of e1, e2, e3, e4, e5-e8, d1-d2 and d3-d4: the shipped net's
WIDTHS = (12, 16, 24, 32, 48, 32, 16)


class LineNet(nn.Module):
    """Encoder to 1/8 with dilated context (a tile grid runs on, a board stops),
    decoder back to 1/2 with skips; logits of 'on a board line' at half resolution.
    Takes BGR 0..255 (normalised inside, so cv2.dnn needs no blob scaling).
    ``widths``: the channels (``WIDTHS``); a narrower net is a cheaper student."""

    def __init__(self, widths: tuple[int, ...] = WIDTHS) -> None:
        super().__init__()
        a1, a2, b1, b2, c, d, e = widths
        self.e1 = conv_bn_relu(3, a1, 2)  # 1/2
        self.e2 = conv_bn_relu(a1, a2)
        self.e3 = conv_bn_relu(a2, b1, 2)  # 1/4
        self.e4 = conv_bn_relu(b1, b2)
        self.e5 = conv_bn_relu(b2, c, 2)  # 1/8
        self.e6 = conv_bn_relu(c, c, 1, 2)
        self.e7 = conv_bn_relu(c, c, 1, 4)
        self.e8 = conv_bn_relu(c, c, 1, 8)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.d1 = conv_bn_relu(c + b2, d, k=1)
        self.d2 = conv_bn_relu(d, d)
        self.d3 = conv_bn_relu(d + a2, e, k=1)
        self.d4 = conv_bn_relu(e, e)
        self.head = nn.Conv2d(e, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * (1.0 / 255.0) - 0.5
        a = self.e2(self.e1(x))
        b = self.e4(self.e3(a))
        c = self.e8(self.e7(self.e6(self.e5(b))))
        y = self.d2(self.d1(torch.cat([b, self.up(c)], 1)))
        y = self.d4(self.d3(torch.cat([a, self.up(y)], 1)))
        return self.head(y)


def teacher_probs(model: Path, x: torch.Tensor) -> torch.Tensor:
    """A shipped line network's probabilities on a batch (``vision.detect.forward``, the
    app's cached cv2.dnn loader): a student's targets."""
    logits = detect.forward(np.ascontiguousarray(x.numpy()), str(model))
    return torch.from_numpy(1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0))))


def widths_arg(text: str) -> tuple[int, ...]:
    """``--widths``: as many positive channel counts as ``WIDTHS`` holds."""
    try:
        widths = tuple(int(v) for v in text.split(","))
    except ValueError:
        widths = ()
    if len(widths) != len(WIDTHS) or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"{len(WIDTHS)} positive integers, got {text!r}")
    return widths


def _batch(
    scenes: list[Scene], n: int, rng: np.random.Generator, blank: float = BLANK_P
) -> tuple[torch.Tensor, torch.Tensor]:
    xs, ts = zip(
        *(sample(scenes[int(rng.integers(len(scenes)))], rng, blank) for _ in range(n)),
        strict=True,
    )
    x = torch.from_numpy(np.stack(xs).transpose(0, 3, 1, 2).astype(np.float32))
    t = torch.from_numpy(np.stack(ts)[:, None])
    return x, t


def predict(net: LineNet, img: np.ndarray) -> np.ndarray:
    """Probability at half resolution of a whole image (eval mode)."""
    x = torch.from_numpy(img.transpose(2, 0, 1)[None].astype(np.float32))
    with torch.no_grad():
        p: np.ndarray = torch.sigmoid(net(x))[0, 0].numpy()
        return p


def val_f1(net: LineNet, scenes: list[Scene]) -> float:
    """Pixel F1 at p > 0.5 on whole validation frames at the work scale."""
    net.eval()
    tp = fp = fn = 0.0
    for s in scenes:
        img = s.image()
        h, w = img.shape[:2]
        size = (round(w * WORK_SCALE), round(h * WORK_SCALE))
        work = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
        p = predict(net, work) > 0.5
        m = np.array([[WORK_SCALE / 2, 0, -0.25], [0, WORK_SCALE / 2, -0.25]])
        t = target(s.lines, m, (p.shape[1], p.shape[0]), s.width_px * WORK_SCALE / 2) > 0.5
        tp += float((p & t).sum())
        fp += float((p & ~t).sum())
        fn += float((~p & t).sum())
    net.train()
    return 2 * tp / max(2 * tp + fp + fn, 1.0)


def export(net: nn.Module, path: Path, w: int = 480, h: int = 360) -> None:
    """ONNX for cv2.dnn: opset 13 from the TorchScript exporter."""
    export_onnx(net, path, torch.zeros(1, 3, h, w))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, action="append", required=True)
    ap.add_argument("--holdout", default="19/20", help="K/N: scenes with index %% N == K kept out")
    ap.add_argument("--minutes", type=float, default=40.0, help="wall-time budget of the steps")
    ap.add_argument("--max-steps", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--val", type=int, default=24, help="validation frames for the F1 printout")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads (1 is fastest on a shared box)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", type=Path, help="start from these weights (a .pt this script saved)")
    ap.add_argument(
        "--lr", type=float, default=LR, help="peak learning rate (lower to fine-tune from --init)"
    )
    ap.add_argument(
        "--blank", type=float, default=BLANK_P, help="share of crops of a bare floor (no board)"
    )
    ap.add_argument(
        "--widths",
        type=widths_arg,
        default=WIDTHS,
        help="channels of e1,e2,e3,e4,e5-e8,d1-d2,d3-d4 (the shipped net's by default)",
    )
    ap.add_argument(
        "--teacher",
        type=Path,
        help="learn this line network's (ONNX) probabilities instead of the drawn lines",
    )
    args = ap.parse_args(argv)
    try:
        holdout = parse_fold(args.holdout)
    except ValueError as exc:
        print(f"--holdout: {exc}", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(args.threads)
    rng = np.random.default_rng(args.seed)
    seen: set[str] = set()
    vseen: set[str] = set()
    train = [s for f in args.data for s in load_scenes(f, holdout, False, seen)]
    val = [s for f in args.data for s in load_scenes(f, holdout, True, vseen)][: args.val]
    if not train:
        print("no training scenes in " + ", ".join(map(str, args.data)), file=sys.stderr)
        return 2
    print(f"{len(train)} training scenes, {len(val)} validation frames", flush=True)
    teacher: Path | None = args.teacher
    net = LineNet(args.widths)
    if args.init is not None:
        net.load_state_dict(torch.load(args.init))
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    # (a teacher's probabilities already lean to the lines as its pos_weight made them:
    # the student matches them with the plain loss)
    pos_w = torch.tensor(1.0 if teacher is not None else 4.0)
    lossf = nn.BCEWithLogitsLoss(pos_weight=pos_w)
    t0 = time.monotonic()
    budget = args.minutes * 60.0
    step, run = 0, 0.0
    while step < args.max_steps:
        frac = (time.monotonic() - t0) / budget
        if frac >= 1.0:
            break
        for g in opt.param_groups:  # cosine on wall time: the budget, not a step count
            g["lr"] = args.lr * 0.5 * (1 + np.cos(np.pi * min(frac, 1.0))) + 1e-5
        x, t = _batch(train, args.batch, rng, args.blank)
        if teacher is not None:
            t = teacher_probs(teacher, x)
        loss = lossf(net(x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        run = 0.98 * run + 0.02 * loss.item() if step else loss.item()
        step += 1
        if step % 100 == 0:
            el = time.monotonic() - t0
            print(
                f"step {step} loss {run:.4f} {el / step:.2f} s/step, {el / 60:.1f} min", flush=True
            )
        if step % 1000 == 0:
            train += [s for f in args.data for s in load_scenes(f, holdout, False, seen)]
            print(f"val F1 {val_f1(net, val):.3f} ({len(train)} scenes)", flush=True)
            export(net, args.out)
            torch.save(net.state_dict(), args.out.with_suffix(".pt"))
            net.train()
    print(f"{step} steps; val F1 {val_f1(net, val):.3f}", flush=True)
    export(net, args.out)
    torch.save(net.state_dict(), args.out.with_suffix(".pt"))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
