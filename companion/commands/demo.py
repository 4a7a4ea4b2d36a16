"""``oanquan demo``: the whole companion on emulated hardware and bundled frames.

The bundled game is the hand-traced full game of the rules (9 plies from the
opening to a 52-18 finish), photographed by the scene generator from one
fixed camera, with the things that happen at a real board: a hint asked
for, a refill with borrowed pebbles, a pebble dropped in the wrong square
(a dispute, then the board put right), a hand over the board, and players
confirming a move the camera cannot tell apart. Buttons are pressed by a
script; every OLED frame is printed in the terminal, and ``--frames-out``
also writes them as PNGs and an animated GIF.

``python -m companion.commands.demo --make`` regenerates the bundled frames.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from PIL import Image

FRAMES = Path(__file__).resolve().parent / "demo_frames"
SCRIPT = "script.json"
#: V40 of the rules: a whole game from the opening to a 6-square chain that ends it.
GAME = ["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"]
SCENE_SEED = 12
SCENE = {
    "ground": "earth",
    "chalk": "white",
    "tilt_deg": 10.0,
    "yaw_deg": 3.0,
    "fill": 0.86,
    "shadow": False,
    "pebble_size": 0.17,
    "palette": "mixed",
}


@dataclass
class Step:
    """One bundled frame and the buttons the script presses after it."""

    file: str
    caption: str
    presses: list[str] = field(default_factory=list)
    #: the game's ply once this frame's move is made (what the players know)
    ply: int | None = None


def _board_after(moves: list[str]) -> tuple[list[int], tuple[int, int], list[int]]:
    """Board after ``moves`` (refill owed by the next player not yet made) and the refilled board."""
    from companion.referee.reconcile import after_sowing
    from engine import Game

    game = Game()
    for m in moves[:-1]:
        game.play(m)
    if not moves:
        p = game.position
        return list(p.board), p.big, list(p.board)
    t = game.play(moves[-1])
    sown, big = after_sowing(t)
    return list(sown), big, list(t.position.board)


def make_frames(out: Path = FRAMES, size: tuple[int, int] = (800, 600)) -> list[Step]:
    """Render the bundled frames with the scene generator (deterministic)."""
    import cv2

    from vision.synth import render_scene

    out.mkdir(parents=True, exist_ok=True)
    steps: list[Step] = []

    def shoot(
        counts: list[int], big: tuple[int, int], caption: str, ply: int | None, **extra: Any
    ) -> Step:
        name = f"frame_{len(steps):02d}.jpg"
        conditions = {**SCENE, **extra}
        image, _ = render_scene(
            counts, big, 100 + len(steps), scene_seed=SCENE_SEED, size=size, **conditions
        )
        cv2.imwrite(str(out / name), image, [cv2.IMWRITE_JPEG_QUALITY, 82])
        step = Step(name, caption, ply=ply)
        steps.append(step)
        return step

    board, big, _ = _board_after([])
    opening = shoot(board, big, "the opening: 5 pebbles a square, a big stone in each quan", 0)
    opening.presses = ["ok", "back"]  # a hint, then back to the board
    for ply, move in enumerate(GAME, start=1):
        board, big, refilled = _board_after(GAME[:ply])
        player = f"P{(ply - 1) % 2}"
        if ply == 4:
            wrong = list(board)
            donor = next(sq for sq in (3, 4, 5, 2) if wrong[sq] > 0)
            wrong[donor] -= 1
            wrong[(donor + 1) % 12] += 1
            shoot(
                wrong, big, f"{player} plays {move}, but one pebble lands in the wrong square", None
            )
            shoot(board, big, "the players put the pebble right", ply)
            continue
        if ply == 6:
            shoot(
                board,
                big,
                f"{player} plays {move}; a hand is still over the board",
                None,
                hand=True,
            )
            shoot(board, big, "the hand is gone", ply)
            continue
        shoot(board, big, f"{player} plays {move}", ply)
        if refilled != board:
            shoot(refilled, big, "P1 refills with 5 pebbles borrowed from P0", ply)
    (out / SCRIPT).write_text(
        json.dumps([s.__dict__ for s in steps], indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return steps


def load_script(folder: Path = FRAMES) -> list[Step]:
    data = json.loads((folder / SCRIPT).read_text(encoding="utf-8"))
    return [Step(**item) for item in data]


def oled_text(image: Image.Image) -> str:
    """Half-block drawing of a 128x64 frame: 32 lines of 128 characters."""
    px = image.convert("1").load()
    assert px is not None
    w, h = image.size
    rows = []
    for y in range(0, h, 2):
        line = []
        for x in range(w):
            top, bottom = px[x, y], px[x, y + 1] if y + 1 < h else 0
            line.append("█" if top and bottom else "▀" if top else "▄" if bottom else " ")
        rows.append("".join(line).rstrip())
    return "\n".join(rows)


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class _Panel:
    """The OLED as the demo's audience sees it: distinct frames, printed with captions."""

    def __init__(self, app: Any, hw: Any, clock: _Clock, out: IO[str]) -> None:
        self.app, self.hw, self.clock, self.out = app, hw, clock, out
        self.shown: list[Image.Image] = []

    def show(self, caption: str) -> None:
        image = self.app.draw()
        if self.shown and self.shown[-1].tobytes() == image.tobytes():
            return
        self.shown.append(image.copy())
        self.out.write(f"\n── {caption}\n{oled_text(image)}\n")

    def press(self, button: str, caption: str | None = None) -> None:
        """A short press, then the frame it leads to."""
        self.hw.buttons.press(button)
        self.clock.t += 0.1
        self.app.step(camera=False)
        self.hw.buttons.release(button)
        self.clock.t += 0.1
        self.app.step(camera=False)
        self.clock.t += 0.5  # past the debounce and chord windows: the gesture is decided
        self.app.step(camera=False)
        self.show(caption or f"button {button.upper()}")


