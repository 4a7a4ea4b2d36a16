"""``oanquan demo``: the whole companion on emulated hardware and bundled frames.

The bundled game is the hand-traced full game of the rules (9 plies from the
opening to a 52-18 finish), rendered by training/render's Blender scene
generator (a fixed camera 1.3 m above chalk on concrete, pebbles 15+ px
wide), with the things that happen at a real board: a hint asked
for, a refill with borrowed pebbles, a pebble dropped in the wrong square
(a dispute, then the board put right), a hand over the board, and players
confirming a move the camera cannot tell apart. Buttons are pressed by a
script. It prints one line per event (a camera frame and the referee's
verdict, the players' presses), then the score and how many moves the camera
found by itself; ``--frames`` adds every OLED frame (64 columns), and
``--frames-out DIR`` writes them through luma.emulator's capture devices
(PNGs and a GIF).

``oanquan demo --make`` (or ``make demo-frames``) re-renders the bundled frames
with the render venv (training/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
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


@dataclass
class Step:
    """One bundled frame and the buttons the script presses after it."""

    file: str
    caption: str
    presses: list[str] = field(default_factory=list)
    #: the game's ply once this frame's move is made (what the players know)
    ply: int | None = None


class DemoError(Exception):
    """The bundled frames cannot be re-rendered here."""


#: The Blender generator's venv (Makefile RENDER_VENV); OANQUAN_RENDER_PYTHON overrides it.
RENDER_PYTHON = Path.home() / ".cache" / "oanquan" / "venv-render" / "bin" / "python"


def make_frames(out: Path = FRAMES) -> int:
    """Re-render the bundled frames with training/render's Blender generator (`make demo-frames`).

    Returns the generator's exit status.

    Raises:
        DemoError: no source checkout (training/render) or no render venv to run it.
    """
    root = Path(__file__).resolve().parents[2]
    python = Path(os.environ.get("OANQUAN_RENDER_PYTHON", RENDER_PYTHON))
    if not (root / "training" / "render" / "sequence").is_dir():
        raise DemoError(f"--make needs a source checkout: no training/render under {root}")
    if not python.is_file():
        raise DemoError(f"--make needs the render venv ({python}): run 'make render-venv'")
    cmd = [str(python), "-m", "training.render.sequence", "--demo", str(out.resolve())]
    return subprocess.run(cmd, cwd=root, check=False).returncode


def load_script(folder: Path = FRAMES) -> list[Step]:
    data = json.loads((folder / SCRIPT).read_text(encoding="utf-8"))
    return [Step(**item) for item in data]


#: Quadrant blocks by (top-left, top-right, bottom-left, bottom-right) lit.
_QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"
#: Output lines are cut to this width (an 80-column terminal).
WIDTH = 80


def oled_text(image: Image.Image) -> str:
    """A 128x64 frame in quadrant blocks, every pixel kept: 32 lines of 64, in a border."""
    px = image.convert("1").load()
    assert px is not None
    w, h = image.size

    def lit(x: int, y: int) -> int:
        return 1 if x < w and y < h and px[x, y] else 0

    rows = []
    for y in range(0, h, 2):
        line = []
        for x in range(0, w, 2):
            code = lit(x, y) | lit(x + 1, y) << 1 | lit(x, y + 1) << 2 | lit(x + 1, y + 1) << 3
            line.append(_QUADRANTS[code])
        rows.append("".join(line).rstrip())
    frame = "\n".join("│" + r.ljust(w // 2) + "│" for r in rows)
    edge = "─" * (w // 2)
    return f"┌{edge}┐\n{frame}\n└{edge}┘"


def fit(line: str, width: int = WIDTH) -> str:
    """One output line, cut to the terminal's width."""
    return line if len(line) <= width else line[: width - 1] + "…"


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class _Panel:
    """What the audience sees: one line per event, and the OLED frame with ``frames``.

    Button presses between two camera frames are gathered into one "players" line
    naming each button and the screen it led to.
    """

    def __init__(self, app: Any, hw: Any, clock: _Clock, out: IO[str], frames: bool) -> None:
        self.app, self.hw, self.clock, self.out = app, hw, clock, out
        self.frames = frames
        self.shown: list[Image.Image] = []
        self._presses: list[str] = []
        self._ply_before_presses = 0

    def show(self, line: str | None = None) -> None:
        """Print ``line`` (and the screen, when it changed and ``frames`` is on)."""
        self.flush()
        if line is not None:
            self.out.write(fit(line) + "\n")
        self._draw()

    def _draw(self) -> None:
        image = self.app.draw()
        if self.shown and self.shown[-1].tobytes() == image.tobytes():
            return
        self.shown.append(image.copy())
        if self.frames:
            self.out.write(oled_text(image) + "\n")

    def flush(self) -> None:
        """The gathered presses as one line: what was pressed, and what it did."""
        if not self._presses:
            return
        ref = self.app.referee
        done = ref.game.moves[self._ply_before_presses : ref.position.ply]
        what = f" -> {', '.join(str(m) for m in done)} entered" if done else ""
        runs: list[list[Any]] = []
        for press in self._presses:
            if runs and runs[-1][0] == press:
                runs[-1][1] += 1
            else:
                runs.append([press, 1])
        said = ", ".join(p if n == 1 else f"{p} x{n}" for p, n in runs)
        self.out.write(fit(f"      players press {said}{what}") + "\n")
        self._presses = []

    def press(self, button: str, caption: str | None = None, *, note: bool = True) -> None:
        """A short press; the screen it leads to is noted (and drawn with ``frames``)."""
        if not self._presses:
            self._ply_before_presses = self.app.referee.position.ply
        self.hw.buttons.press(button)
        self.clock.t += 0.1
        self.app.step(camera=False)
        self.hw.buttons.release(button)
        self.clock.t += 0.1
        self.app.step(camera=False)
        self.clock.t += 0.5  # past the debounce and chord windows: the gesture is decided
        self.app.step(camera=False)
        view = str(self.app.controller.view)
        if note:
            self._presses.append(f"{button.upper()} ({caption or view})")
        self._draw()


