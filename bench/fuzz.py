"""Fuzz every input surface of the companion: seeded, own generators, findings saved.

A hostile or careless user reaches the companion through a handful of
surfaces; each one must answer bad input with its own error (one line, a
status), never with a traceback. Per surface, this feeds generated inputs
(valid ones mutated, and plain garbage) to the function the command runs and
counts the exceptions the surface does not expect:

config      ``parse_config`` on TOML text (expected: ConfigError)
position    ``Position.from_text`` / ``from_json`` (expected: EngineError)
replay      ``oanquan rules replay`` lines (never raises; errors are answer lines)
ai_serve    ``oanquan ai serve`` lines (never raises, never an "internal error")
journal     journal bytes: truncation, bit flips, reordered, duplicated and
            deleted lines, garbage, in the journal and its archive (open,
            resume and append never raise)
image       image files: 1x1 to 10000 px a side, 1-4 channels, 16-bit,
            garbage, truncated JPEG and PNG, PNG bombs (decoded and read as
            ``oanquan analyze`` does; the command never raises, and vision
            raising inside it is counted as ``caught``: a bug for vision)
cli         argument lists and paths for every command, run in-process
            (argparse's exit 2 and the commands' statuses are answers)

Each traceback's input is saved under ``--out`` (default
``~/.cache/oanquan/fuzz``) as ``<surface>/<case>.*`` with the traceback beside
it, for a regression test. ``tests/reliability/test_fuzz_slice.py`` runs a
small seeded slice of every surface in ``make test``.

    python bench/fuzz.py --cases 10000 [--surface image] [--seed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path and bench/engine.py
# would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per bench job (2 are shared)

import numpy as np  # noqa: E402

DEFAULT_OUT = Path.home() / ".cache" / "oanquan" / "fuzz"

# -- random building blocks ---------------------------------------------------------

ODD_STRINGS = [
    "",
    " ",
    "\n",
    "\x00",
    "é",
    "Ô ăn quan",
    "\ud800",
    "💥",
    "a" * 300,
    "../" * 20,
    "-1",
    "nan",
    "inf",
    "1e309",
    "0x3C",
    "true",
    "null",
    "{}",
    "[]",
    "2+",
    "9-",
    "12+",
    "0+",
    "3*",
]


def odd_scalar(rng: random.Random) -> Any:
    """A JSON-able value of a surprising type or size."""
    pick = rng.randrange(12)
    if pick == 0:
        return rng.randint(-(2**70), 2**70)
    if pick == 1:
        return rng.choice([0, 1, -1, 2, 5, 6, 11, 12, 13, 255, 256, 10**9])
    if pick == 2:
        return rng.choice([0.0, -0.0, 0.5, 1e308, -1e-308, 3.7])
    if pick == 3:
        return rng.choice([True, False])
    if pick == 4:
        return None
    if pick == 5:
        return rng.choice(ODD_STRINGS)
    if pick == 6:
        return [odd_scalar(rng) for _ in range(rng.randrange(0, 14))]
    if pick == 7:
        return {rng.choice([*ODD_STRINGS, "board", "big", "rules"]): odd_scalar(rng)}
    if pick == 8:
        return [rng.randint(-2, 30) for _ in range(rng.choice([0, 1, 2, 11, 12, 13, 18, 24]))]
    if pick == 9:
        return "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(0, 12)))
    if pick == 10:
        return rng.random() * rng.choice([1, 100, 1e6])
    return rng.randint(0, 40)


def mutate_text(text: str, rng: random.Random, edits: int = 3) -> str:
    """Delete, duplicate, insert or swap a few characters."""
    chars = list(text)
    for _ in range(rng.randint(1, edits)):
        if not chars:
            chars = list(rng.choice(ODD_STRINGS))
            continue
        i = rng.randrange(len(chars))
        op = rng.randrange(5)
        if op == 0:
            del chars[i]
        elif op == 1:
            chars.insert(i, chars[i])
        elif op == 2:
            chars.insert(i, rng.choice("[]{}=\"',.:-+0123456789aeznx \n#\\"))
        elif op == 3:
            j = rng.randrange(len(chars))
            chars[i], chars[j] = chars[j], chars[i]
        else:
            chars[i : i + rng.randint(1, 20)] = []
    return "".join(chars)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """Bit flips, cuts, duplicated or inserted runs."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not buf:
            buf = bytearray(rng.randbytes(rng.randint(1, 64)))
            continue
        op = rng.randrange(5)
        i = rng.randrange(len(buf))
        if op == 0:
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            del buf[i:]
        elif op == 2:
            j = min(len(buf), i + rng.randint(1, 200))
            buf[i:i] = buf[i:j]
        elif op == 3:
            buf[i:i] = rng.randbytes(rng.randint(1, 16))
        else:
            del buf[i : i + rng.randint(1, 64)]
    return bytes(buf)