def run_demo(
    folder: Path,
    out: IO[str],
    frames_out: Path | None = None,
    lang: str = "en",
    kiosk: bool = False,
) -> list[Image.Image]:
    """Play the bundled game through the real app loop; returns every distinct OLED frame.

    With ``kiosk`` the museum behaviour follows the game: nobody touches the
    exhibit, so it returns to the attract loop (title, history, saying),
    counts down and resets; then the operator's hidden hold opens the
    operator menu.
    """
    from companion.appliance.app import App
    from companion.appliance.config import parse_config
    from companion.appliance.journal import Journal
    from companion.appliance.observe import VisionObserver
    from companion.referee.advice import advise
    from device.factory import make_hardware

    steps = {s.file: s for s in load_script(folder)}
    clock = _Clock()
    config = parse_config(
        f'language = "{lang}"\n[camera]\nkind = "replay"\nreplay_dir = "{folder}"\n'
    )

    with (
        tempfile.TemporaryDirectory() as state,
        make_hardware(config.hardware, "replay", clock=clock) as hw,
    ):
        journal = Journal.open(Path(state) / "journal.jsonl", clock=clock)
        app = App(
            config,
            hw,
            journal,
            clock=clock,
            observer=VisionObserver(stills=True),
            advisor=advise,
            kiosk=kiosk,
        )
        hw.camera.start()

        panel = _Panel(app, hw, clock, out)
        show, press = panel.show, panel.press

        def players_fix(ply: int) -> None:
            """What players do when the referee has not followed the game: tell it the move."""
            ref = app.referee
            if not ref.setup_checked and app.controller.view == "dispute":
                press("ok")  # they check the opening by eye and confirm it
            while ref.position.ply < ply and not ref.position.over:
                truth = GAME[ref.position.ply]
                if ref.state == "ambiguous" and ref.pending is not None:
                    choices = [str(m) for m in ref.pending.choices]
                    if truth in choices:
                        for _ in range(choices.index(truth)):
                            press("right")
                        press("ok")
                        continue
                if app.controller.view not in ("board", "cursor"):
                    press("back")
                legal = [str(m) for m in ref.game.legal_moves()]
                press("right")
                for _ in range(legal.index(truth)):
                    press("right")
                press("ok")

        show("start")
        while True:
            clock.t += 1.0
            if not app.step():
                break
            report = app.last_report
            step = steps.get(Path(app.last_source or "").name)
            caption = step.caption if step else "frame"
            detail = f" → referee: {report.state}: {report.detail}" if report else ""
            show(f"{caption}{detail}")
            if step is not None and step.ply is not None:
                players_fix(step.ply)
            for button in step.presses if step else []:
                press(button)
        if kiosk:
            for _ in range(40):  # ten minutes with nobody at the exhibit, in 15 s steps
                clock.t += 15.0
                app.step(camera=False)
                show(f"idle {int(clock.t - app.controller.last_activity)} s")
            hw.buttons.press("back")
            hw.buttons.press("ok")
            for _ in range(12):  # the operator holds BACK+OK
                clock.t += 0.5
                app.step(camera=False)
            hw.buttons.release("back")
            hw.buttons.release("ok")
            clock.t += 0.5
            app.step(camera=False)
            show("operator holds BACK+OK for 5 s")
        journal.close()
    out.write(f"\nfinal position: {app.referee.position.to_text()}\n")
    _write_frames(panel.shown, frames_out, out)
    return panel.shown


