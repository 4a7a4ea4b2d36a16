"""Time each shipped network on OpenCV's dnn, and on ONNX Runtime where it is installed.

    python bench/runtimes.py                 # one thread, the inputs of a 1280x960 frame
    python bench/runtimes.py --repeat 50 --threads 4

vision runs its networks through ``cv2.dnn`` only (numpy and OpenCV are all it may
import). This measures what another runtime would win on the machine it runs on (a Pi
first of all), with the shapes one frame feeds each network, and checks that both give
the same outputs. ``pip install onnxruntime`` into the venv to compare; without it only
OpenCV's times are printed. Each time is the median of ``--repeat`` forwards after one
warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision import detect, spread, squares
from vision.config import VisionConfig
from vision.locate.ridges import downscale


def shapes(
    config: VisionConfig, frame: tuple[int, int] = (1280, 960)
) -> list[tuple[str, tuple[int, ...], str]]:
    """(model path, input shape, what it does) of every network one frame meets; the tally's
    detector runs four times (mirrored views) on a still."""
    work, _ = downscale(np.zeros((frame[1], frame[0], 3), np.uint8), config.locate.work_width)
    cw, ch, _ = detect.canvas(config.count.px_per_square)
    sw, sh, _ = spread.canvas()
    mw, mh = squares.MANDARIN_SIZE
    count = config.count
    return [
        (config.locate.line_model, (1, 3, *work.shape[:2]), "board lines"),
        (count.model, (1, 3, ch, cw), "counter (density)"),
        (count.square_model, (10, 3, squares.SIZE, squares.SIZE), "citizen squares"),
        (count.mandarin_model, (2, 3, mh, mw), "mandarins' pieces"),
        (count.mandarin_big_model, (2, 3, mh, mw), "big stones"),
        (count.spread_model, (1, 3, sh, sw), "tally detector (x4 a still)"),
    ]


def median_ms(run: Callable[[], object], repeat: int) -> float:
    run()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=20, help="forwards per network (default 20)")
    ap.add_argument("--threads", type=int, default=1, help="threads for both runtimes (default 1)")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.threads < 1:
        print("bench/runtimes.py: --repeat and --threads must be at least 1", file=sys.stderr)
        return 2
    cv2.setNumThreads(args.threads)
    try:
        import onnxruntime as ort  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        ort = None
        print("onnxruntime is not installed: OpenCV's dnn only")
    rng = np.random.default_rng(0)
    totals = [0.0, 0.0]
    print(f"{'network':30} {'input':18} {'opencv ms':>10} {'ort ms':>8} {'max diff':>9}")
    for path, shape, what in shapes(VisionConfig()):
        blob = rng.standard_normal(shape).astype(np.float32)
        net = cv2.dnn.readNetFromONNX(path)

        def cv_run(net: cv2.dnn.Net = net, blob: np.ndarray = blob) -> np.ndarray:
            net.setInput(blob)
            return np.asarray(net.forward())

        cv_ms = median_ms(cv_run, args.repeat)
        totals[0] += cv_ms
        line = f"{what:30} {'x'.join(map(str, shape)):18} {cv_ms:10.1f}"
        if ort is not None:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = args.threads
            opts.inter_op_num_threads = 1
            sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
            name = sess.get_inputs()[0].name

            def ort_run(sess: object = sess, name: str = name, blob: np.ndarray = blob) -> object:
                return sess.run(None, {name: blob})  # type: ignore[attr-defined]

            ort_ms = median_ms(ort_run, args.repeat)
            totals[1] += ort_ms
            diff = float(np.abs(np.asarray(ort_run()[0]) - cv_run()).max())  # type: ignore[index]
            line += f" {ort_ms:8.1f} {diff:9.1e}"
        print(line)
    total = f"{'all (tally detector once)':30} {'':18} {totals[0]:10.1f}"
    print(total + (f" {totals[1]:8.1f}" if ort is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