def mutate_json(value: Any, rng: random.Random) -> Any:
    """Replace, drop or add one thing somewhere inside a JSON value."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        out = dict(value)
        key = rng.choice(list(out))
        op = rng.randrange(4)
        if op == 0:
            del out[key]
        elif op == 1:
            out[key] = odd_scalar(rng)
        elif op == 2:
            out[rng.choice([*ODD_STRINGS, "extra", "over", "ply"])] = odd_scalar(rng)
        else:
            out[key] = mutate_json(out[key], rng)
        return out
    if isinstance(value, list) and value and rng.random() < 0.8:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        op = rng.randrange(4)
        if op == 0:
            del out_list[i]
        elif op == 1:
            out_list[i] = odd_scalar(rng)
        elif op == 2:
            out_list.insert(i, odd_scalar(rng))
        else:
            out_list[i] = mutate_json(out_list[i], rng)
        return out_list
    return odd_scalar(rng)


def deep(rng: random.Random) -> str:
    """Deeply nested JSON (recursion limits)."""
    n = rng.choice([100, 1000, 5000, 100_000])
    return "[" * n + "]" * n if rng.random() < 0.5 else '{"a":' * n + "1" + "}" * n


# -- a surface: a generator and the call it feeds ------------------------------------


class Finding(Exception):
    """An answer a surface must never give (wrapped so it is reported like a traceback)."""


@dataclass
class Surface:
    """``make(rng, work)`` gives one case (input, suffix for saving); ``run`` feeds it."""

    name: str
    make: Callable[[random.Random, Path], tuple[Any, str]]
    run: Callable[[Any, Path], None]
    #: exceptions that are the surface's own answer to bad input
    expected: tuple[type[BaseException], ...] = ()
    #: per-run counts of notable answers (e.g. vision errors caught by the command)
    notes: dict[str, int] = field(default_factory=dict)


def _save(value: Any, path: Path) -> None:
    if isinstance(value, bytes):
        path.write_bytes(value)
    elif isinstance(value, str):
        path.write_text(value, "utf-8", errors="surrogatepass")
    else:
        path.write_text(json.dumps(value, ensure_ascii=True, default=repr), "utf-8")


# -- config -------------------------------------------------------------------------


def _config_case(rng: random.Random, work: Path) -> tuple[Any, str]:
    from companion.appliance.config import default_config_text

    base = default_config_text()
    pick = rng.randrange(4)
    if pick == 0:
        return mutate_text(base, rng, edits=6), ".toml"
    tables = {
        "": ["language"],
        "buttons": ["layout", "pull_up", "bounce_s", "chip"],
        "buttons.pins": ["left", "right", "ok", "back", "extra"],
        "buttons.encoder": ["a", "b", "switch"],
        "display": ["driver", "i2c_port", "i2c_address", "rotate", "contrast", "required"],
        "camera": [
            "kind",
            "device",
            "width",
            "height",
            "timeout_s",
            "exposure_us",
            "colour_gains",
            "flicker_period_us",
            "focus_m",
            "replay_dir",
            "loop",
        ],
        "input": ["debounce_s", "long_press_s", "repeat_buttons", "repeat_interval_s"],
        "kiosk": ["enabled", "idle_reset_s", "operator_buttons", "operator_long_press_s"],
        "play": ["hints", "opponent", "companion_side"],
        "storage": ["state_dir", "journal_dir"],
        "rules": ["quan_non_min", "direction", "chain", "players", "borrow_when_empty"],
        "vision.locate": ["work_width", "manual_corners", "ridge_sigmas", "seed", "foo"],
        "vision.count": ["model", "max_count", "sigma_base"],
        "vision.gate": ["dark_mean", "skin_frac"],
        "vision": ["foo"],
    }
    values = [
        "1",
        "0",
        "-1",
        "0x3D",
        "1e400",
        "nan",
        "-inf",
        "true",
        '"auto"',
        '"none"',
        '""',
        '"x"',
        "[]",
        "[1, 2]",
        "[[0, 0], [0, 0], [0, 0], [0, 0]]",
        "[[nan, 1], [9, 1], [9, 9], [1, 9]]",
        "[[10, 90], [200, 90], [200, 10], [10, 10]]",
        "{ a = 1 }",
        "1979-05-27T07:32:00Z",
        '"picamera2"',
        '"replay"',
        '"encoder"',
        '"sh1106"',
        '"hard"',
        '"en"',
        "99999999999999999999",
        "2",
        "14",
        "0.001",
    ]
    lines = []
    for name in rng.sample(list(tables), rng.randint(1, 4)):
        if name:
            lines.append(f"[{name}]")
        for key in rng.sample(tables[name], rng.randint(1, len(tables[name]))):
            lines.append(f"{key} = {rng.choice(values)}")
    text = "\n".join(lines) + "\n"
    return (mutate_text(text, rng) if pick == 1 else text), ".toml"


def _config_run(text: str, work: Path) -> None:
    from companion.appliance.config import parse_config

    parse_config(text)


# -- position -----------------------------------------------------------------------


def _random_position(rng: random.Random) -> Any:
    from engine import Game, Position

    game = Game()
    for _ in range(rng.randrange(0, 30)):
        moves = game.legal_moves()
        if not moves or game.is_over:
            break
        game.play(rng.choice(moves))
    position: Position = game.position
    return position


def _position_case(rng: random.Random, work: Path) -> tuple[Any, str]:
    position = _random_position(rng)
    if rng.random() < 0.5:
        text = position.to_text()
        return {
            "text": mutate_text(text, rng) if rng.random() < 0.9 else rng.choice(ODD_STRINGS)
        }, ".json"
    data = position.to_json()
    return {"json": mutate_json(data, rng) if rng.random() < 0.95 else odd_scalar(rng)}, ".json"


def _position_run(case: dict[str, Any], work: Path) -> None:
    from engine import Position, Rules

    if "text" in case:
        position = Position.from_text(case["text"])
    else:
        position = Position.from_json(case["json"])
    # what the commands do next with a position they were given
    position.status(Rules())
    position.to_json()
    position.to_text()


# -- rules replay and ai serve lines -------------------------------------------------


def _game_line(rng: random.Random) -> str:
    from engine import Game

    game = Game()
    moves: list[str] = []
    for _ in range(rng.randrange(0, 40)):
        legal = game.legal_moves()
        if not legal or game.is_over:
            break
        move = rng.choice(legal)
        game.play(move)
        moves.append(str(move))
    data: dict[str, Any] = {"moves": moves}
    if rng.random() < 0.3:
        data["rules"] = {"quan_non_min": rng.choice([0, 5, 10]), "end_when": "big_captured"}
    if rng.random() < 0.3:
        data["position"] = _random_position(rng).to_json()
    pick = rng.randrange(6)
    if pick == 0:
        return json.dumps(data)
    if pick == 1:
        return mutate_text(json.dumps(data), rng)
    if pick == 2:
        return deep(rng)
    if pick == 3:
        return json.dumps(odd_scalar(rng))
    return json.dumps(mutate_json(data, rng))


def _replay_case(rng: random.Random, work: Path) -> tuple[Any, str]:
    return _game_line(rng), ".jsonl"


def _replay_run(line: str, work: Path) -> None:
    from companion.commands.replay import replay_line

    answer = replay_line(line)
    json.dumps(answer)
    if set(answer) != {"positions", "captured", "error"}:
        raise Finding(f"answer keys {sorted(answer)}")


def _ai_case(rng: random.Random, work: Path) -> tuple[Any, str]:
    data: dict[str, Any] = {"position": _random_position(rng).to_json(), "time_ms": 2}
    if rng.random() < 0.3:
        data["rules"] = {"quan_non_min": rng.choice([0, 5]), "mandarin_value": rng.choice([5, 10])}
    pick = rng.randrange(5)
    if pick == 0:
        return json.dumps(data), ".jsonl"
    if pick == 1:
        return mutate_text(json.dumps(data), rng), ".jsonl"
    if pick == 2:
        return deep(rng), ".jsonl"
    mutated = mutate_json(data, rng)
    if isinstance(mutated, dict) and isinstance(mutated.get("time_ms"), int | float):
        mutated["time_ms"] = min(abs(mutated["time_ms"]), 5) or 1  # keep each search short
    return json.dumps(mutated), ".jsonl"


def _ai_run(line: str, work: Path) -> None:
    from companion.commands.ai_serve import answer
    from engine import Game, Move, Position, Rules

    result = answer(line, time.monotonic(), random.Random(0))
    json.dumps(result)
    if "error" in result:
        if str(result["error"]).startswith("internal error"):
            raise Finding(result["error"])
        return
    request = json.loads(line)
    position = Position.from_json(request["position"])
    game = Game(Rules.from_json(request.get("rules", {})), position)
    legal = {str(m) for m in game.legal_moves()}
    if str(Move.parse(result["move"])) not in legal:
        raise Finding(f"illegal move {result['move']!r}")


# -- journal ------------------------------------------------------------------------


class _FastFs:
    """The real file system without fsync (the fuzz opens thousands of journals)."""

    def __new__(cls) -> Any:
        from companion.appliance.journal import FileSystem, OsFile

        class NoSync(OsFile):
            def fsync(self) -> None:
                pass

        class Fs(FileSystem):
            def open(self, path: Path, mode: str) -> Any:
                real = super().open(path, mode)
                assert isinstance(real, OsFile)
                return NoSync(real.fd)

            def fsync_dir(self, path: Path) -> None:
                pass

        return Fs()


_JOURNAL_BYTES: dict[str, bytes] = {}


def _sample_journal(work: Path) -> dict[str, bytes]:
    """A journal with an archive: three games, disputes and undos (built once)."""
    if _JOURNAL_BYTES:
        return _JOURNAL_BYTES
    from companion.appliance.journal import Journal
    from companion.referee.records import DisputeData
    from engine import Game, Rules

    folder = work / "sample"
    folder.mkdir(parents=True, exist_ok=True)
    journal = Journal.open(folder / "journal.jsonl", fs=_FastFs(), clock=lambda: 1.7e9)
    rng = random.Random(5)
    for _ in range(3):
        journal.new_game(Rules())
        game = Game()
        for _ in range(12):
            moves = game.legal_moves()
            if not moves or game.is_over:
                break
            move = rng.choice(moves)
            game.play(move)
            journal.move(move, ply=game.position.ply, how="camera", confidence=0.9)
            if rng.random() < 0.2:
                journal.dispute(DisputeData("ambiguous", choices=(str(move),)))
                journal.resolve("accepted")
    journal.close()
    _JOURNAL_BYTES["journal.jsonl"] = (folder / "journal.jsonl").read_bytes()
    _JOURNAL_BYTES["journal-archive.jsonl"] = (folder / "journal-archive.jsonl").read_bytes()
    return _JOURNAL_BYTES


def _journal_case(rng: random.Random, work: Path) -> tuple[Any, str]:
    sample = _sample_journal(work)
    out = {}
    for name, data in sample.items():
        if rng.random() < (0.8 if name == "journal.jsonl" else 0.3):
            lines = data.splitlines(keepends=True)
            op = rng.randrange(7)
            if op == 0 and lines:
                del lines[rng.randrange(len(lines))]
            elif op == 1 and lines:
                i = rng.randrange(len(lines))
                lines.insert(i, lines[i])
            elif op == 2 and len(lines) > 1:
                i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
            elif op == 3:
                rng.shuffle(lines)
            elif op == 4 and lines:
                lines = lines[: rng.randrange(len(lines))]
            elif op == 5:
                lines.insert(rng.randrange(len(lines) + 1), rng.randbytes(rng.randint(0, 80)))
            data = b"".join(lines)
            if rng.random() < 0.5:
                data = mutate_bytes(data, rng)
        out[name] = data
    if rng.random() < 0.1:
        out["journal.jsonl.tmp"] = rng.randbytes(20)
    return {k: v.hex() for k, v in out.items()}, ".json"


def _journal_run(case: dict[str, str], work: Path) -> None:
    from companion.appliance.journal import Journal
    from engine import Rules

    folder = Path(tempfile.mkdtemp(dir=work))
    for name, hexed in case.items():
        (folder / name).write_bytes(bytes.fromhex(hexed))
    fs = _FastFs()
    journal = Journal.open(folder / "journal.jsonl", fs=fs, clock=lambda: 1.8e9)
    first = set(journal.messages)
    state = journal.resume()
    journal.totals()
    if state.game is None or state.end is not None:
        journal.new_game(Rules())
    journal.note("fuzz")
    journal.close()
    again = Journal.open(folder / "journal.jsonl", fs=fs, clock=lambda: 1.8e9)
    seqs = [r.seq for r in again.records]
    if seqs != list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False:
        raise Finding(f"records out of order after reopen: {seqs[:10]}")
    # what open() reported the first time may be reported again (a gap stays a gap);
    # anything new means the journal damaged what it wrote itself
    new = [m for m in again.messages if m not in first and "missing before it" not in m]
    if new:
        raise Finding(f"a journal it wrote itself needed repair: {new[0]}")
    again.close()
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


# -- images -------------------------------------------------------------------------

_BOMBS: list[bytes] = []


def _bombs() -> list[bytes]:
    """Small files that claim a huge image (built once)."""
    if not _BOMBS:
        from PIL import Image

        for size, mode in (((20000, 20000), "1"), ((60000, 1000), "L"), ((8000, 8000), "1")):
            buf = io.BytesIO()
            Image.new(mode, size).save(buf, format="PNG", optimize=False)
            _BOMBS.append(buf.getvalue())
    return _BOMBS


def _image_case(rng: random.Random, work: Path, max_pixels: int = 300_000) -> tuple[Any, str]:
    import cv2

    pick = rng.randrange(10)
    if pick == 0:
        return rng.randbytes(rng.randint(0, 2000)), ".bin"
    if pick == 1:
        return rng.choice(_bombs()), ".png"
    # a size from 1x1 to 10000 px a side, area capped for CPU time
    w = max(1, round(math.exp(rng.uniform(0, math.log(10000)))))
    h = max(1, round(math.exp(rng.uniform(0, math.log(10000)))))
    while w * h > max_pixels:
        if rng.random() < 0.5:
            w = max(1, w // 2)
        else:
            h = max(1, h // 2)
    channels = rng.choice([1, 2, 3, 4])
    depth = rng.choice([np.uint8, np.uint8, np.uint16])
    top = 255 if depth == np.uint8 else 65535
    style = rng.randrange(4)
    shape = (h, w) if channels == 1 else (h, w, channels)
    nprng = np.random.default_rng(rng.randrange(2**32))
    if style == 0:
        img = nprng.integers(0, top + 1, shape, dtype=np.int64).astype(depth)
    elif style == 1:
        img = np.full(shape, rng.randrange(top + 1), dtype=depth)
    elif style == 2:  # chalk-like lines on a floor
        img = np.full(shape, top // 3, dtype=depth)
        step = max(2, rng.randrange(3, 60))
        img[::step] = top
        img[:, ::step] = top
    else:
        img = nprng.normal(top / 2, top / 6, shape).clip(0, top).astype(depth)
    if channels == 2:  # no image format holds two channels: grey plus alpha as 4
        img = np.dstack([img[..., 0]] * 3 + [img[..., 1]])
    fmt = ".png" if depth == np.uint16 or rng.random() < 0.5 else ".jpg"
    if fmt == ".jpg" and img.dtype != np.uint8:
        fmt = ".png"
    if fmt == ".jpg" and img.ndim == 3 and img.shape[2] == 4:
        img = img[..., :3]
    ok, enc = cv2.imencode(fmt, img)
    data = enc.tobytes() if ok else rng.randbytes(100)
    if rng.random() < 0.2:
        data = data[: rng.randrange(max(1, len(data)))]  # truncated
    elif rng.random() < 0.1:
        data = mutate_bytes(data, rng)
    return data, fmt


def _image_run(data: bytes, work: Path, surface: Surface | None = None) -> None:
    """What ``oanquan analyze`` does with one file; counts vision errors it catches."""
    from companion.commands.analyze import analyze_image
    from vision.config import VisionConfig

    path = work / "case.img"
    path.write_bytes(data)
    result = analyze_image(str(path), VisionConfig())
    result.pop("_reading", None)
    result.pop("_image", None)
    json.dumps(result)
    if surface is not None:
        error = str(result.get("error", ""))
        key = (
            "vision error caught"
            if error.startswith("vision failed")
            else "refused: too large"
            if "too large" in error
            else "unreadable"
            if error
            else "read"
        )
        surface.notes[key] = surface.notes.get(key, 0) + 1
        if key == "vision error caught":
            raise _Caught(error)


class _Caught(Exception):
    """Vision raised inside the command, which turned it into the image's error."""


