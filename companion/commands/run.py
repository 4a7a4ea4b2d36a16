"""``oanquan run``: the appliance on the configured hardware, under systemd."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from companion.appliance.app import App
from companion.appliance.config import ConfigError, load_config
from companion.appliance.journal import Journal, JournalError
from companion.appliance.service import Notifier, ShutdownHandler
from device.errors import DeviceError
from device.factory import make_hardware
from engine import EngineError, Rules


def main(argv: list[str]) -> int:
    """The appliance: real hardware, the journal in the state directory, systemd notify.

    A missing camera or board is shown on the screen and retried, never an
    exit: under systemd an exit means a restart, and repeated restarts reboot
    the Pi. Only a bad config (status 2) or an unusable journal (status 1)
    stops the service, with one line saying what to fix.
    """
    parser = argparse.ArgumentParser(prog="oanquan run", description="Run the companion.")
    parser.add_argument("--config", help="config file (default: /etc/oanquan/config.toml)")
    parser.add_argument("--manual", action="store_true", help="no camera: moves from the buttons")
    parser.add_argument(
        "--kiosk", action="store_true", help="museum mode: attract loop, auto reset"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = load_config(args.config)
        Rules.from_json(config.rules)
    except (ConfigError, EngineError, OSError) as exc:
        print(f"oanquan run: {exc}", file=sys.stderr)
        return 2
    from companion.referee.advice import advise, opponent_advice

    notifier = Notifier.from_environ()
    with ShutdownHandler(notifier=notifier):
        try:
            journal = Journal.open(config.storage.journal_dir / "journal.jsonl")
        except JournalError as exc:
            print(f"oanquan run: {exc}", file=sys.stderr)
            return 1
        try:
            hardware = make_hardware(config.hardware, "real")
        except (DeviceError, ValueError) as exc:
            print(f"oanquan run: {exc}", file=sys.stderr)
            return 1
        try:
            observer = None
            if not args.manual:
                from companion.appliance.observe import make_observer

                observer = make_observer(config.vision)
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
            )
            camera_ok = app.mode != "camera" or app.start_camera()
            notifier.ready("refereeing" if camera_ok else "camera missing: retrying")
            while app.step():
                pass
        finally:
            hardware.close()
    return 0
