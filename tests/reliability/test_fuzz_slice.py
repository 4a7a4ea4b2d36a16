"""A small seeded slice of bench/fuzz.py: every input surface answers bad input, no tracebacks."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fuzz.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_fuzz_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fuzz = load_bench()
CASES = {"image": 12, "cli": 30}


@pytest.mark.parametrize("name", list(fuzz.surfaces()))
def test_a_seeded_slice_of_every_surface_has_no_traceback(name: str, tmp_path: Path) -> None:
    surface = fuzz.surfaces()[name]
    if name == "image":  # small images only: the full run covers up to 10000 px a side
        surface.make = functools.partial(fuzz._image_case, max_pixels=20_000)
    *_, result = fuzz.fuzz(surface, CASES.get(name, 60), 7, tmp_path / "found", tmp_path)
    assert result.cases == CASES.get(name, 60)
    assert result.tracebacks == 0, result.first


def test_a_traceback_is_counted_and_its_input_saved(tmp_path: Path) -> None:
    """The harness itself: a surface that raises is reported, with the input kept."""

    def boom(value: object, work: Path) -> None:
        raise KeyError("surprise")

    surface = fuzz.Surface("boom", lambda rng, work: ("x" * rng.randint(1, 3), ".txt"), boom)
    *_, result = fuzz.fuzz(surface, 5, 1, tmp_path / "found", tmp_path)
    assert result.tracebacks == 5
    saved = sorted((tmp_path / "found" / "boom").glob("*.txt"))
    assert len(saved) == 10  # each input and its traceback
    assert "KeyError: 'surprise'" in saved[1].read_text("utf-8")