# -- command lines ------------------------------------------------------------------


def _paths(rng: random.Random, work: Path) -> str:
    junk = work / "junk.jpg"
    if not junk.exists():
        junk.write_bytes(b"not an image")
        (work / "dir").mkdir(exist_ok=True)
        (work / "file").write_text("x")
    return rng.choice(
        [
            str(junk),
            str(work / "dir"),
            str(work / "file"),
            str(work / "file" / "below"),
            str(work / "missing" / "x.png"),
            str(work / "new.png"),
            str(work / "new.toml"),
            str(work / "x.noext"),
            "/proc/nope",
            "/proc/nope/x.png",
            "",
            "-",
            str(work / ("n" * 300)),
            str(work / "spa ce é.png"),
            "/dev/null",
        ]
    )


def _cli_case(rng: random.Random, work: Path) -> tuple[Any, str]:
    config = work / "fuzz.toml"
    text, _ = _config_case(rng, work)
    commands: list[Callable[[], list[str]]] = [
        lambda: ["rules", "replay"],
        lambda: ["play", "--moves", " ".join(rng.choice(ODD_STRINGS) for _ in range(3))],
        lambda: ["play", "--start", rng.choice(ODD_STRINGS), "--moves", "2+"],
        lambda: ["play", "--rules", rng.choice([*ODD_STRINGS, '{"chain": 3}']), "--moves", ""],
        lambda: ["play", "--quan-non-min", rng.choice(ODD_STRINGS), "--moves", "2+"],
        lambda: ["analyze", _paths(rng, work)],
        lambda: ["analyze", _paths(rng, work), "--json-out", _paths(rng, work)],
        lambda: ["analyze", _paths(rng, work), "--annotate", _paths(rng, work)],
        lambda: ["analyze", "--config", str(config), _paths(rng, work)],
        lambda: ["calibrate", _paths(rng, work), "--corners", mutate_text("1,2,3,4,5,6,7,8", rng)],
        lambda: [
            "calibrate",
            str(work / "board.png"),
            "--corners",
            rng.choice(["10,90,200,90,200,10,10,10", "0,0,0,0,0,0,0,0", "nan,1,2,3,4,5,6,7"]),
            rng.choice(["--out", "--annotate"]),
            _paths(rng, work),
        ],
        lambda: ["selftest", "--backend", "fake", "--skip", "board", "--config", str(config)],
        lambda: [
            "run",
            "--hardware",
            "fake",
            "--frames",
            "2",
            "--config",
            str(config),
            "--journal",
            str(work / "j" / "journal.jsonl"),
        ],
        lambda: ["ai", "serve"],
        lambda: ["screens", "--out", _paths(rng, work), "--scale", rng.choice(["0", "1", "x"])],
        lambda: [
            rng.choice(["analyze", "run", "play", "calibrate", "ai"]),
            *rng.sample(ODD_STRINGS, 2),
        ],
    ]
    argv = rng.choice(commands)()
    stdin = "\n".join(_game_line(rng) for _ in range(rng.randrange(0, 3)))
    if argv[:2] == ["ai", "serve"]:
        stdin = "\n".join(_ai_case(rng, work)[0] for _ in range(rng.randrange(0, 3)))
    return {"argv": argv, "stdin": stdin, "config": text}, ".json"


