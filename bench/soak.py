"""Fault-injection soak: the real appliance loop for N frames, faults at random.

The loop is :class:`companion.appliance.app.App` as ``oanquan run`` builds it:
the real referee, controller, screens, input controller, journal on disk and
sd_notify watchdog, on an injected clock (0.1 s a turn). Around it, a
simulated table: players make random legal moves, the camera shows a few
frames of hands and motion and then the settled board (and the refill when
one is owed); a new game starts when one ends. Vision is replaced by an
observer that reads the simulated board exactly: vision has its own
benchmarks, the question here is whether the loop survives, and real vision
costs about a second a frame on a Pi (``oanquan run --hardware fake`` with a
replay folder runs the loop with real vision; tests/reliability does that).

Faults, about one every ``--fault-every`` frames, chosen at random:

camera_error     grab raises a device I/O error
camera_stall     grab waits past the timeout (5 s) and raises CameraStoppedError
bad_frame        an unreadable or odd-sized frame (1x1, grey, 16-bit, 3000x20)
observer_crash   vision raises on the frame (as cv2 did on an 800x1800 image)
i2c_error        the OLED raises Remote I/O error on one frame
display_gone     the OLED disappears for 20-120 s, then comes back
chatter          a button bounces (pulses shorter than the debounce)
disk_full        the journal's writes fail with ENOSPC for 5-60 s
sigterm          SIGTERM in the middle of a journal write; systemd restarts the app

At the end it prints frames processed, faults injected, exits (exceptions
out of the loop; must be 0), confirmed moves lost (accepted moves missing
from journal + archive; must be 0), resident memory at start and end, and
the watchdog pings with the longest gap between two.

    python bench/soak.py --frames 100000 --fault-every 100 --seed 1
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import random
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from companion.appliance.app import App  # noqa: E402
from companion.appliance.config import Config, parse_config  # noqa: E402
from companion.appliance.journal import (  # noqa: E402
    ARCHIVE_NAME,
    FileSystem,
    Journal,
    OsFile,
    read_archive,
)
from companion.appliance.service import Notifier, ShutdownHandler, ShutdownRequested  # noqa: E402
from companion.referee import Observation, RefereeState  # noqa: E402
from companion.referee.reconcile import Evidence, after_sowing  # noqa: E402
from device.buttons import FakeButtons  # noqa: E402
from device.camera import GeneratedCamera  # noqa: E402
from device.display import OledDisplay, open_dummy_luma  # noqa: E402
from device.errors import CameraStoppedError, DeviceIOError  # noqa: E402
from device.factory import Hardware  # noqa: E402
from device.ports import Frame  # noqa: E402
from engine import Game  # noqa: E402

TURN_S = 0.1
FAULTS = (
    "camera_error",
    "camera_stall",
    "bad_frame",
    "observer_crash",
    "i2c_error",
    "display_gone",
    "chatter",
    "disk_full",
    "sigterm",
)
FRAME_SHAPE = (48, 64, 3)


class Clock:
    def __init__(self) -> None:
        self.t = 10_000.0

    def __call__(self) -> float:
        return self.t


def rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# -- the simulated table ------------------------------------------------------------


@dataclass
class Table:
    """The physical game: what the camera would see, and what the players do next."""

    rng: random.Random
    game: Game = field(default_factory=Game)
    board: tuple[tuple[int, ...], tuple[int, int]] = ((), (1, 1))
    #: frames left of hands and motion before the board settles
    moving: int = 0
    #: boards still to show after the current one (the refill after the sowing)
    queue: list[tuple[tuple[int, ...], tuple[int, int]]] = field(default_factory=list)
    scene: int = 0
    shown_scene: int = -1
    waited: int = 0

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.game = Game()
        self.board = (tuple(self.game.position.board), tuple(self.game.position.big))  # type: ignore[assignment]
        self.queue = []
        self.moving = 0
        self.scene += 1
        self.waited = 0

    def play(self) -> str:
        move = self.rng.choice(self.game.legal_moves())
        t = self.game.play(move)
        sown, big = after_sowing(t)
        self.board = (tuple(sown), tuple(big))  # type: ignore[assignment]
        final = (tuple(t.position.board), tuple(t.position.big))
        self.queue = [final] if final != self.board else []  # type: ignore[list-item]
        self.moving = self.rng.randint(2, 8)
        self.scene += 1
        self.waited = 0
        return str(move)

    def tick(self) -> None:
        if self.moving:
            self.moving -= 1
            if not self.moving:
                self.scene += 1
        self.waited += 1


class TableObserver:
    """Reads the table exactly; the first frame of a scene is a new still."""

    calibrated = True

    def __init__(self, table: Table) -> None:
        self.table = table
        self.crash_next = False

    def __call__(self, frame: Frame) -> Observation:
        if self.crash_next:
            self.crash_next = False
            raise RuntimeError("OpenCV: dst.cols < SHRT_MAX in function 'remap' (injected)")
        if frame.image.shape != FRAME_SHAPE:
            raise ValueError(f"frame of shape {frame.image.shape}: not the camera's")
        table = self.table
        if table.moving:
            return Observation(None, fit=False, reason="motion")
        counts, big = table.board
        reading = [
            Evidence.exact(n, big[sq // 6] if sq % 6 == 0 else 0) for sq, n in enumerate(counts)
        ]
        still = table.shown_scene != table.scene
        table.shown_scene = table.scene
        return Observation(reading, fit=True, still=still)

    def confirmed(self) -> None:
        pass

    def hold_earlier(self) -> bool:
        return False

    def confirmed_earlier(self) -> Observation | None:
        return None

    def looks_like_opening(self, observation: Observation) -> bool:
        return False

    def learn_opening(self, frame: Frame) -> None:
        pass


# -- faulty hardware and file system --------------------------------------------------


class Faults:
    """What is broken right now (set by the soak, read by the fakes)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.camera: str | None = None
        self.frame: Any = None
        self.i2c_once = False
        self.display_gone_until = 0.0
        self.disk_full_until = 0.0
        self.sigterm_in_write = False
        self.sigterms = 0


