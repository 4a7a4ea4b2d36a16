"""``oanquan selftest``: is the hardware ready, and if not, what to fix.

Run by ``systemd/install.sh`` after installing, and by staff with a problem
("the screen is dark"). So every failed check says in plain words what to
do about it (a wiring pin, a group, a command), never just a stack trace.

Four checks, in the order a fault hides the next one:

display  the OLED answers on I2C and shows a test pattern
buttons  every button's GPIO can be claimed and none reads pressed at rest
         (with ``--press N``: each one is pressed within N seconds)
camera   one frame arrives and is neither black, blown out nor featureless
board    the chalk board is found in that frame, big enough to count pebbles;
         where its corners were marked on the device (``corners.json`` beside the
         journal) or given in the config, the board is read there, as ``run``
         reads it, unless the camera's view moved since they were marked or the
         search finds the board well away from them

Settings come from ``companion.appliance.config`` (the loader ``oanquan run`` uses).
The runner takes the checks as plain callables (:class:`Checks`), so it is
tested without hardware; :func:`hardware_checks` builds the real ones from
``device`` and ``vision`` and is also exercised with the ``fake`` backend.
A check returns a one-line description of what it found, or raises: either
:class:`CheckFailed` with its own advice, or a ``device``/``vision`` error that
:func:`advise` turns into advice for that part.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from device.settings import HardwareSettings
    from vision.config import VisionConfig

    Image = npt.NDArray[np.uint8]
else:
    Image = Any

__all__ = [
    "CheckFailed",
    "CheckResult",
    "CheckWarning",
    "Checks",
    "Status",
    "advise",
    "hardware_checks",
    "main",
    "run_checks",
]

DEFAULT_CONFIG = Path("/etc/oanquan/config.toml")

#: BCM GPIO number -> physical pin on the 40-pin header (all Pi models since the B+).
PHYSICAL_PIN: dict[int, int] = {
    2: 3, 3: 5, 4: 7, 5: 29, 6: 31, 7: 26, 8: 24, 9: 21, 10: 19, 11: 23, 12: 32, 13: 33,
    14: 8, 15: 10, 16: 36, 17: 11, 18: 12, 19: 35, 20: 38, 21: 40, 22: 15, 23: 16, 24: 18,
    25: 22, 26: 37, 27: 13,
}  # fmt: skip


class Status(enum.StrEnum):
    """Outcome of one check; only FAIL makes the selftest exit non-zero."""

    OK = "ok"
    WARN = "warn"
    FAIL = "FAIL"
    SKIP = "skip"


@dataclass(frozen=True)
class CheckResult:
    """What one check found and, unless it passed, what to do about it."""

    name: str
    status: Status
    detail: str
    fix: str = ""


class CheckFailed(Exception):
    """Raised by a check that knows exactly what is wrong and how to fix it."""

    status = Status.FAIL

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


class CheckWarning(CheckFailed):
    """Something works but is likely to cause misreadings; does not fail the selftest."""

    status = Status.WARN


@dataclass(frozen=True)
class Shot:
    """The frame the camera check took, handed to the board check.

    A non-empty ``fix`` makes the camera check a warning (a dark frame is
    still worth looking for the board in, so it is not raised).
    """

    image: Image
    detail: str
    fix: str = ""


@dataclass
class Checks:
    """The four checks; None means "not run" (``--skip``, or not wired yet)."""

    display: Callable[[], str] | None = None
    buttons: Callable[[], str] | None = None
    camera: Callable[[], Shot] | None = None
    board: Callable[[Image], str] | None = None


# --------------------------------------------------------------------------- advice

_WIRING = {
    "display": "OLED VCC to pin 1 (3V3), GND to pin 9, SDA to pin 3, SCL to pin 5",
    "buttons": "each button between its GPIO and GND (pin 39); see hardware.md",
    "camera": "CSI ribbon seated both ends, contacts facing the right way; or a USB camera",
}
_GROUP = {"display": "i2c", "buttons": "gpio", "camera": "video"}
_MISSING = {
    "display": (
        "check the wiring ({wiring}); enable I2C (sudo raspi-config nonint do_i2c 0, reboot); "
        "'i2cdetect -y 1' should show 3c or 3d (3d: set display.i2c_address = 0x3D)"
    ),
    "buttons": "check the wiring ({wiring}); is this a Raspberry Pi with /dev/gpiochip0?",
    "camera": (
        "check the wiring ({wiring}); 'rpicam-hello --list-cameras' must list a CSI camera "
        "(camera_auto_detect=1 in /boot/firmware/config.txt, reboot); for USB "
        "'v4l2-ctl --list-devices' and camera.kind = \"opencv\""
    ),
}
_LIBRARY = {
    "display": "the OLED library is missing: re-run systemd/install.sh (pip installs luma.oled)",
    "buttons": "lgpio is missing: sudo apt install python3-lgpio, then re-run systemd/install.sh",
    "camera": (
        "picamera2 is missing or invisible: sudo apt install python3-picamera2; the venv must "
        "be created with --system-site-packages (systemd/install.sh does this)"
    ),
}


def advise(part: str, exc: BaseException) -> tuple[Status, str, str]:
    """Map an exception from checking ``part`` to (status, problem, fix).

    Known ``device``/``vision`` errors are matched by class name through the
    MRO, so this module imports neither package just to give advice.
    """
    if isinstance(exc, CheckFailed):
        return exc.status, exc.problem, exc.fix
    names = {cls.__name__ for cls in type(exc).__mro__}
    problem = str(exc) or type(exc).__name__
    wiring = _WIRING.get(part, "")
    if "DevicePermissionError" in names or isinstance(exc, PermissionError):
        group = _GROUP.get(part, "gpio, i2c and video")
        fix = (
            f"add the user to the '{group}' group (sudo usermod -aG {group} $USER, log in again); "
            "the service gets it from SupplementaryGroups= in oanquan.service"
        )
    elif "DeviceBusyError" in names:
        fix = "another program holds it: stop the service first (sudo systemctl stop oanquan)"
    elif "BackendUnavailableError" in names or isinstance(exc, ImportError):
        fix = _LIBRARY.get(part, "re-run systemd/install.sh")
    elif "DeviceNotFoundError" in names or isinstance(exc, FileNotFoundError):
        fix = _MISSING.get(part, "check the wiring").format(wiring=wiring)
    elif "CameraStoppedError" in names:
        fix = (
            "the camera opened but sent no frame in time: reseat the ribbon, power-cycle, and "
            "check 'rpicam-hello -t 2000' (CSI) or 'v4l2-ctl --list-formats-ext' (USB)"
        )
    elif "DeviceIOError" in names or isinstance(exc, OSError):
        fix = f"it answered, then failed: a loose or long cable? ({wiring})"
    elif "BoardNotFoundError" in names:
        fix = (
            "the whole board must be in view, chalk lines bright and unbroken, evenly lit; "
            "check the saved frame (--save-frame); where no search finds it, mark its corners "
            "on the device (▶ on 'Board not found', hardware.md section 8) or with "
            "'oanquan calibrate'"
        )
    else:
        problem = f"{type(exc).__name__}: {problem}"
        fix = "unexpected error: run with --debug for the traceback and report it"
    return Status.FAIL, problem, fix


# --------------------------------------------------------------------------- runner


def _attempt(name: str, fn: Callable[[], str], debug: bool) -> CheckResult:
    try:
        detail = fn()
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if debug and not isinstance(exc, CheckFailed):
            raise
        status, problem, fix = advise(name, exc)
        return CheckResult(name, status, problem, fix)
    return CheckResult(name, Status.OK, detail)


def run_checks(checks: Checks, *, debug: bool = False) -> list[CheckResult]:
    """Run every configured check; one failing check never stops the others.

    The board check needs the camera's frame, so it is skipped (not failed)
    when the camera check did not produce one: the camera's own result
    already says what to fix.
    """
    results: list[CheckResult] = []
    for name, check in (("display", checks.display), ("buttons", checks.buttons)):
        if check is not None:
            results.append(_attempt(name, check, debug))
    shot: Shot | None = None
    camera = checks.camera
    if camera is not None:

        def take() -> str:
            nonlocal shot
            shot = camera()
            return shot.detail

        result = _attempt("camera", take, debug)
        if shot is not None and shot.fix:
            result = CheckResult("camera", Status.WARN, shot.detail, shot.fix)
        results.append(result)
    board = checks.board
    if board is not None:
        if shot is None:
            results.append(CheckResult("board", Status.SKIP, "no camera frame to look at"))
        else:
            image = shot.image
            results.append(_attempt("board", lambda: board(image), debug))
    return results


def report(results: Sequence[CheckResult], out: TextIO) -> int:
    """Print results for a person at the Pi; return the exit status."""
    width = max((len(r.name) for r in results), default=0)
    for r in results:
        print(f"[{r.status.value:^4}] {r.name:<{width}}  {r.detail}", file=out)
        if r.fix:
            print(f"{'':>6} {'':<{width}}  fix: {r.fix}", file=out)
    counts = {s: sum(r.status is s for r in results) for s in Status}
    print(
        f"{counts[Status.OK]} ok, {counts[Status.WARN]} warnings, "
        f"{counts[Status.FAIL]} failed, {counts[Status.SKIP]} skipped",
        file=out,
    )
    return 1 if counts[Status.FAIL] else 0


# --------------------------------------------------------------------------- real checks


def test_pattern(size: tuple[int, int] = (128, 64)) -> Any:
    """A 1-bit image with a border, corner ticks and a label.

    A missing edge or a 2-pixel shift with noise on the right is the classic
    sign of an SH1106 driven as SSD1306 or with the wrong column offset.
    """
    from PIL import Image as PILImage
    from PIL import ImageDraw

    w, h = size
    img = PILImage.new("1", size, 0)
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, w - 1, h - 1), outline=1)
    for x, y in ((2, 2), (w - 6, 2), (2, h - 6), (w - 6, h - 6)):
        draw.rectangle((x, y, x + 3, y + 3), fill=1)
    draw.text((10, h // 2 - 8), "oanquan selftest", fill=1)
    return img


def _pins(settings: Any) -> str:
    from device.buttons import describe

    return ", ".join(
        f"{name} GPIO{pin} (pin {PHYSICAL_PIN.get(pin, '?')})"
        for name, pin in describe(settings).items()
    )


def _frame_stats(image: Image) -> tuple[float, float]:
    grey = image.mean(axis=2)
    return float(grey.mean()), float(grey.std())


def _grain(image: Image, second: Image | None) -> float | None:
    """The sensor's grain (grey levels) from two frames of the still scene; None where
    there is no second frame or the scene moved between them."""
    from vision.frames import moved, temporal_noise

    if second is None or moved(image, second):
        return None
    return temporal_noise(image, second)


def _open_camera(
    settings: HardwareSettings, backend: str, frames: Callable[[int], Image | None] | None
) -> Any:
    """The configured camera, not started; simulated unless ``backend`` is "real".

    Hook point: this mirrors the choice ``device.factory`` makes; it should
    become a call to a public single-camera opener there once one exists
    (``make_hardware`` opens all three parts at once, so a missing OLED would
    hide the camera's own result).
    """
    from device.camera import (
        GeneratedCamera,
        OpenCvCamera,
        Picamera2Camera,
        ReplayCamera,
        grey_frames,
    )

    cam = settings.camera
    if cam.kind == "replay" and cam.replay_dir is not None:
        return ReplayCamera(cam.replay_dir, loop=cam.loop)
    if backend != "real" or cam.kind == "generated":
        return GeneratedCamera(frames or grey_frames())
    if cam.kind == "opencv":
        return OpenCvCamera(cam)
    return Picamera2Camera(cam)


@dataclass
class _Session:
    """Hardware opened lazily by the checks and closed once at the end."""

    settings: HardwareSettings
    backend: str
    hold_s: float = 0.0
    sleep: Callable[[float], None] = time.sleep
    opened: list[Any] = dataclasses.field(default_factory=list)

    def close(self) -> None:
        if self.hold_s > 0 and self.opened:
            self.sleep(self.hold_s)  # keep the test pattern up for a person to look at
        for part in reversed(self.opened):
            with contextlib.suppress(Exception):
                part.close()
        self.opened.clear()


def hardware_checks(
    settings: HardwareSettings,
    *,
    backend: str = "real",
    press_s: float = 0.0,
    save_frame: Path | None = None,
    hold_s: float = 0.0,
    on_prompt: Callable[[str], None] = print,
    on_buttons: Callable[[Any], None] | None = None,
    frames: Callable[[int], Image | None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    vision: VisionConfig | None = None,
    corners: Path | None = None,
) -> tuple[Checks, Callable[[], None]]:
    """Build the real checks on ``device`` and ``vision``; return them and a closer.

    ``backend`` is passed to ``device.factory`` ("real" on the Pi; "fake" runs
    the same code on simulated hardware). ``on_buttons`` receives the opened
    buttons object before waiting for presses (tests drive fake buttons there);
    ``frames`` feeds the fake camera (default: plain grey frames); ``clock``
    times the ``press_s`` window; ``vision`` is the app's ``[vision]`` table
    (None: vision's defaults): its lens is undone and its search finds the board.
    ``corners``: the corners file ``oanquan run`` keeps beside its journal
    (``companion.appliance.corners``); corners there for the frame's size, else the
    config's, are where the board is read, as ``run`` reads it.
    """
    session = _Session(settings, backend, hold_s=hold_s)

    def check_display() -> str:
        from device.display import OledDisplay, open_display, open_dummy_luma

        disp_settings = dataclasses.replace(settings.display, required=True)
        if backend == "real":
            display: Any = open_display(disp_settings)
        else:
            display = OledDisplay(open_dummy_luma(disp_settings), name="dummy")
        session.opened.append(display)
        display.show(test_pattern(display.size))
        where = f"{disp_settings.driver} at 0x{disp_settings.i2c_address:02X}"
        return (
            f"{where} shows a test pattern: a frame around all four edges; "
            "if the right edge is noisy or the picture is shifted, see hardware.md (SH1106 offset)"
        )

    def check_buttons() -> str:
        from device.buttons import FakeButtons, open_buttons

        if backend == "real":
            buttons: Any = open_buttons(settings.buttons, pin_factory=None)
        else:
            buttons = FakeButtons(settings.buttons)
        session.opened.append(buttons)
        stuck = [
            name
            for name in settings.buttons.pins
            if name in buttons.names and buttons.is_pressed(name)
        ]
        if stuck:
            raise CheckFailed(
                f"reads pressed with nothing touching it: {', '.join(stuck)}",
                "a button wired to 3V3 instead of GND, or shorted; "
                f"wiring: {_pins(settings.buttons)}",
            )
        if press_s <= 0:
            return f"claimed {_pins(settings.buttons)}; none stuck (--press 20 to test each)"
        return _wait_for_presses(buttons)

    def _wait_for_presses(buttons: Any) -> str:
        from device.ports import Edge

        waiting = list(buttons.names)
        on_prompt(f"press each button once within {press_s:g} s: {', '.join(waiting)}")
        if on_buttons is not None:
            on_buttons(buttons)
        deadline = clock() + press_s
        while waiting:
            left = deadline - clock()
            if left <= 0:
                break
            for event in buttons.events(timeout=left):
                if event.edge in (Edge.PRESS, Edge.STEP) and event.button in waiting:
                    waiting.remove(event.button)
                    on_prompt(f"  {event.button}: ok")
        if waiting:
            raise CheckFailed(
                f"no press seen from: {', '.join(waiting)}",
                f"check those buttons' wires to GND (pin 39) and their GPIOs: "
                f"{_pins(settings.buttons)}",
            )
        return f"all {len(buttons.names)} buttons pressed: {_pins(settings.buttons)}"

    def check_camera() -> Shot:
        from device.errors import EndOfFramesError
        from vision.frames import FRAMES, NOISY

        camera = _open_camera(settings, backend, frames)
        session.opened.append(camera)
        camera.start()
        frame = camera.grab()
        try:  # a second frame tells the sensor's grain (a replay may hold only one)
            second: Image | None = camera.grab().image
        except EndOfFramesError:
            second = None
        camera.stop()
        image = frame.image
        if save_frame is not None:
            import cv2

            cv2.imwrite(str(save_frame), image)
        w, h = frame.size
        mean, spread = _frame_stats(image)
        detail = f"{camera.name}: {w}x{h} frame, brightness {mean:.0f}/255"
        grain = _grain(image, second)
        if grain is not None:
            detail += f", grain {grain:.1f} grey levels"
        if mean < 25:
            return Shot(
                image,
                f"{detail}: too dark",
                "more light on the board, lens cap off, or re-run 'oanquan calibrate' "
                "to re-lock the exposure",
            )
        if mean > 235:
            return Shot(
                image,
                f"{detail}: blown out",
                "too much light on the board or in the lens (sun, a lamp in view)",
            )
        if spread < 4:
            return Shot(
                image,
                f"{detail}: featureless (contrast {spread:.1f})",
                "lens cap on, out of focus, or pointing at a blank surface",
            )
        if grain is not None and grain >= NOISY:
            return Shot(
                image,
                f"{detail}: grainy (dim light, high gain)",
                "more light on the board: grain hides pieces (a tally counts the mean of "
                f"{FRAMES} frames, play is read frame by frame; hardware.md, lighting)",
            )
        return Shot(image, detail)

    def check_board(image: Image) -> str:
        from vision.config import VisionConfig
        from vision.detect import PX as counter_px
        from vision.errors import BoardNotFoundError
        from vision.lens import undistort
        from vision.locate import locate_board, manual_outline, support

        # The counter reads every square at ``counter_px`` pixels a side; a camera that
        # gives fewer throws detail away before counting starts. Piece size relative to
        # a square is the players' choice, so only pixels per square are judged here.
        cfg = vision or VisionConfig()
        given, view, source = given_corners(image.shape, cfg, corners)
        straight = undistort(image, cfg.lens)
        if given is None:
            try:
                outline = locate_board(straight, cfg.locate)
            except BoardNotFoundError as exc:  # (said with the corners passed over, if any)
                _, problem, fix = advise("board", exc)
                raise CheckFailed(problem + source, fix) from exc
            detail = f"board found (fit {outline.quality:.2f}){source}"
        else:
            cfg = dataclasses.replace(
                cfg, locate=dataclasses.replace(cfg.locate, manual_corners=given)
            )
            marked = manual_outline(cfg, straight.shape)
            assert marked is not None  # (the corners are set)
            outline = marked
            held = support(straight, outline, cfg.locate)
            detail = f"board at the corners {source} (chalk along them {held:.2f})"
            # Faint chalk along the right corners is why they were given (on brick it can
            # score nothing), so no level of it says they are wrong; the view kept with
            # them, or a board the search finds elsewhere with clearly more chalk, does.
            moved = _camera_moved(image, view) if view is not None else None
            if moved is None:
                moved = _board_elsewhere(straight, outline, held, cfg)
            if moved is not None:
                redo = (
                    "correct [vision.locate] manual_corners ('oanquan calibrate') or mark them "
                    "on the device (menu: Mark board corners)"
                    if view is None and source.startswith("in the config")
                    else "'oanquan run' follows a knock where the old view still matches it;"
                    " else mark them again (menu: Mark board corners) or forget them"
                    " (operator menu) so the board is searched for"
                )
                raise CheckWarning(
                    f"{detail}: {moved}", f"{redo}; check the saved frame (--save-frame)"
                )
        square_px = outline.px_per_unit()
        detail = f"{detail}; a square is {square_px:.0f} px, the counter reads {counter_px}"
        if square_px < counter_px:
            raise CheckWarning(
                f"{detail}: squares too small to count pieces reliably",
                f"lower the camera or use a higher resolution: need >= {counter_px} px "
                "per square (hardware.md, camera height)",
            )
        return detail

    checks = Checks(check_display, check_buttons, check_camera, check_board)
    return checks, session.close


def given_corners(
    shape: tuple[int, ...], vision: VisionConfig, path: Path | None
) -> tuple[tuple[tuple[float, float], ...] | None, npt.NDArray[np.uint8] | None, str]:
    """The corners ``oanquan run`` would read a frame of ``shape`` at, the camera's view
    kept with them (``vision.locate.follow``; None where none was), and in words where
    they come from: those marked on the device (``path``) where they stand for this
    frame (``MarkedCorners.unused_for``), else the config's (``[vision.locate]
    manual_corners``), else None (the board is searched for). A corners file ``run``
    would pass over is named with why."""
    from companion.appliance.corners import CornersFileError, Unused, load_corners

    configured = vision.locate.manual_corners
    passed = ""
    try:
        kept = None if path is None else load_corners(path)
    except CornersFileError as exc:
        kept, passed = None, f" (marked corners not used: {exc})"
    if kept is not None:
        why = kept.unused_for(shape, configured)
        if why is None:
            return kept.corners, kept.view, f"marked on the device ({path})"
        w, h = kept.size
        passed = (
            f" (corners marked on {w}x{h} frames, the camera gives {shape[1]}x{shape[0]})"
            if why is Unused.OTHER_SIZE
            else " (marked corners followed from the config's earlier corners)"
        )
    if configured is not None:
        return configured, None, f"in the config{passed}"
    return None, None, passed


def _camera_moved(image: Image, view: npt.NDArray[np.uint8]) -> str | None:
    """What says the camera moved since ``view`` was kept with the corners (as
    ``vision.locate.follow`` would measure it, on one frame), or None."""
    import numpy as np

    from vision.errors import ImagePairError
    from vision.locate.follow import TURNS, is_move, view_shift

    try:
        shift, _ = view_shift(view, image, TURNS)
    except ImagePairError:
        return None
    if not is_move(shift, image.shape[1]):
        return None
    share = float(np.hypot(shift.dx, shift.dy)) / image.shape[1]
    turn = f", turned {shift.degrees:+.1f} deg" if shift.degrees else ""
    return f"the camera moved {100 * share:.1f}% of the frame's width{turn} since they were marked"


#: A board the search finds this share of a square or more from the given corners is
#: elsewhere. The fixed camera's locator takes a twentieth as a move between two of its own
#: fits, but the search's own fit can stand a seventh of a square off true corners whose
#: chalk it outscores (generated scenes with wobbly lines), and a knock worth telling the
#: players moves the board by more.
ELSEWHERE_SHARE = 0.25


def _board_elsewhere(
    straight: Image, outline: Any, held: float, vision: VisionConfig
) -> str | None:
    """What says the board lies elsewhere than ``outline`` (the given corners, whose chalk
    scored ``held``): the search finds it away from them with clearly more chalk, as the
    fixed camera's locator takes a moved board (``vision.locate.verify``); or None."""
    import numpy as np

    from vision.errors import BoardNotFoundError
    from vision.locate import locate_board
    from vision.locate.verify import MOVED_GAIN

    searched = dataclasses.replace(vision.locate, manual_corners=None)
    try:
        found = locate_board(straight, searched)
    except BoardNotFoundError:
        return None
    apart = float(np.max(np.linalg.norm(found.corners - outline.corners, axis=1)))
    if apart <= ELSEWHERE_SHARE * outline.px_per_unit() or found.quality - held < MOVED_GAIN:
        return None
    return (
        f"the search finds the board {apart:.0f} px away, with more chalk"
        f" ({found.quality:.2f}): the camera or the board moved"
    )


# --------------------------------------------------------------------------- CLI

PARTS = ("display", "buttons", "camera", "board")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="oanquan selftest",
        description="Check display, buttons, camera and board view; say what to fix.",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help=f"config file (default: $OANQUAN_CONFIG, else {DEFAULT_CONFIG} if present)",
    )
    p.add_argument(
        "--backend",
        choices=("real", "fake"),
        default="real",
        help="'fake' runs the same checks on simulated hardware",
    )
    p.add_argument(
        "--skip", action="append", default=[], choices=PARTS, help="leave out a check (repeatable)"
    )
    p.add_argument(
        "--press",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for each button to be pressed once",
    )
    p.add_argument(
        "--hold",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="keep the display test pattern up this long",
    )
    p.add_argument(
        "--save-frame", type=Path, default=None, metavar="FILE", help="write the camera frame here"
    )
    p.add_argument(
        "--corners",
        type=Path,
        default=None,
        metavar="FILE",
        help="board corners marked on the device (default: corners.json in storage.journal_dir,"
        " beside the journal 'oanquan run' keeps)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks of unexpected errors")
    return p