def _cli_run(case: dict[str, Any], work: Path) -> None:
    import cv2

    from companion.__main__ import main

    (work / "fuzz.toml").write_text(case["config"], "utf-8")
    board = work / "board.png"
    if not board.exists():
        cv2.imwrite(str(board), np.full((100, 220, 3), 90, np.uint8))
    argv = [a.replace("\x00", "") for a in case["argv"]]
    out, err = io.StringIO(), io.StringIO()
    old_in = sys.stdin
    sys.stdin = io.StringIO(case["stdin"])
    try:
        # in the scratch folder: a relative path ("-") lands there, never in the checkout
        with (
            contextlib.chdir(work),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            status = main(argv)
    except SystemExit as exc:  # argparse's answer to a bad command line
        if exc.code not in (0, 2):
            raise Finding(f"exit {exc.code!r}") from None
        return
    finally:
        sys.stdin = old_in
    if not isinstance(status, int):
        raise Finding(f"status {status!r}")
    if "Traceback" in err.getvalue():
        raise Finding(err.getvalue()[-2000:])


# -- the runner ---------------------------------------------------------------------


def surfaces() -> dict[str, Surface]:
    from companion.appliance.config import ConfigError
    from engine import EngineError

    image = Surface("image", _image_case, lambda d, w: None)
    image.run = lambda d, w: _image_run(d, w, image)
    return {
        "config": Surface("config", _config_case, _config_run, (ConfigError,)),
        "position": Surface("position", _position_case, _position_run, (EngineError,)),
        "replay": Surface("replay", _replay_case, _replay_run),
        "ai_serve": Surface("ai_serve", _ai_case, _ai_run),
        "journal": Surface("journal", _journal_case, _journal_run),
        "image": image,
        "cli": Surface("cli", _cli_case, _cli_run),
    }


@dataclass
class Result:
    surface: str
    cases: int = 0
    tracebacks: int = 0
    caught: int = 0
    seconds: float = 0.0
    saved: list[Path] = field(default_factory=list)
    first: list[str] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)