class FlakyLuma:
    """luma's dummy device that raises like a panel on a loose cable."""

    def __init__(self, faults: Faults) -> None:
        self.inner = open_dummy_luma()
        self.faults = faults

    def _check(self) -> None:
        f = self.faults
        if f.i2c_once:
            f.i2c_once = False
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        if f.clock() < f.display_gone_until:
            raise OSError(errno.EIO, "I2C device not found on address: 0x3C")

    def display(self, image: Any) -> None:
        self._check()
        self.inner.display(image)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if callable(attr):

            def call(*args: Any, **kwargs: Any) -> Any:
                self._check()
                return attr(*args, **kwargs)

            return call
        return attr


class FaultyFile(OsFile):
    def __init__(self, fd: int, faults: Faults) -> None:
        super().__init__(fd)
        self.faults = faults

    def write(self, data: bytes) -> int:
        f = self.faults
        if f.clock() < f.disk_full_until:
            raise OSError(errno.ENOSPC, "No space left on device")
        if f.sigterm_in_write and len(data) > 8:
            f.sigterm_in_write = False
            f.sigterms += 1
            os.write(self.fd, data[: len(data) // 2])  # the kill lands mid-line
            signal.raise_signal(signal.SIGTERM)
        return super().write(data)

    def fsync(self) -> None:
        """No fsync: thousands of appends; the soak's power never fails, the process does."""


class FaultyFs(FileSystem):
    def __init__(self, faults: Faults) -> None:
        self.faults = faults

    def open(self, path: Path, mode: str) -> FaultyFile:
        real = super().open(path, mode)
        assert isinstance(real, OsFile)
        return FaultyFile(real.fd, self.faults)

    def fsync_dir(self, path: Path) -> None:
        pass


def make_frames(faults: Faults, clock: Clock) -> Any:
    plain = np.full(FRAME_SHAPE, 120, np.uint8)

    def produce(seq: int) -> Any:
        kind, faults.camera = faults.camera, None
        if kind == "camera_error":
            raise DeviceIOError("camera: VIDIOC_DQBUF: Input/output error (injected)")
        if kind == "camera_stall":
            clock.t += 5.5
            raise CameraStoppedError("camera: no frame within 5.0 s (injected)")
        odd, faults.frame = faults.frame, None
        return plain if odd is None else odd

    return produce


BAD_FRAMES = [
    np.zeros((1, 1, 3), np.uint8),
    np.zeros((48, 64), np.uint8),
    np.zeros((20, 3000, 3), np.uint8),
    np.zeros((48, 64, 3), np.uint16),
    np.zeros((48, 64, 5), np.uint8),
]


# -- the soak -----------------------------------------------------------------------


@dataclass
class Stats:
    frames: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    exits: int = 0
    restarts: int = 0
    confirmed: list[tuple[int, int, str]] = field(default_factory=list)
    answered: int = 0
    resyncs: int = 0
    games: int = 0
    pings: int = 0
    longest_gap: float = 0.0
    rss_start: int = 0
    rss_end: int = 0
    tracebacks: list[str] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    recent_moves: int = 0


def build(
    config: Config, faults: Faults, clock: Clock, folder: Path, table: Table, notify: str
) -> App:
    fs = FaultyFs(faults)
    journal = Journal.open(folder / "journal.jsonl", fs=fs, clock=clock)
    luma = FlakyLuma(faults)
    display = OledDisplay(luma, reopen=lambda: FlakyLuma(faults), clock=clock, retry_s=5.0)
    camera = GeneratedCamera(make_frames(faults, clock), clock=clock)
    buttons = FakeButtons(config.buttons, clock=clock)
    hardware = Hardware("fake", buttons, display, camera)
    notifier = Notifier(notify, watchdog_usec=30_000_000, clock=clock)
    app = App(
        config,
        hardware,
        journal,
        clock=clock,
        observer=TableObserver(table),
        notifier=notifier,
    )
    app.start_camera()
    return app


def game_seq(app: App) -> int:
    return next(r.seq for r in reversed(app.journal.records) if r.kind == "game")


def soak(frames: int, fault_every: int, seed: int, folder: Path, progress: int = 0) -> Stats:
    rng = random.Random(seed)
    clock = Clock()
    faults = Faults(clock)
    stats = Stats()
    config = parse_config('[camera]\nkind = "generated"\n')
    table = Table(rng)
    sock_path = folder / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.setblocking(False)
    last_ping = clock()
    app = build(config, faults, clock, folder, table, str(sock_path))
    table.reset()
    if app.referee.position != table.game.position:  # a resumed journal: start afresh
        app.new_game()
    report_seen = None
    # one handler per process lifetime: a restarted process has a fresh one (the old
    # one ignores a second SIGTERM by design, while its cleanup runs)
    handler = ShutdownHandler().install()
    try:
        for frame in range(frames):
            if frame == 1000:
                stats.rss_start = rss_kib()
            if progress and frame and frame % progress == 0:
                print(
                    f"frame {frame}: {sum(stats.faults.values())} faults, {stats.exits} exits, "
                    f"{len(stats.confirmed)} moves, rss {rss_kib()} KiB",
                    file=sys.stderr,
                    flush=True,
                )
            clock.t += TURN_S
            if fault_every and rng.random() < 1.0 / fault_every:
                inject(rng.choice(FAULTS), faults, app, rng, clock, stats)
            table.tick()
            try:
                app.step()
                stats.frames += 1
                report = app.last_report
                if report is not None and report is not report_seen:
                    report_seen = report
                    for accepted in report.accepted:
                        stats.confirmed.append((game_seq(app), accepted.ply, str(accepted.move)))
                        stats.recent_moves += frame >= frames - 10_000
                # the players act through the same process: SIGTERM may land in their writes
                drive_players(app, table, stats, rng)
            except ShutdownRequested:
                stats.restarts += 1
                app = restart(app, config, faults, clock, folder, table, str(sock_path))
                handler.restore()
                handler = ShutdownHandler().install()
                report_seen = None
                continue
            except Exception as exc:  # an exit: what the soak exists to catch
                stats.exits += 1
                stats.tracebacks.append("".join(traceback.format_exception(exc)))
                app = restart(app, config, faults, clock, folder, table, str(sock_path))
                report_seen = None
                continue
            while True:
                try:
                    data = sock.recv(4096)
                except BlockingIOError:
                    break
                if b"WATCHDOG=1" in data:
                    stats.pings += 1
                    stats.longest_gap = max(stats.longest_gap, clock() - last_ping)
                    last_ping = clock()
    finally:
        handler.restore()
    stats.longest_gap = max(stats.longest_gap, clock() - last_ping)
    stats.final = {
        "referee": str(app.referee.state),
        "referee_ply": app.referee.position.ply,
        "table_ply": table.game.position.ply,
        "table_over": table.game.is_over,
        "table_moving": table.moving,
        "table_queue": len(table.queue),
        "table_waited": table.waited,
        "owed": app.referee.owed is not None,
        "view": str(app.controller.view),
        "message": app.controller.message,
        "journal_broken": app.journal.broken,
        "fault_counts": dict(app.faults.counts),
    }
    stats.rss_end = rss_kib()
    app.hardware.close()
    app.journal.close()
    sock.close()
    return stats


def drive_players(app: App, table: Table, stats: Stats, rng: random.Random) -> None:
    """The players: move when the referee has caught up, answer its questions, start anew."""
    referee = app.referee
    if table.moving:
        return
    behind = len(table.game.moves) - len(referee.game.moves)
    if behind > 0 and list(table.game.moves[: len(referee.game.moves)]) != list(referee.game.moves):
        behind = -1  # another game (a restart began a new one): the players follow the screen
    if referee.position != table.game.position:
        asking = referee.state in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE)
        if behind < 0:
            resync(table, referee, stats)
        elif behind > 0 and ((asking and table.waited > 5) or table.waited > 600):
            # players answer with the buttons (after a minute, even unasked: they correct it)
            truth = str(table.game.moves[len(referee.game.moves)])
            if app._attempt("players answer", lambda: _answer(app, truth, stats)):
                stats.answered += 1
                table.waited = 0
        elif behind <= 0 and table.waited > 600:
            resync(table, referee, stats)  # the referee went its own way: follow it
        return
    if table.queue:
        if table.waited > 3:
            table.board = table.queue.pop(0)  # the players put the refill on the board
            table.scene += 1
            table.waited = 0
        return
    if referee.owed is not None and table.waited < 30:
        return
    if table.game.is_over:
        if table.waited > 10 and app._attempt("new game", app.new_game):
            stats.games += 1
            table.reset()
        return
    if table.waited > 3:
        table.play()


def resync(table: Table, referee: Any, stats: Stats) -> None:
    """The players set the board to the game on the screen."""
    stats.resyncs += 1
    table.game = Game(referee.rules, referee.game.start)
    for move in referee.game.moves:
        table.game.play(move)
    table.board = (tuple(table.game.position.board), tuple(table.game.position.big))  # type: ignore[assignment]
    table.queue, table.waited, table.moving = [], 0, 0
    table.scene += 1


def _answer(app: App, move: str, stats: Stats) -> None:
    report = app.referee.confirm(move)
    for accepted in report.accepted:
        stats.confirmed.append((game_seq(app), accepted.ply, str(accepted.move)))
    app.controller.on_report(report)


def inject(
    kind: str, faults: Faults, app: App, rng: random.Random, clock: Clock, stats: Stats
) -> None:
    stats.faults[kind] += 1
    if kind in ("camera_error", "camera_stall"):
        faults.camera = kind
    elif kind == "bad_frame":
        faults.frame = rng.choice(BAD_FRAMES)
    elif kind == "observer_crash":
        observer = app.observer
        assert isinstance(observer, TableObserver)
        observer.crash_next = True
    elif kind == "i2c_error":
        faults.i2c_once = True
    elif kind == "display_gone":
        faults.display_gone_until = clock() + rng.uniform(20, 120)
    elif kind == "chatter":
        buttons = app.hardware.buttons
        assert isinstance(buttons, FakeButtons)
        name = rng.choice(["left", "right", "ok", "back"])
        for _ in range(rng.randint(2, 6)):
            buttons.press(name)
            clock.t += 0.002
            buttons.release(name)
            clock.t += 0.002
    elif kind == "disk_full":
        faults.disk_full_until = clock() + rng.uniform(5, 60)
    elif kind == "sigterm":
        faults.sigterm_in_write = True


def restart(
    app: App, config: Config, faults: Faults, clock: Clock, folder: Path, table: Table, notify: str
) -> App:
    """What systemd does after an exit: the process starts again on the same journal."""
    app.hardware.close()
    app.journal.close()
    faults.sigterm_in_write = False
    clock.t += 3.0  # RestartSec
    fresh = build(config, faults, clock, folder, table, notify)
    table.shown_scene = -1
    return fresh


def lost_moves(folder: Path, confirmed: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Confirmed moves with no move record in the journal or its archive."""
    records = list(read_archive(folder / ARCHIVE_NAME))
    with Journal.open(folder / "journal.jsonl") as journal:
        records += [r for r in journal.records if not records or r.seq > records[-1].seq]
    present = set()
    game = 0
    for record in records:
        if record.kind == "game":
            game = record.seq
        elif record.kind == "move":
            present.add((game, record.data.get("ply"), record.data.get("move")))
    return [c for c in confirmed if c not in present]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=10_000)
    ap.add_argument("--fault-every", type=int, default=100, help="mean frames between faults")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=None, help="keep the journal here")
    ap.add_argument("--progress", type=int, default=0, metavar="N", help="a line every N frames")
    args = ap.parse_args(argv)
    import logging

    logging.disable(logging.CRITICAL)  # the loop logs every fault by design
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix="oanquan-soak-") as tmp:
        folder = args.dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        stats = soak(args.frames, args.fault_every, args.seed, folder, args.progress)
        lost = lost_moves(folder, stats.confirmed)
    summary = {
        "frames": stats.frames,
        "faults": sum(stats.faults.values()),
        "by_fault": dict(sorted(stats.faults.items())),
        "exits": stats.exits,
        "sigterm_restarts": stats.restarts,
        "games_finished": stats.games,
        "moves_confirmed": len(stats.confirmed),
        "answered_by_players": stats.answered,
        "players_followed_the_screen": stats.resyncs,
        "moves_in_last_10k_frames": stats.recent_moves,
        "confirmed_moves_lost": len(lost),
        "rss_kib_start": stats.rss_start,
        "rss_kib_end": stats.rss_end,
        "rss_growth_kib": stats.rss_end - stats.rss_start,
        "watchdog_pings": stats.pings,
        "longest_watchdog_gap_s": round(stats.longest_gap, 1),
        "cpu_s": round(time.process_time() - started, 1),
    }
    print(json.dumps(summary, indent=1))
    for tb in stats.tracebacks[:3]:
        print(tb, file=sys.stderr)
    if lost:
        print(f"lost: {lost[:5]}", file=sys.stderr)
    ok = stats.exits == 0 and not lost
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
