"""``oanquan track FRAMES_DIR``: referee a folder of frames from a fixed camera.

Frames are read in file-name order as if they came from the live camera;
the output is the interchange.md JSON Lines: one verdict per frame, one line
per accepted move, and a summary. A move is reported only when the referee
would accept it in a live game without asking the players.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import IO, Any

import cv2
import numpy as np

from companion.appliance.observe import VisionObserver
from companion.appliance.pipeline import FramePipeline, Observer
from companion.appliance.ring_observe import make_observer_for
from companion.referee import Referee, RefereeState, Report
from device.ports import Frame
from engine import EngineError, IllegalMoveError, Move, Position, Rules
from vision import VisionError, config_from_dict, load_config, warm_up

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"}


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """``f2`` before ``f10``: digit runs compare as numbers, the rest as text."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.lower())
        for part in re.split(r"(\d+)", name)
        if part
    )


def parse_corners(text: str | None) -> list[list[float]] | None:
    """``"x,y x,y ..."`` as pairs; None when not given (the ring's observer then says why)."""
    if not text:
        return None
    try:
        pairs = [[float(v) for v in point.split(",")] for point in text.split()]
    except ValueError:
        raise ValueError(f"--ring-corners: expected 'x,y x,y ...', got {text!r}") from None
    if any(len(p) != 2 for p in pairs):
        raise ValueError(f"--ring-corners: every point needs x,y, got {text!r}")
    return pairs