def _score_line(position: Any) -> str:
    outcome = position.outcome
    if outcome is None:
        return f"not over after {position.ply} moves"
    final = " - ".join(f"P{p} {v}" for p, v in enumerate(outcome.final))
    return f"final score: {final} ({outcome.reason}, {position.ply} moves)"


def _hardware_settings(config: Any, frames_out: Path | None) -> Any:
    """The config's hardware, with luma.emulator's capture devices when frames are wanted."""
    from dataclasses import replace

    hw = config.hardware
    if frames_out is None:
        return hw
    display = replace(hw.display, kind="capture", capture_dir=frames_out)
    return replace(hw, display=display)


@dataclass
class DemoResult:
    """What a demo run showed: every distinct OLED frame, and who found each move."""

    frames: list[Image.Image]
    referee: Any
    #: moves the referee accepted from the camera alone, and all moves of the game
    camera_moves: int = 0
    moves: int = 0
    #: moves the camera asked about with the right one as its first guess (one OK press)
    first_guess: int = 0


def run_demo(
    folder: Path,
    out: IO[str],
    frames_out: Path | None = None,
    lang: str = "en",
    kiosk: bool = False,
    *,
    frames: bool = False,
) -> DemoResult:
    """Play the bundled game through the real app loop, one line per event.

    With ``frames`` every new OLED frame is printed too (64 columns); with
    ``frames_out`` luma.emulator's capture devices write each one as a PNG and all
    of them as ``oled.gif``. With ``kiosk`` the museum behaviour follows the game:
    nobody touches the exhibit, so it returns to the attract loop (title, history,
    saying), counts down and resets; then the operator's hidden hold opens the
    operator menu.

    Raises:
        DeviceError: ``frames_out`` cannot be made a folder.
    """
    from companion.appliance.app import App
    from companion.appliance.config import parse_config
    from companion.appliance.journal import Journal
    from companion.appliance.observe import VisionObserver
    from companion.commands.tally import demo_tally, read_frame_spread
    from companion.referee.advice import advise
    from device.buttons import FakeButtons
    from device.factory import make_hardware

    steps = {s.file: s for s in load_script(folder)}
    clock = _Clock()
    config = parse_config(
        f'language = "{lang}"\n[camera]\nkind = "replay"\nreplay_dir = "{folder}"\n'
    )

    with (
        tempfile.TemporaryDirectory() as state,
        make_hardware(_hardware_settings(config, frames_out), "replay", clock=clock) as hw,
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
            spread_reader=read_frame_spread,
        )
        hw.camera.start()

        panel = _Panel(app, hw, clock, out, frames)
        show, press = panel.show, panel.press
        camera_moves = 0
        first_guess = 0

        def players_fix(ply: int) -> None:
            """What players do when the referee has not followed the game: tell it the move."""
            nonlocal first_guess
            ref = app.referee
            if not ref.setup_checked and app.controller.view == "dispute":
                press("ok", "opening checked by eye")
            while ref.position.ply < ply and not ref.position.over:
                truth = GAME[ref.position.ply]
                if ref.state == "ambiguous" and ref.pending is not None:
                    choices = [str(m) for m in ref.pending.choices]
                    if truth in choices:
                        first_guess += choices.index(truth) == 0
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

        show(f"the bundled game: {len(steps)} camera frames, 9 moves (P0 plays first)")
        while True:
            clock.t += 1.0
            panel.flush()
            ply = app.referee.position.ply
            if not app.step():
                break
            camera_moves += app.referee.position.ply - ply
            report = app.last_report
            step = steps.get(Path(app.last_source or "").name)
            name = Path(app.last_source or "frame").stem.replace("frame_", "f")
            caption = step.caption if step else "frame"
            verdict = f"{report.state}: {report.detail}" if report else "no reading"
            show(f"{name:>4}  {caption}")
            show(f"      camera -> {verdict}")
            if step is not None and step.ply is not None:
                players_fix(step.ply)
            for button in step.presses if step else []:
                press(button)
        panel.flush()
        played = game = app.referee
        if not kiosk:
            # The dispute that ends many games: each side's heap spread out and counted.
            demo_tally(app, press, show)
            panel.flush()
        if kiosk:
            last_view, alone_since = app.controller.view, clock.t
            for _ in range(40):  # ten minutes with nobody at the exhibit, in 15 s steps
                clock.t += 15.0
                app.step(camera=False)
                view = app.controller.view
                if view != last_view or app.referee is not game:
                    alone = int(clock.t - alone_since)
                    fresh = ", a new game" if app.referee is not game else ""
                    show(f"kiosk  {alone} s with nobody at the exhibit: the {view} screen{fresh}")
                    last_view, game = view, app.referee
                else:
                    panel.show()
            buttons = hw.buttons
            assert isinstance(buttons, FakeButtons)  # the replay backend's mock pins
            buttons.press("back")
            buttons.press("ok")
            for _ in range(12):  # the operator holds BACK+OK
                clock.t += 0.5
                app.step(camera=False)
            buttons.release("back")
            buttons.release("ok")
            clock.t += 0.5
            app.step(camera=False)
            show(f"kiosk  the operator holds BACK+OK for 5 s: the {app.controller.view} screen")
        journal.close()
    ref = played
    moves = ref.position.ply
    result = DemoResult(panel.shown, ref, camera_moves, moves, first_guess)
    out.write(fit(_score_line(ref.position)) + "\n")
    by_hand = moves - camera_moves - first_guess
    out.write(
        fit(
            f"the camera identified {camera_moves} of {moves} moves by itself "
            f"and {first_guess} as its first guess; {by_hand} by hand"
        )
        + "\n"
    )
    _wrote(panel.shown, frames_out, out)
    return result


