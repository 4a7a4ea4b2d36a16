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

from companion.appliance.observe import VisionObserver
from companion.appliance.pipeline import FramePipeline
from companion.referee import Referee
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


def track(
    frames: list[Path],
    pipeline: FramePipeline,
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
            line = {
                "frame": path.name,
                "state": pipeline.referee.state,
                "detail": "unreadable image",
            }
            out.write(json.dumps(line) + "\n")
            continue
        started = time.perf_counter()
        report = pipeline(Frame(image, float(seq), seq, path.name)).report
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
    unreadable = track(frames, FramePipeline(observer, referee, start_shown=True), sys.stdout)
    return 1 if unreadable else 0