def frame_files(folder: Path) -> list[Path]:
    """The folder's images in the order a camera would have taken them (natural name order)."""
    images = [p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(images, key=lambda p: natural_key(p.name))


def _load_json(path: str | None, what: str) -> Any:
    if path is None:
        return None
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{what} {path!r}: {exc}") from exc


def load_answers(path: str) -> list[Move]:
    """The moves of an ``--answers`` file, one per line (blank lines and ``#`` notes skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"answers file {path!r}: {exc.strerror or exc}") from exc
    moves = []
    for number, line in enumerate(text.splitlines(), 1):
        item = line.split("#", 1)[0].strip()
        if not item:
            continue
        try:
            moves.append(Move.parse(item))
        except EngineError as exc:
            raise ValueError(f"answers file {path!r} line {number}: {exc}") from exc
    return moves


class _Players:
    """The ``--answers`` file playing the players' part, move by move."""

    def __init__(self, moves: list[Move], start_ply: int) -> None:
        self.moves = moves
        self.start_ply = start_ply

    def next_move(self, referee: Referee) -> Move | None:
        """The move the players make next from the referee's position."""
        return self.move_at(referee.position.ply + 1)

    def move_at(self, ply: int) -> Move | None:
        """The file's move that makes ``ply`` (None beyond the file)."""
        k = ply - 1 - self.start_ply
        return self.moves[k] if 0 <= k < len(self.moves) else None


def _move_lines(
    report: Report, frame: str, referee: Referee, players: _Players | None
) -> list[dict[str, Any]]:
    """The move lines of one report, a wrong camera move corrected by the players."""
    lines: list[dict[str, Any]] = []
    for accepted in report.accepted:
        line: dict[str, Any] = {"move": str(accepted.move), "ply": accepted.ply, "frame": frame}
        if accepted.how == "camera":
            line["confidence"] = round(accepted.confidence, 4)
        else:
            line["answered"] = True
        lines.append(line)
        if players is None or accepted.how != "camera":
            continue
        want = players.move_at(accepted.ply)
        if want is not None and want != accepted.move:
            line["expected"] = str(want)
            # this move and every one the referee took after it go; the players' is played
            referee.correct(want, undo=referee.position.ply - accepted.ply + 1)
            break
    return lines


def _frame_size(path: Path) -> tuple[int, int]:
    """(width, height) of a frame from its header alone (the loop decodes it later);
    1280x960 if it cannot be read: it is reported with the others when its turn comes."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            width, height = image.size
    except (OSError, UnidentifiedImageError, ValueError):
        return (1280, 960)
    return (int(width), int(height))


def track(
    frames: list[Path],
    pipeline: FramePipeline,
    out: IO[str],
    *,
    timings: list[float] | None = None,
    answers: list[Move] | None = None,
    cpu_timings: list[float] | None = None,
    shows: list[int] | None = None,
) -> int:
    """Referee every frame; returns how many frames could not be read.

    ``timings`` / ``cpu_timings`` collect each frame's wall / CPU milliseconds.
    With ``answers`` the players' part is played: a question or a dispute is
    answered with the next move of the list, and a move the camera accepted
    wrongly is corrected to it. ``shows``: which position each frame shows, where
    several frames show one (a live camera's, replayed by ``bench/track.py --live``);
    by default each frame shows a position of its own.
    """
    unreadable = 0
    players = _Players(answers, pipeline.referee.position.ply) if answers is not None else None
    unsettled = 0
    for seq, path in enumerate(frames):
        # one photo per move at most: a frame shows no more moves than there were
        # positions shown since the last board the referee trusted
        new = shows is None or seq == 0 or shows[seq] != shows[seq - 1]
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None or image.size == 0:
            unreadable += 1
            unsettled += new  # a photo all the same: of a position, one more move on
            # a position nobody will see again: the referee must not guess past it
            pipeline.referee.observe(None, fit=False, reason="unreadable image", still=True)
            line = {
                "frame": path.name,
                "state": pipeline.referee.state,
                "detail": "unreadable image",
            }
            out.write(json.dumps(line) + "\n")
            continue
        started, cpu = time.perf_counter(), time.process_time()
        # IMREAD_COLOR always reads 8-bit: asarray returns the same array, typed for Frame
        frame = Frame(np.asarray(image, np.uint8), float(seq), seq, path.name)
        report = pipeline(frame, last=seq == len(frames) - 1).report
        if timings is not None:
            timings.append((time.perf_counter() - started) * 1000)
        if cpu_timings is not None:  # the process's own CPU, whatever else the machine runs
            cpu_timings.append((time.process_time() - cpu) * 1000)
        out.write(
            json.dumps({"frame": path.name, "state": report.state, "detail": report.detail}) + "\n"
        )
        referee = pipeline.referee
        lines = _move_lines(report, path.name, referee, players)
        corrected = any("expected" in line for line in lines)
        reports = [report]
        unsettled += new
        answered = 0
        while (
            players is not None
            and not corrected
            and referee.state in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE)
            and not referee.position.over
            and answered < unsettled
        ):
            move = players.next_move(referee)
            if move is None:
                break
            try:
                more = pipeline.answer(move)
            except IllegalMoveError as exc:
                raise ValueError(
                    f"answers file: move {str(move)!r} at ply {referee.position.ply + 1}: "
                    f"{exc.reason}"
                ) from exc
            reports += more
            answered += 1
            for r in more:
                lines += _move_lines(r, path.name, referee, players)
            corrected = any("expected" in line for line in lines)
            if not more[0].behind:
                break  # the board asked about shows this move: trusted
        if corrected or any(r.confirmed or r.accepted for r in reports):
            unsettled = 0
        for line in lines:
            out.write(json.dumps(line) + "\n")
    referee = pipeline.referee
    summary = {
        "summary": {
            "moves": [str(m) for m in referee.game.moves],
            "position": referee.position.to_json(),
        }
    }
    out.write(json.dumps(summary) + "\n")
    out.flush()
    return unreadable


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="oanquan track",
        description="Referee a folder of frames from a fixed camera as if they came live; "
        "prints JSON Lines: a verdict per frame, a line per accepted move, a summary "
        "(docs/interchange.md).",
    )
    parser.add_argument(
        "frames_dir", metavar="FRAMES_DIR", help="folder of frames, read in file-name order"
    )
    parser.add_argument(
        "--start", metavar="FILE", help="start position JSON file (default: the opening)"
    )
    parser.add_argument(
        "--rules", metavar="FILE", help="rules JSON file (default: the default rules)"
    )
    parser.add_argument("--vision", metavar="FILE", help="vision config TOML file")
    parser.add_argument(
        "--answers",
        metavar="FILE",
        help="moves file (one per line): answers the referee's questions and disputes",
    )
    parser.add_argument(
        "--ring-corners",
        metavar="X,Y ...",
        help="3-4 seats: the ring board's corners in pixels, counter-clockwise on screen from "
        "the corner holding square 0 (N points, or 2N with the inner outline's)",
    )
    args = parser.parse_args(argv)
    folder = Path(args.frames_dir)
    try:
        if not folder.is_dir():
            raise ValueError(f"frames folder {str(folder)!r} does not exist")
        frames = frame_files(folder)
        if not frames:
            raise ValueError(f"no images (.jpg, .png) in {str(folder)!r}")
        rules = Rules.from_json(_load_json(args.rules, "rules file"))
        start_json = _load_json(args.start, "start position file")
        start = Position.from_json(start_json) if start_json is not None else None
        if start is not None and not start.is_valid(rules):
            raise ValueError(f"start position: {start.describe_status(rules)}")
        config = load_config(args.vision) if args.vision else config_from_dict({})
        answers = load_answers(args.answers) if args.answers else None
        observer: Observer = VisionObserver(config, stills=True)
        if rules.players > 2 or args.ring_corners:
            corners = parse_corners(args.ring_corners)
            observer = make_observer_for(rules, None, corners, stills=True)
    except (ValueError, EngineError, VisionError) as exc:
        print(f"oanquan track: {exc}", file=sys.stderr)
        return 2
    referee = Referee(rules, start=start)
    referee.setup_checked = True  # the caller says where the game starts
    pipeline = FramePipeline(observer, referee, start_shown=True)
    warm_up(config, _frame_size(frames[0]))  # (first-frame costs paid before the first frame)
    try:
        unreadable = track(frames, pipeline, sys.stdout, answers=answers)
    except ValueError as exc:
        sys.stdout.flush()
        print(f"oanquan track: {exc}", file=sys.stderr)
        return 2
    return 1 if unreadable else 0