def _wrote(shown: list[Image.Image], frames_out: Path | None, out: IO[str]) -> None:
    if frames_out is not None and shown:
        out.write(fit(f"wrote {len(shown)} OLED frames and oled.gif to {frames_out}") + "\n")


def run_versus(
    out: IO[str],
    frames_out: Path | None = None,
    lang: str = "en",
    level: str = "medium",
    seed: int = 7,
    *,
    frames: bool = False,
) -> tuple[list[Image.Image], Any]:
    """A visitor against the companion, buttons only, to the final score.

    The companion plays P1 at ``level``: its screen names the move, the
    visitor sows it for the companion and presses OK. The scripted visitor
    takes the largest capture on offer (a greedy beginner), choosing it with
    the cursor as a person would. One line per move; ``frames`` and
    ``frames_out`` as for :func:`run_demo`. Returns the OLED frames and the referee.
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
        make_hardware(_hardware_settings(config, frames_out), "fake", clock=clock) as hw,
    ):
        journal = Journal.open(Path(state) / "journal.jsonl", clock=clock)
        app = App(config, hw, journal, clock=clock, manual=True, advisor=advise, opponent=companion)

        panel = _Panel(app, hw, clock, out, frames)
        show, press = panel.show, panel.press

        show(f"versus {level}: a visitor (P0, greedy) against the companion (P1), buttons only")
        ref = app.referee
        while not ref.position.over:
            ply = ref.position.ply
            if app.controller.view == "ai":
                press("ok", note=False)
                done = ref.game.moves[ply : ref.position.ply]
                named = ", ".join(str(m) for m in done) or "nothing"
                show(
                    f"{ply + 1:>4}  the companion (P1) names {named}: the visitor sows the companion's move"
                )
                continue
            legal = ref.game.legal_moves()
            gains = [play(ref.position, m, ref.rules).captured.points for m in legal]
            choice = gains.index(max(gains))
            for _ in range(choice + 1):
                press("right", note=False)
            press("ok", note=False)  # the move line below says it all
            if ref.position.ply == ply:
                raise RuntimeError(f"the referee did not take {legal[choice]} at ply {ply}")
            show(f"{ply + 1:>4}  the visitor (P0) sows {legal[choice]} (+{max(gains)})")
        journal.close()
    out.write(fit(_score_line(ref.position)) + "\n")
    _wrote(panel.shown, frames_out, out)
    return panel.shown, ref


def _conflict(args: argparse.Namespace) -> str | None:
    """The first pair of options that cannot go together, as one line."""
    if args.make:
        for name in ("versus", "kiosk", "frames_out", "frames", "lang"):
            if getattr(args, name):
                return (
                    f"--make renders the bundled frames; --{name.replace('_', '-')} is for a game"
                )
    if args.versus and args.kiosk:
        return "--kiosk runs the exhibit after the camera game; --versus is a buttons-only game"
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="oanquan demo",
        description="The whole companion on emulated hardware: a recorded game refereed from "
        "bundled camera frames, one line per event.",
    )
    parser.add_argument(
        "--frames", action="store_true", help="print every OLED frame too (64 columns)"
    )
    parser.add_argument(
        "--frames-out",
        type=Path,
        metavar="DIR",
        help="write every OLED frame as DIR/oled_NNNN.png and all of them as DIR/oled.gif",
    )
    parser.add_argument("--lang", choices=("vi", "en"), help="screen language (default en)")
    parser.add_argument(
        "--kiosk", action="store_true", help="museum mode: attract, reset, operator"
    )
    parser.add_argument(
        "--versus",
        choices=("easy", "medium", "hard"),
        help="instead: a visitor plays a whole game against the companion at this level",
    )
    parser.add_argument("--make", action="store_true", help="regenerate the bundled frames")
    parser.add_argument("--frames-dir", type=Path, default=FRAMES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    conflict = _conflict(args)
    if conflict is not None:
        print(f"oanquan demo: {conflict}", file=sys.stderr)
        return 2
    lang = args.lang or "en"
    if args.make:
        try:
            return make_frames(args.frames_dir)
        except DemoError as exc:
            print(f"oanquan demo: {exc}", file=sys.stderr)
            return 2
    from device.errors import DeviceError

    try:
        if args.versus:
            run_versus(sys.stdout, args.frames_out, lang, args.versus, frames=args.frames)
        else:
            run_demo(
                args.frames_dir,
                sys.stdout,
                args.frames_out,
                lang,
                args.kiosk,
                frames=args.frames,
            )
    except DeviceError as exc:
        print(f"oanquan demo: --frames-out: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
