"""bench/runtimes.py feeds each shipped network the input one frame gives it."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.runtimes import main, shapes
from vision.config import VisionConfig


def test_every_network_takes_the_shape_the_bench_times() -> None:
    listed = shapes(VisionConfig())
    assert len({path for path, _, _ in listed}) == len(listed) == 6
    for path, shape, what in listed:
        assert Path(path).is_file(), what
        net = cv2.dnn.readNetFromONNX(path)
        net.setInput(np.zeros(shape, np.float32))
        out = np.asarray(net.forward())
        assert out.shape[0] == shape[0] and np.isfinite(out).all(), what


def test_bad_arguments_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--repeat", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--repeat" in err[0]
