"""docs/rules.md and docs/interchange.md must say what the code does.

Outside tools are written from these pages, so a switch or a JSON key the
code has and the page does not name is a bug in one of them. The commands
are run on small inputs and every key they print must appear on the page.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from companion.commands import ai_serve, analyze, replay, tally
from engine import Game, Position, Rules
from engine.rules import _CHOICES, _RANGES

REPO = Path(__file__).resolve().parents[2]
RULES_DOC = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
INTERCHANGE_DOC = (REPO / "docs" / "interchange.md").read_text(encoding="utf-8")


def switch_rows() -> dict[str, str]:
    """The switch table of rules.md: switch name -> its values cell."""
    rows = {}
    for line in RULES_DOC.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`\w+`", cells[0]):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_every_rules_switch_and_value_is_documented() -> None:
    rows = switch_rows()
    assert sorted(rows) == sorted(f.name for f in fields(Rules))
    for name, choices in _CHOICES.items():
        listed = re.findall(r"`([^`]+)`", rows[name])
        assert listed == list(choices), name  # default first, then the others
    for name, (low, high) in _RANGES.items():
        assert f"`{getattr(Rules(), name)}`" in rows[name], name
        assert f"{low}-{high:,}" in rows[name] or f"{low}-{high}" in rows[name], name


def test_worked_examples_are_what_the_engine_prints() -> None:
    game = Game()
    game.play_all(["5-", "9-", "4+"])
    for position in (Position.initial(), game.position):
        assert str(position) in RULES_DOC


def keys(value: Any) -> Iterator[str]:
    """Every object key in a JSON value, however deep."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from keys(inner)


def run(main: Any, argv: list[str], stdin: str = "") -> list[Any]:
    out = io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(argv)
    finally:
        sys.stdin = old_stdin
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def documented(key: str) -> bool:
    return f"`{key}`" in INTERCHANGE_DOC


def test_replay_keys_are_documented() -> None:
    lines = "\n".join(
        [
            json.dumps({"moves": ["5-", "9-", "4+"], "id": 1}),
            json.dumps({"moves": ["5-", "5-"]}),
            "not json",
        ]
    )
    printed = {k for obj in run(replay.main, [], lines) for k in keys(obj)}
    game = Game()
    game.play_all(["2+"])
    game.stop_and_count()
    printed |= set(keys(game.position.to_json()))  # a finished game's extra keys
    assert printed and not [k for k in sorted(printed) if not documented(k)]


def test_ai_serve_keys_are_documented() -> None:
    request = json.dumps({"position": Position.initial().to_json(), "time_ms": 50, "id": 1})
    answers = run(ai_serve.main, [], request + "\nnot json\n")
    printed = {k for obj in answers for k in keys(obj)}
    assert {"move", "error", "id"} <= printed
    assert not [k for k in sorted(printed) if not documented(k)]


@pytest.fixture(scope="module")
def board_image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import cv2

    from vision.synth import render_scene

    counts = [0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5]
    image = render_scene(counts, (1, 1), seed=3)[0]
    path = tmp_path_factory.mktemp("docs") / "board.png"
    cv2.imwrite(str(path), image)
    return path


def test_analyze_keys_are_documented(board_image: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.png"
    blank = tmp_path / "blank.png"
    import cv2
    import numpy as np

    cv2.imwrite(str(blank), np.full((240, 320, 3), 128, np.uint8))
    objs = run(analyze.analyze_main, [str(board_image), str(blank), str(missing)])
    printed = {k for obj in objs for k in keys(obj)}
    assert {"corners", "squares", "reason", "error"} <= printed
    assert not [k for k in sorted(printed) if not documented(k)]


def test_tally_keys_are_documented(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((240, 320, 3), 128, np.uint8))
    frame = str(tally.bundled_frames()[0])
    objs = run(tally.main, [frame, str(blank), str(tmp_path / "missing.png")])
    printed = {k for obj in objs for k in keys(obj)}
    assert {"total", "interval", "unsure", "reason", "error"} <= printed
    assert not [k for k in sorted(printed) if not documented(k)]
