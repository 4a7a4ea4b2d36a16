"""Render a dataset: `python -m training.render --dataset train-v4 [--count N] [--size WxH]`.

Resumable (a scene whose .json and .jpg both exist is skipped), deterministic (scene i is
seed seed_start+i of the manifest), one CPU thread, progress with rate and time left.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from training.render.datasets import ManifestError, cache_dir, load_manifest, write_settings


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 640x480, got {text!r}") from None
    if not (64 <= w <= 8192 and 64 <= h <= 8192):
        raise argparse.ArgumentTypeError(f"size out of range: {text}")
    return w, h


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m training.render", description=__doc__)
    ap.add_argument(
        "--dataset", default="train-v4", help="manifest name in training/render/datasets"
    )
    ap.add_argument("--count", type=int, default=None, help="render the first N scenes only")
    ap.add_argument("--start", type=int, default=0, help="first scene index")
    ap.add_argument("--size", type=_size, default=(1280, 960), help="WxH, default 1280x960")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default $OANQUAN_CACHE/renders/<dataset>)",
    )
    ap.add_argument("--keep-png", action="store_true", help="keep the renderer's PNG too")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        ds = load_manifest(args.dataset)
    except ManifestError as e:
        print(f"render: {e}", file=sys.stderr)
        return 2
    out = args.out or cache_dir(ds.name)
    out.mkdir(parents=True, exist_ok=True)
    from training.render.sample import GENERATOR_VERSION, sample_scene

    if ds.generator != GENERATOR_VERSION:
        print(
            f"render: manifest {ds.name} wants {ds.generator!r}, this is {GENERATOR_VERSION!r}",
            file=sys.stderr,
        )
        return 2
    from training.render import blender  # bpy only from here on
    from training.render.post import apply_post
    from training.render.truth import truth_of_render

    w, h = args.size
    todo = [(i, s) for i, s in ds.seeds(args.count) if i >= args.start]
    pending = [
        (i, s)
        for i, s in todo
        if not ((out / f"img_{i:05d}.json").exists() and (out / f"img_{i:05d}.jpg").exists())
    ]
    print(
        f"render: {ds.name} -> {out}: {len(todo) - len(pending)} of {len(todo)} done, "
        f"{len(pending)} to go at {w}x{h}",
        flush=True,
    )
    settings = ds.settings() | {"size": [w, h]}
    write_settings(out / "dataset.json", settings, indent=1)
    t_start = time.time()
    tmp = Path(tempfile.mkdtemp(prefix="oanquan-render-"))
    for n, (i, seed) in enumerate(pending, 1):
        t0 = time.time()
        spec = sample_scene(
            i,
            seed,
            dataset=ds.name,
            width=w,
            height=h,
            grounds=ds.grounds,
            pieces=ds.pieces,
            lens=ds.lens,
            piece_scale=ds.piece_scale,
        )
        png = tmp / f"img_{i:05d}.png"
        res = blender.render_scene(spec, str(png))
        name = f"img_{i:05d}.jpg"
        lens_k1 = spec.conditions["camera"].get("lens_k1", 0.0)
        apply_post(png, tmp / name, spec.conditions["post"], w, lens_k1)
        truth = truth_of_render(spec, name, res, time.time() - t0)
        (tmp / name).replace(out / name)  # the jpg first: a json means the pair is complete
        js = out / f"img_{i:05d}.json"
        js.with_suffix(".part").write_text(json.dumps(truth, separators=(",", ":")))
        js.with_suffix(".part").replace(js)
        if args.keep_png:
            png.replace(out / png.name)
        else:
            png.unlink(missing_ok=True)
        el = time.time() - t_start
        rate = el / n
        left = rate * (len(pending) - n)
        print(
            f"[{n}/{len(pending)}] img_{i:05d} {time.time() - t0:.1f}s "
            f"(render {res['render_seconds']:.1f}s, physics {res['physics']['seconds']:.1f}s) "
            f"avg {rate:.1f}s/img, left {left / 3600:.1f} h",
            flush=True,
        )
    with contextlib.suppress(OSError):
        os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