@contextlib.contextmanager
def _closing(close: Callable[[], None]) -> Iterator[None]:
    try:
        yield
    finally:
        close()


def main(argv: list[str], *, out: TextIO | None = None) -> int:
    """Entry point for ``oanquan selftest``; 0 when nothing failed, 1 otherwise.

    Ctrl-C (while waiting for button presses, say) ends it without a traceback.
    """
    from companion.commands._cli import guarded

    return guarded("oanquan selftest", lambda: _main(argv, out))


def _main(argv: list[str], out: TextIO | None) -> int:
    stream = sys.stdout if out is None else out
    args = _parser().parse_args(argv)
    # The same loader as `oanquan run`, so both always read the file alike:
    # --config, else $OANQUAN_CONFIG, else /etc/oanquan/config.toml if present.
    from companion.appliance.config import load_config
    from vision.config import config_from_dict

    try:
        config = load_config(args.config)
        vision = config_from_dict(config.vision)
    except (OSError, ValueError) as exc:
        print(f"selftest: {exc}", file=sys.stderr)
        return 2
    from companion.appliance.corners import CORNERS_NAME

    print(
        f"oanquan selftest ({args.backend} hardware, config: {config.source or 'defaults'})",
        file=stream,
    )
    checks, close = hardware_checks(
        config.hardware,
        vision=vision,
        backend=args.backend,
        press_s=args.press,
        save_frame=args.save_frame,
        hold_s=args.hold,
        on_prompt=lambda text: print(text, file=stream, flush=True),
        corners=args.corners or config.storage.journal_dir / CORNERS_NAME,
    )
    for part in args.skip:
        setattr(checks, part, None)
    with _closing(close):
        results = run_checks(checks, debug=args.debug)
    return report(results, stream)