def fuzz(surface: Surface, cases: int, seed: int, out: Path | None, work: Path) -> Iterator[Result]:
    """Run ``cases`` cases of one surface; yields the result every 100 cases and at the end."""
    import logging

    logging.disable(logging.CRITICAL)  # commands log warnings by design; only tracebacks count
    try:
        yield from _fuzz(surface, cases, seed, out, work)
    finally:
        logging.disable(logging.NOTSET)


def _fuzz(
    surface: Surface, cases: int, seed: int, out: Path | None, work: Path
) -> Iterator[Result]:
    rng = random.Random(f"{surface.name}:{seed}")
    result = Result(surface.name)
    start = time.process_time()
    for case in range(cases):
        value, suffix = surface.make(rng, work)
        try:
            surface.run(value, work)
        except surface.expected:
            pass
        except _Caught as exc:
            result.caught += 1
            _record(result, surface, case, value, suffix, out, f"caught: {exc}", "caught")
        except (Exception, RecursionError) as exc:  # a traceback: what this is looking for
            result.tracebacks += 1
            tb = "".join(traceback.format_exception(exc))
            _record(result, surface, case, value, suffix, out, tb, "traceback")
        result.cases = case + 1
        if result.cases % 100 == 0:
            result.seconds = time.process_time() - start
            yield result
    result.seconds = time.process_time() - start
    result.notes = dict(surface.notes)
    yield result


