"""``oanquan track FRAMES_DIR``: referee a folder of frames from a fixed camera.

Frames are read in file-name order as if they came from the live camera;
the output is the interchange.md JSON Lines: one verdict per frame, one line
per accepted move, and a summary. A move is reported only when the referee
would accept it in a live game without asking the players.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import IO, Any

import cv2

from companion.observe import VisionObserver
from companion.referee import Referee, Report
from device.ports import Frame
from engine import EngineError, Position, Rules
from vision import VisionError, config_from_dict, load_config

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp"}


def frame_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


def _load_json(path: str | None, what: str) -> Any:
    if path is None:
        return None
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{what} {path!r}: {exc}") from exc


class FrameJudge:
    """One frame at a time through the observer and the referee (track and its bench).

    The caller gives the start position, so the first readable frame is taken
    to show it: it becomes the reference for changed squares, and when the
    start is the opening and the frame looks like it, vision calibrates on it.
    """

    def __init__(self, referee: Referee, observer: VisionObserver, *, at_opening: bool) -> None:
        self.referee = referee
        self.observer = observer
        self.at_opening = at_opening
        self.first = True

    def restart(self, referee: Referee) -> None:
        """Continue from another trusted position (the next readable frame shows it)."""
        referee.adopt_camera_knowledge(self.referee)  # the same camera
        self.referee = referee
        self.first = True
        self.at_opening = False

    def __call__(self, frame: Frame) -> Report:
        observer = self.observer
        obs = observer(frame)
        if (
            self.first
            and self.at_opening
            and observer.calibration is None
            and observer.looks_like_opening(obs)
        ):
            observer.learn_opening(frame)
            obs = observer(frame)
        report = self.referee.see(obs, frame.source)
        if report.confirmed or (self.first and obs.fit and not report.accepted):
            observer.confirmed()
        if obs.fit:
            self.first = False
        return report


def track(
    frames: list[Path],
    judge: FrameJudge,
    out: IO[str],
    *,
    timings: list[float] | None = None,
) -> int:
    """Referee every frame; returns how many frames could not be read."""
    unreadable = 0
    for seq, path in enumerate(frames):
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None or image.size == 0:
            unreadable += 1
            line = {"frame": path.name, "state": judge.referee.state, "detail": "unreadable image"}
            out.write(json.dumps(line) + "\n")
            continue
        started = time.perf_counter()
        report = judge(Frame(image, float(seq), seq, path.name))
        if timings is not None:
            timings.append((time.perf_counter() - started) * 1000)
        out.write(
            json.dumps({"frame": path.name, "state": report.state, "detail": report.detail}) + "\n"
        )
        for accepted in report.accepted:
            line = {
                "move": str(accepted.move),
                "ply": accepted.ply,
                "frame": path.name,
                "confidence": round(accepted.confidence, 4),
            }
            out.write(json.dumps(line) + "\n")
    referee = judge.referee
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
    parser = argparse.ArgumentParser(prog="oanquan track", description=__doc__.split("\n")[0])
    parser.add_argument("frames_dir", help="folder of frames, read in file-name order")
    parser.add_argument("--start", help="start position JSON file (default: the opening)")
    parser.add_argument("--rules", help="rules JSON file (default: the default rules)")
    parser.add_argument("--vision", help="vision config TOML file")
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
    except (ValueError, EngineError, VisionError) as exc:
        print(f"oanquan track: {exc}", file=sys.stderr)
        return 2
    referee = Referee(rules, start=start)
    referee.setup_checked = True  # the caller says where the game starts
    observer = VisionObserver(config, stills=True)
    at_opening = referee.position == Position.initial(rules)
    unreadable = track(frames, FrameJudge(referee, observer, at_opening=at_opening), sys.stdout)
    return 1 if unreadable else 0
