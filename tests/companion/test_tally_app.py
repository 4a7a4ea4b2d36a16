"""Tally mode through the whole app loop, as ``oanquan run`` wires it: the menu, the
camera's frames through ``read_frame_spread`` (or the buttons without a camera), the
final count on the screen and its record in the journal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from companion.appliance.app import App
from companion.appliance.config import parse_config
from companion.appliance.journal import Journal
from companion.appliance.observe import VisionObserver
from companion.commands.tally import bundled_empty, bundled_frames, read_frame_spread
from companion.ui.controller import View
from companion.ui.screens import MenuScreen
from device.factory import make_hardware

FRAMES = bundled_frames()


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def tap(app: App, hardware: Any, clock: Clock, button: str, hold: float = 0.1) -> None:
    """A press and release on the buttons, turns of the loop without taking a frame."""
    hardware.buttons.press(button)
    clock.t += hold
    app.step(camera=False)
    hardware.buttons.release(button)
    clock.t += 0.1
    app.step(camera=False)
    clock.t += 0.1
    app.step(camera=False)


def open_tally(app: App, hardware: Any, clock: Clock) -> None:
    tap(app, hardware, clock, "ok", hold=2.0)  # a long OK opens the menu
    screen = app.controller.screen()
    assert isinstance(screen, MenuScreen)
    keys = [item.key for item in screen.items]
    for _ in range(keys.index("menu.tally")):
        tap(app, hardware, clock, "right")
    tap(app, hardware, clock, "ok")


def truth(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.with_suffix(".json").read_text())
    return data


def counted_within(app: App, photo: Path) -> Any:
    """The tally's last count, once checked to hold ``photo``'s true total in its interval."""
    tally = app.controller.tally
    assert tally is not None and tally.last is not None
    assert tally.last.low <= sum(truth(photo)["board"]) <= tally.last.high
    return tally.last


def tally_records(path: Path) -> list[dict[str, Any]]:
    return [dict(r.data) for r in Journal.open(path).records if r.kind == "tally"]


def _camera_app(
    tmp_path: Path, frames: list[Path], reader: Any, hold: int = 2
) -> tuple[App, Any, Clock]:
    folder = tmp_path / "camera"
    folder.mkdir()
    for i, frame in enumerate(frames):  # replayed in file-name order
        shutil.copy(frame, folder / f"{i:02d}_{frame.name}")
    # each still stands for two frames: a tally reads a scene from two or more
    text = f'[camera]\nkind = "replay"\nreplay_dir = "{folder}"\nhold = {hold}\n'
    return _tally_app(tmp_path, text, "replay", reader)


def _tally_app(
    tmp_path: Path,
    config_text: str,
    backend: Any,
    reader: Any,
    frames: Any = None,
    observer: VisionObserver | None = None,
    **wiring: Any,
) -> tuple[App, Any, Clock]:
    """The app as ``oanquan run`` wires a tally: the camera ``config_text`` names on
    ``backend`` (``frames``: a generated camera's), started; ``wiring``: more of
    ``App``'s keywords (``corners_path``)."""
    clock = Clock()
    config = parse_config(config_text)
    hardware = make_hardware(config.hardware, backend, clock=clock, frames=frames)
    journal = Journal.open(tmp_path / "journal.jsonl", clock=clock)
    app = App(
        config,
        hardware,
        journal,
        clock=clock,
        observer=observer or VisionObserver(stills=True),
        spread_reader=reader,
        **wiring,
    )
    hardware.camera.start()
    return app, hardware, clock


def see(app: App) -> bool:
    """Two turns of the loop, each taking a frame: one still, as the camera sees it."""
    return app.step() and app.step()


class Recording:
    """``read_frame_spread`` that notes, per call, the empty board it was given and
    whether the frame showed an arm."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, bool]] = []
        #: per call, the single frames given for the big stones (None: the image is one)
        self.singles: list[Any] = []

    def __call__(self, observer: Any, image: Any, empty: Any = None, single: Any = None) -> Any:
        reading = read_frame_spread(observer, image, empty, single)
        self.calls.append((empty, reading.hand))
        self.singles.append(single)
        return reading


def test_the_camera_counts_both_spreads_through_the_app_loop(tmp_path: Path) -> None:
    # what the fixed camera sees: A's spread, then B's
    app, hardware, clock = _camera_app(tmp_path, FRAMES, read_frame_spread)
    open_tally(app, hardware, clock)
    assert app.controller.view == View.TALLY_GUIDE and app.controller.tally_active
    totals = []
    for frame in FRAMES:
        tap(app, hardware, clock, "ok")  # count
        assert app.controller.tally_wants_frame
        assert see(app)  # the camera's next frame is the spread
        assert app.controller.view == View.TALLY_COUNT
        last = counted_within(app, frame)
        assert last.big == sum(truth(frame)["big"])
        totals.append(last.total)
        tap(app, hardware, clock, "ok")  # accept
    assert app.controller.view == View.TALLY_FINAL
    final = app.controller.tally.final if app.controller.tally else None
    assert final is not None and final.pieces == tuple(totals)
    assert final.scores == (totals[0] + 10, totals[1] + 10)  # a quan each, no game played
    tap(app, hardware, clock, "ok")
    assert not app.controller.tally_active
    hardware.close()
    records = tally_records(tmp_path / "journal.jsonl")
    assert len(records) == 1 and records[0]["how"] == ["camera", "camera"]
    assert records[0]["pieces"] == totals


def test_without_a_camera_the_players_enter_both_counts_with_the_buttons(
    tmp_path: Path,
) -> None:
    clock = Clock()
    config = parse_config('[camera]\nkind = "generated"\n')
    hardware = make_hardware(config.hardware, "fake", clock=clock)
    journal = Journal.open(tmp_path / "journal.jsonl", clock=clock)
    app = App(config, hardware, journal, clock=clock, manual=True)
    open_tally(app, hardware, clock)
    for pieces, bigs in ((37, 1), (13, 1)):
        assert app.controller.view == View.TALLY_ENTRY
        for digit in divmod(pieces, 10):  # tens, then units
            for _ in range(digit):
                tap(app, hardware, clock, "right")
            tap(app, hardware, clock, "ok")
        for _ in range(bigs):
            tap(app, hardware, clock, "right")
        tap(app, hardware, clock, "ok")
    assert app.controller.view == View.TALLY_FINAL
    final = app.controller.tally.final if app.controller.tally else None
    assert final is not None and final.scores == (47, 23) and final.winner == 0
    hardware.close()
    records = tally_records(tmp_path / "journal.jsonl")
    assert len(records) == 1 and records[0]["how"] == ["buttons", "buttons"]
    assert records[0]["scores"] == [47, 23]


def test_a_tally_opened_over_the_empty_board_counts_the_spreads_against_it(
    tmp_path: Path,
) -> None:
    reader = Recording()
    app, hardware, clock = _camera_app(tmp_path, [bundled_empty(), *FRAMES], reader)
    open_tally(app, hardware, clock)
    assert see(app)  # the first frame: the board the players cleared
    assert app.controller.view == View.TALLY_GUIDE  # looked at, not counted
    for frame in FRAMES:
        tap(app, hardware, clock, "ok")
        assert see(app)
        counted_within(app, frame)
        tap(app, hardware, clock, "ok")
    assert app.controller.view == View.TALLY_FINAL
    # the spreads were read beside that first frame, the very image
    seen = [empty for empty, _ in reader.calls]
    assert seen[0] is None and seen[1] is not None and seen[2] is seen[1]
    hardware.close()


def test_a_tally_opened_over_pieces_counts_without_an_empty_board(tmp_path: Path) -> None:
    reader = Recording()
    # the first frame already shows A's spread: no empty board to compare with
    app, hardware, clock = _camera_app(tmp_path, [FRAMES[0], *FRAMES], reader)
    open_tally(app, hardware, clock)
    assert see(app)
    tap(app, hardware, clock, "ok")
    assert see(app)
    assert app.controller.view == View.TALLY_COUNT
    assert [empty for empty, _ in reader.calls] == [None, None]
    hardware.close()


def arm_photo(tmp_path: Path, name: str = "arm.png") -> Path:
    """The demo's cleared board with an arm reaching over it."""
    import cv2

    from vision.synth import render_scene

    arm, _ = render_scene(
        [0] * 12, (0, 0), 3, size=(960, 720), ground="concrete", tilt_deg=12.0, hand=True
    )
    path = tmp_path / name
    cv2.imwrite(str(path), arm)
    return path


def test_a_first_frame_with_an_arm_over_the_board_is_no_empty_board(tmp_path: Path) -> None:
    # where the arm lay, bare ground would read as changed in every spread
    first = arm_photo(tmp_path)
    reader = Recording()
    app, hardware, clock = _camera_app(tmp_path, [first, FRAMES[0]], reader)
    open_tally(app, hardware, clock)
    assert see(app)
    assert reader.calls[0][1]  # the arm is seen ...
    tap(app, hardware, clock, "ok")
    assert see(app)
    assert reader.calls[1] == (None, False)  # ... so the spread is counted without that frame
    hardware.close()


def test_a_noisy_camera_s_tally_reads_the_mean_of_its_frames(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    from vision.frames import FRAMES as MEAN_OF

    # a dim scene: the sensor's noise is a fresh draw in every frame of the still board
    shown = {"scene": cv2.imread(str(bundled_empty()))}

    def produce(seq: int) -> Any:
        rng = np.random.default_rng(seq)
        base = shown["scene"].astype(np.float32)
        return np.clip(base + rng.normal(0, 10, base.shape[:2])[..., None], 0, 255).astype(np.uint8)

    reader = Recording()
    config = '[camera]\nkind = "generated"\n'
    app, hardware, clock = _tally_app(tmp_path, config, "fake", reader, frames=produce)
    open_tally(app, hardware, clock)
    for _ in range(MEAN_OF):
        assert app.step()
    assert len(reader.calls) == 1  # the empty board, looked at once from all its frames
    shown["scene"] = cv2.imread(str(FRAMES[0]))
    tap(app, hardware, clock, "ok")
    for _ in range(MEAN_OF - 1):
        assert app.step()
        assert app.controller.view == View.TALLY_GUIDE  # still gathering
    assert app.step()
    assert app.controller.view == View.TALLY_COUNT
    empty, _ = reader.calls[1]
    single = reader.singles[1]
    assert empty is not None and single is not None  # a mean, with one frame for the stones
    assert single[1] is not None and single[0].shape == empty.shape
    assert counted_within(app, FRAMES[0]).big == sum(truth(FRAMES[0])["big"])
    hardware.close()


def test_a_replay_s_last_still_is_counted_when_its_frames_end(tmp_path: Path) -> None:
    app, hardware, clock = _camera_app(tmp_path, [FRAMES[0]], read_frame_spread, hold=1)
    open_tally(app, hardware, clock)
    tap(app, hardware, clock, "ok")
    assert app.step()  # the spread's one frame: a second would tell its noise
    assert app.controller.view == View.TALLY_GUIDE
    assert not app.step()  # no more frames: what was gathered is counted
    assert app.controller.view == View.TALLY_COUNT
    counted_within(app, FRAMES[0])
    hardware.close()


def test_a_second_tally_looks_for_its_own_empty_board(tmp_path: Path) -> None:
    reader = Recording()
    app, hardware, clock = _camera_app(
        tmp_path, [bundled_empty(), bundled_empty(), FRAMES[0]], reader
    )
    open_tally(app, hardware, clock)
    assert see(app)  # the first tally's look at the cleared board ...
    tap(app, hardware, clock, "back")  # ... then the players leave it
    assert not app.controller.tally_active
    open_tally(app, hardware, clock)  # no frame in between: the camera saw only tallies
    assert see(app)  # the second tally's own look
    tap(app, hardware, clock, "ok")
    assert see(app)
    assert app.controller.view == View.TALLY_COUNT
    assert [empty is None for empty, _ in reader.calls] == [True, True, False]
    hardware.close()


def test_a_count_waits_out_an_arm_over_the_board(tmp_path: Path) -> None:
    from companion.appliance.app import HAND_WAITS

    arm = arm_photo(tmp_path)
    reader = Recording()
    app, hardware, clock = _camera_app(tmp_path, [FRAMES[0], arm, FRAMES[0]], reader)
    open_tally(app, hardware, clock)
    tap(app, hardware, clock, "ok")
    assert see(app) and app.controller.view == View.TALLY_COUNT  # the spread, counted
    tap(app, hardware, clock, "left")  # count again ...
    assert see(app)  # ... but an arm is over the board: not counted, still counting
    assert reader.calls[-1][1] and app.controller.view == View.TALLY_GUIDE
    assert app.controller.tally_wants_frame
    assert see(app)  # the arm gone: counted
    assert app.controller.view == View.TALLY_COUNT
    assert len(reader.calls) == 3 and not reader.calls[-1][1]
    hardware.close()
    # an arm that never goes (or a ground the hand check takes for skin) is counted after
    # HAND_WAITS scenes
    again = tmp_path / "again"
    again.mkdir()
    many = [arm_photo(again, f"arm{k}.png") for k in range(HAND_WAITS + 1)]
    app, hardware, clock = _camera_app(again, many, Recording())
    open_tally(app, hardware, clock)
    tap(app, hardware, clock, "ok")
    for _ in range(HAND_WAITS):
        assert see(app) and app.controller.view == View.TALLY_GUIDE
    assert see(app) and app.controller.view == View.TALLY_COUNT
    hardware.close()


def test_a_board_cleared_after_the_tally_opened_is_still_the_one_compared_with(
    tmp_path: Path,
) -> None:
    from companion.appliance.app import LOOK_EVERY_S

    reader = Recording()
    # the tally opened over the game's last pieces; the players clear them, then spread
    app, hardware, clock = _camera_app(tmp_path, [FRAMES[1], bundled_empty(), FRAMES[0]], reader)
    open_tally(app, hardware, clock)
    assert see(app)  # a look: pieces on the board, no empty board yet
    assert len(reader.calls) == 1 and app.controller.view == View.TALLY_GUIDE
    clock.t += LOOK_EVERY_S
    assert see(app)  # the next look: cleared
    assert len(reader.calls) == 2
    tap(app, hardware, clock, "ok")
    assert see(app)
    assert app.controller.view == View.TALLY_COUNT
    empties = [empty for empty, _ in reader.calls]
    assert empties[0] is None and empties[1] is None and empties[2] is not None
    counted_within(app, FRAMES[0])
    hardware.close()


def test_a_board_first_seen_empty_between_the_sides_serves_the_second(tmp_path: Path) -> None:
    from companion.appliance.app import LOOK_EVERY_S

    reader = Recording()
    frames = [FRAMES[1], FRAMES[0], bundled_empty(), FRAMES[1]]
    app, hardware, clock = _camera_app(tmp_path, frames, reader)
    open_tally(app, hardware, clock)
    assert see(app)  # a look: the game's last pieces
    tap(app, hardware, clock, "ok")
    assert see(app)  # A counted with no empty board to compare with
    tap(app, hardware, clock, "ok")  # accepted: B's turn, the players clear the board
    clock.t += LOOK_EVERY_S
    assert see(app)  # a look: empty at last
    tap(app, hardware, clock, "ok")
    assert see(app)  # B counted against it
    assert [empty is None for empty, _ in reader.calls] == [True, True, True, False]
    counted_within(app, FRAMES[1])
    assert app.controller.tally is not None and app.controller.tally.player == 1
    hardware.close()


def test_the_players_count_the_lit_squares_by_hand_and_the_journal_says_so(
    tmp_path: Path,
) -> None:
    app, hardware, clock = _camera_app(tmp_path, FRAMES, read_frame_spread)
    open_tally(app, hardware, clock)
    tap(app, hardware, clock, "ok")
    assert see(app)
    camera = counted_within(app, FRAMES[0])
    board = truth(FRAMES[0])["board"]
    assert camera.unsure  # this still leaves the camera unsure of some squares
    tap(app, hardware, clock, "right")  # count them by hand: each starts at the camera's
    for _ in camera.unsure:
        assert app.controller.view == View.TALLY_HAND
        t = app.controller.tally
        assert t is not None
        sq = t.hand[t.hand_index]
        step = "right" if board[sq] > camera.counts[sq] else "left"
        for _ in range(abs(board[sq] - camera.counts[sq])):
            tap(app, hardware, clock, step)
        tap(app, hardware, clock, "ok")
    assert app.controller.view == View.TALLY_COUNT
    hand = counted_within(app, FRAMES[0])
    assert set(hand.hand) == set(camera.unsure) and not set(hand.unsure) & set(camera.unsure)
    assert all(hand.counts[sq] == board[sq] for sq in camera.unsure)
    tap(app, hardware, clock, "ok")  # accept A's; B's by the camera alone
    tap(app, hardware, clock, "ok")
    assert see(app)
    tap(app, hardware, clock, "ok")
    assert app.controller.view == View.TALLY_FINAL
    tap(app, hardware, clock, "ok")
    hardware.close()
    records = tally_records(tmp_path / "journal.jsonl")
    assert records[0]["how"] == ["camera+hand", "camera"]
    assert records[0]["pieces"][0] == hand.total