def _record(
    result: Result,
    surface: Surface,
    case: int,
    value: Any,
    suffix: str,
    out: Path | None,
    text: str,
    kind: str,
) -> None:
    if len(result.first) < 3:
        result.first.append(text.strip().splitlines()[-1][:300])
    if out is None:
        return
    folder = out / surface.name
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{kind}-{case:06d}{suffix}"
    _save(value, target)
    target.with_name(target.name + ".txt").write_text(text, "utf-8", errors="replace")
    result.saved.append(target)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000, help="cases per surface")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--surface", action="append", help="only these surfaces (repeatable)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where findings are saved")
    ap.add_argument("--progress", action="store_true", help="a line every 100 cases")
    args = ap.parse_args(argv)
    import cv2

    cv2.setNumThreads(1)
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    table = surfaces()
    names = args.surface or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        ap.error(f"unknown surface {unknown[0]!r}; choose from {', '.join(table)}")
    total = 0
    print(f"fuzz: seed {args.seed}, {args.cases} cases per surface, findings in {args.out}")
    print(f"{'surface':<10} {'cases':>7} {'tracebacks':>10} {'caught':>7} {'cpu s':>8}  notes")
    with tempfile.TemporaryDirectory(prefix="oanquan-fuzz-") as tmp:
        for name in names:
            work = Path(tmp) / name
            work.mkdir()
            last = Result(name)
            for last in fuzz(table[name], args.cases, args.seed, args.out, work):
                if args.progress and last.cases % 100 == 0 and last.cases < args.cases:
                    print(f"  {name}: {last.cases} cases, {last.tracebacks} tracebacks", flush=True)
            notes = ", ".join(f"{k} {v}" for k, v in sorted(last.notes.items()))
            print(
                f"{name:<10} {last.cases:>7} {last.tracebacks:>10} {last.caught:>7} "
                f"{last.seconds:>8.1f}  {notes}",
                flush=True,
            )
            for line in last.first:
                print(f"    {line}")
            total += last.tracebacks
    print(f"total tracebacks: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