def _write_frames(shown: list[Image.Image], frames_out: Path | None, out: IO[str]) -> None:
    if frames_out is None or not shown:
        return
    frames_out.mkdir(parents=True, exist_ok=True)
    for i, image in enumerate(shown):
        image.resize((512, 256), Image.NEAREST).save(frames_out / f"oled_{i:03d}.png")
    big = [im.convert("L").resize((512, 256), Image.NEAREST) for im in shown]
    big[0].save(
        frames_out / "demo.gif", save_all=True, append_images=big[1:], duration=1200, loop=0
    )
    out.write(f"wrote {len(shown)} frames and demo.gif to {frames_out}\n")


def run_versus(
    out: IO[str],
    frames_out: Path | None = None,
    lang: str = "en",
    level: str = "medium",
    seed: int = 7,
) -> tuple[list[Image.Image], Any]:
    """A visitor against the companion, buttons only, to the final score.

    The companion plays P1 at ``level``: its screen names the move, the
    visitor sows it for the companion and presses OK. The scripted visitor
    takes the largest capture on offer (a greedy beginner), choosing it with
    the cursor as a person would. Returns the OLED frames and the referee.
    """
    import random

    from companion.appliance.app import App
    from companion.appliance.config import parse_config
    from companion.appliance.journal import Journal
    from companion.referee.advice import advise, opponent_advice
    from device.factory import make_hardware
    from engine.play import play

    clock = _Clock()
    config = parse_config(
        f'language = "{lang}"\n[camera]\nkind = "generated"\n'
        f'[play]\nopponent = "{level}"\ncompanion_side = 1\n'
    )
    rng = random.Random(seed)

    def companion(position: Any, rules: Any, lvl: str, history: Any = ()) -> Any:
        return opponent_advice(position, rules, lvl, rng=rng, history=history)

    with (
        tempfile.TemporaryDirectory() as state,
        make_hardware(config.hardware, "fake", clock=clock) as hw,
    ):
        journal = Journal.open(Path(state) / "journal.jsonl", clock=clock)
        app = App(config, hw, journal, clock=clock, manual=True, advisor=advise, opponent=companion)

        panel = _Panel(app, hw, clock, out)
        show, press = panel.show, panel.press

        show("start: the visitor plays P0, the companion P1")
        ref = app.referee
        while not ref.position.over:
            ply = ref.position.ply
            if app.controller.view == "ai":
                press("ok", f"ply {ply + 1}: the visitor sows the companion's move for it, OK")
                continue
            legal = ref.game.legal_moves()
            gains = [play(ref.position, m, ref.rules).captured.points for m in legal]
            choice = gains.index(max(gains))
            press("right", f"ply {ply + 1}: the visitor picks a move")
            for _ in range(choice):
                press("right", f"ply {ply + 1}: the visitor picks a move")
            press(
                "ok", f"ply {ply + 1}: the visitor sows {legal[choice]}, OK; the companion answers"
            )
            if ref.position.ply == ply:
                raise RuntimeError(f"the referee did not take {legal[choice]} at ply {ply}")
        journal.close()
    final = ref.position
    out.write(f"\nfinal position: {final.to_text()}\n")
    _write_frames(panel.shown, frames_out, out)
    return panel.shown, ref


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="oanquan demo", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--frames-out", type=Path, help="write every OLED frame as PNG, and demo.gif"
    )
    parser.add_argument("--lang", choices=("vi", "en"), default="en")
    parser.add_argument(
        "--kiosk", action="store_true", help="museum mode: attract, reset, operator"
    )
    parser.add_argument(
        "--versus",
        choices=("easy", "medium", "hard"),
        help="instead: a visitor plays a whole game against the companion at this level",
    )
    parser.add_argument("--make", action="store_true", help="regenerate the bundled frames")
    parser.add_argument("--frames", type=Path, default=FRAMES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.make:
        steps = make_frames(args.frames)
        print(f"wrote {len(steps)} frames to {args.frames}")
        return 0
    if args.versus:
        run_versus(sys.stdout, args.frames_out, args.lang, args.versus)
        return 0
    run_demo(args.frames, sys.stdout, args.frames_out, args.lang, args.kiosk)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
