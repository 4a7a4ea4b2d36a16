"""``oanquan run``: the appliance on the configured hardware, under systemd.

Start-up order, so a mistake in the file never reaches the hardware:

1. read and validate the whole config file, every table including
   ``[rules]`` and ``[vision]`` (:func:`companion.appliance.config.load_config`):
   a bad value is one line naming the key and exit status 2, which the unit
   does not restart (``RestartPreventExitStatus=2``);
2. open the journal (an unusable one: one line, status 1);
3. open the hardware, then the vision observer, then the loop.

``--hardware fake`` runs the very same loop on any machine: mock-pin buttons,
luma's dummy display and the camera from the config (``camera.kind =
"replay"`` with a folder of frames, or generated frames), which is how the
soak (``bench/soak.py``) and outside checks drive it.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from companion.appliance.app import App
from companion.appliance.config import Config, ConfigError, load_config
from companion.appliance.corners import CORNERS_NAME
from companion.appliance.journal import Journal, JournalError
from companion.appliance.service import Notifier, ShutdownHandler
from companion.commands._cli import INTERRUPTED
from device.errors import DeviceError
from device.factory import Hardware, make_hardware
from device.settings import laptop_settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oanquan run",
        description="Run the referee: camera, OLED and buttons on a Pi, or a webcam, a window "
        "and the keyboard on a laptop (laptop mode below).",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="config file (default: $OANQUAN_CONFIG, else /etc/oanquan/config.toml if present, "
        "else the built-in defaults)",
    )
    parser.add_argument("--manual", action="store_true", help="no camera: moves from the buttons")
    parser.add_argument(
        "--kiosk", action="store_true", help="museum mode: attract loop, auto reset"
    )
    parser.add_argument(
        "--hardware",
        choices=("real", "fake"),
        default="real",
        help="'fake': mock buttons, a dummy display and the configured camera (replay folder)",
    )
    laptop = parser.add_argument_group(
        "laptop mode", "try the referee without a Pi (needs: pip install '.[laptop]')"
    )
    laptop.add_argument(
        "--camera",
        metavar="SPEC",
        help="usb:N (webcam N, e.g. usb:0), usb:/dev/PATH or replay:FOLDER (overrides [camera])",
    )
    laptop.add_argument(
        "--display",
        metavar="KIND",
        help="window (the OLED in a window), capture:FOLDER (PNGs + GIF), oled or none",
    )
    laptop.add_argument(
        "--keys",
        action="store_true",
        help="the window's keys as buttons: arrows LEFT/RIGHT, Enter OK, Backspace BACK",
    )
    parser.add_argument(
        "--journal",
        metavar="FILE",
        help="journal file (default: journal.jsonl in storage.journal_dir)",
    )
    parser.add_argument(
        "--frames",
        type=int,
        default=0,
        metavar="N",
        help="stop after N turns of the loop (0: run until stopped or the replay ends)",
    )
    return parser


def main(argv: list[str]) -> int:
    """The appliance: hardware, the journal in the state directory, systemd notify.

    A missing camera or board is shown on the screen and retried, never an
    exit: under systemd an exit means a restart, and repeated restarts reboot
    the Pi. Only a bad config (status 2) or an unusable journal (status 1)
    stops the service, with one line saying what to fix.
    """
    args = _parser().parse_args(argv)
    if args.frames < 0:
        print("oanquan run: --frames must be 0 or more", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"oanquan run: {exc}", file=sys.stderr)
        return 2
    journal_path = (
        Path(args.journal) if args.journal else config.storage.journal_dir / "journal.jsonl"
    )
    notifier = Notifier.from_environ()
    try:
        with ShutdownHandler(notifier=notifier):
            return _serve(args, config, journal_path, notifier)
    except KeyboardInterrupt:
        print("\noanquan run: interrupted", file=sys.stderr)
        return INTERRUPTED


def _serve(args: argparse.Namespace, config: Config, journal_path: Path, notifier: Notifier) -> int:
    try:
        journal = Journal.open(journal_path)
    except JournalError as exc:
        hint = "" if args.journal else " (off the Pi, name one: --journal ~/oanquan.jsonl)"
        print(f"oanquan run: {exc}{hint}", file=sys.stderr)
        return 1
    try:
        try:
            settings = laptop_settings(
                config.hardware,
                camera=args.camera,
                display=args.display,
                keys=args.keys,
                backend=args.hardware,
            )
            hardware = make_hardware(settings, args.hardware)
        except (DeviceError, ValueError) as exc:
            print(f"oanquan run: {exc}", file=sys.stderr)
            return 1
        try:
            return _loop(args, config, journal, hardware, notifier)
        finally:
            hardware.close()
    finally:
        journal.close()


def _loop(
    args: argparse.Namespace,
    config: Config,
    journal: Journal,
    hardware: Hardware,
    notifier: Notifier,
) -> int:
    from companion.commands.tally import read_frame_spread
    from companion.referee.advice import advise, opponent_advice
    from companion.referee.records import Mode

    observer = None
    if not args.manual:
        from companion.appliance.observe import make_observer
        from vision import warm_up

        observer = make_observer(config.vision)
        # the first frame's one-time costs paid now, before the players' first move
        warm_up(observer.config, (config.camera.width, config.camera.height))
    try:
        app = App(
            config,
            hardware,
            journal,
            clock=time.monotonic,
            observer=observer,
            notifier=notifier,
            manual=args.manual,
            kiosk=args.kiosk or config.kiosk.enabled,
            advisor=advise,
            opponent=opponent_advice,
            spread_reader=read_frame_spread,
            # (beside the journal: the folder the service is sure to write, kept on a
            # read-only Pi's data partition)
            corners_path=journal.path.parent / CORNERS_NAME,
        )
    except JournalError as exc:  # the new game could not be recorded (a full disk at boot)
        print(f"oanquan run: {exc}", file=sys.stderr)
        return 1
    camera_ok = app.mode != Mode.CAMERA or app.start_camera()
    notifier.ready("refereeing" if camera_ok else "camera missing: retrying")
    turns = 0
    while app.step():
        turns += 1
        if args.frames and turns >= args.frames:
            break
    return 0
