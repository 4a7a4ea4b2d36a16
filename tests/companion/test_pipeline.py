"""The one frame policy: what the pipeline does between the observer and the referee."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.appliance.pipeline import HOLD_SECONDS, FramePipeline, FrameResult
from companion.commands.track import frame_files, track
from companion.referee import Observation, Referee, Report
from companion.referee.reconcile import Evidence
from companion.referee.state import HELD_DOUBT_LIVE
from device.ports import Frame
from engine import Game, Move, Position, play
from tests.companion.test_referee import _two_moves_scene, hide


def reading(board: tuple[int, ...], big: tuple[int, int]) -> list[Evidence]:
    return [Evidence.exact(n, big[sq // 6] if sq % 6 == 0 else 0) for sq, n in enumerate(board)]


class FakeObserver:
    """Reads whatever board it is told to, and records what the pipeline asks of it."""

    def __init__(self) -> None:
        self.board: list[Evidence] = []
        self.calibrated = False
        self.learnt: list[str] = []
        self.references = 0
        self.unseen: set[str] = set()  # frames whose board it does not find
        self.hand: frozenset[int] = frozenset()  # squares a hand hides in the next frames
        self.still = True  # False: frames of a live camera, many to a board
        self.moving: set[str] = set()  # live frames with motion in them (not read)

    def __call__(self, frame: Frame) -> Observation:
        if frame.source in self.unseen:
            return Observation(None, fit=False, reason="board not found", board_found=False)
        if frame.source in self.moving:
            return Observation(None, fit=False, reason="motion since the previous frame")
        if not self.hand:
            return Observation(self.board, still=self.still)
        hidden = tuple(sq in self.hand for sq in range(12))
        return Observation(
            hide(self.board, set(self.hand)), still=self.still, partial=True, hidden=hidden
        )

    def confirmed(self) -> None:
        self.references += 1

    def hold_earlier(self) -> bool:
        return False

    def confirmed_earlier(self) -> Observation | None:
        return None

    def looks_like_opening(self, observation: Observation) -> bool:
        return False  # the counter misreads this scene's opening

    def learn_opening(self, frame: Frame) -> None:
        self.learnt.append(frame.source)
        self.calibrated = True


def frame(name: str, t: float = 0.0) -> Frame:
    return Frame(np.zeros((4, 4, 3), np.uint8), t, 0, name)


def test_an_opening_the_players_confirm_is_learnt_from_and_becomes_the_reference() -> None:
    observer = FakeObserver()
    referee = Referee()
    pipeline = FramePipeline(observer, referee)
    board = list(Position.initial().board)
    board[3], board[8] = 2, 9  # the counter misreads two squares
    observer.board = reading(tuple(board), (1, 1))
    assert pipeline(frame("f0")).report.state == "dispute"
    assert observer.learnt == [] and observer.references == 0
    referee.confirm_setup()  # one button press: the opening is right
    observer.board = reading(Position.initial().board, (1, 1))
    pipeline(frame("f1"))
    assert observer.learnt == ["f0"]  # learnt from the frame the players confirmed
    assert observer.references >= 1


def test_the_start_track_is_given_is_vouched_for_by_the_first_frame() -> None:
    observer = FakeObserver()
    referee = Referee()
    referee.setup_checked = True
    pipeline = FramePipeline(observer, referee, start_shown=True)
    board = list(Position.initial().board)
    board[3] = 1  # misread, but the caller says this is the opening
    observer.board = reading(tuple(board), (1, 1))
    result = pipeline(frame("f0"))
    assert result.report.confirmed and result.report.state == "waiting"
    assert observer.learnt == ["f0"] and observer.references == 1


def test_no_frame_after_one_whose_board_was_not_found_is_vouched_for() -> None:
    """Moves may be made while the board goes unseen: the first board found later is
    judged from the start, never taken for it (nor learnt from as the opening)."""
    observer = FakeObserver()
    observer.unseen = {"f0"}
    referee = Referee()
    referee.setup_checked = True
    pipeline = FramePipeline(observer, referee, start_shown=True)
    assert not pipeline(frame("f0")).report.confirmed
    game = Game()
    game.play(Move.parse("2+"))  # played while the board went unseen
    observer.board = reading(game.position.board, (1, 1))
    result = pipeline(frame("f1"))
    assert observer.learnt == []  # not learnt from as the opening
    assert [str(a.move) for a in result.report.accepted] == ["2+"]  # judged, not vouched


def turned(board: tuple[int, ...], big: tuple[int, int]) -> list[Evidence]:
    """What a camera on P1's side reads: square k of the game where vision says k + 6."""
    seen = reading(board, big)
    return [seen[(k + 6) % 12] for k in range(12)]


def tracked(start: Position | None = None) -> tuple[FakeObserver, Referee, FramePipeline]:
    """A pipeline as ``track`` builds it: the start vouched for by the first frame."""
    observer = FakeObserver()
    referee = Referee(start=start)
    referee.setup_checked = True
    return observer, referee, FramePipeline(observer, referee, start_shown=True)


def test_a_camera_on_p1s_side_is_followed_from_the_first_move() -> None:
    """The board looks the same turned half round: the opening cannot say where P0
    sits, the first moves can (P0 sows from their own row). The first move is judged
    the way its frame favours, as on P0's side (no dispute for a move rightly made);
    the side is taken after two frames."""
    observer, referee, pipeline = tracked()
    game = Game()
    observer.board = turned(game.position.board, game.position.big)
    pipeline(frame("f0"))
    assert pipeline.turned is None  # the opening is the same both ways round
    for n, move in enumerate(("2+", "9-", "4-")):
        game.play(Move.parse(move))
        observer.board = turned(game.position.board, game.position.big)
        report = pipeline(frame(f"f{n + 1}")).report
        assert [str(a.move) for a in report.accepted] == [move], report.detail
        assert pipeline.turned is (None if n == 0 else True)
    assert referee.position == game.position


def test_one_frame_that_looks_turned_does_not_turn_the_board() -> None:
    """A frame the counter misreads can favour the wrong side by far: the side is not
    taken from it, the next frames outvote it, and no move is taken wrongly meanwhile
    (what is not sure is asked)."""
    observer, referee, pipeline = tracked()
    game = Game()
    observer.board = reading(game.position.board, game.position.big)
    pipeline(frame("f0"))
    for n, (move, look) in enumerate((("2+", turned), ("9-", reading), ("4-", reading))):
        game.play(Move.parse(move))
        observer.board = look(game.position.board, game.position.big)
        report = pipeline(frame(f"f{n + 1}")).report
        assert [str(a.move) for a in report.accepted] in ([], [move]), report.detail
        if n == 0:
            assert pipeline.turned is None
        if not report.accepted:
            pipeline.answer(move)
    assert pipeline.turned is False and referee.position == game.position


def test_a_camera_on_p0s_side_stays_as_found() -> None:
    observer, _, pipeline = tracked()
    game = Game()
    observer.board = reading(game.position.board, game.position.big)
    pipeline(frame("f0"))
    for n, move in enumerate(("3-", "8+")):
        game.play(Move.parse(move))
        observer.board = reading(game.position.board, game.position.big)
        assert [str(a.move) for a in pipeline(frame(f"f{n + 1}")).report.accepted] == [move]
        # the first move is taken (the frame is sure of its side), the side after two
        assert pipeline.turned is (None if n == 0 else False)


def test_photos_with_a_hand_in_them_say_where_p0_sits() -> None:
    """A hand hides two squares in each of the first photos: the rest of each board
    still shows which row the moves were sown from, so the side is taken from those
    photos and their moves without asking (none waits for a clear photo)."""
    observer, referee, pipeline = tracked()
    game = Game()
    observer.board = turned(game.position.board, game.position.big)
    pipeline(frame("f0"))
    observer.hand = frozenset({0, 11})
    for n, move in enumerate(("2+", "9-")):
        game.play(Move.parse(move))
        observer.board = turned(game.position.board, game.position.big)
        report = pipeline(frame(f"f{n + 1}")).report
        assert [str(a.move) for a in report.accepted] == [move], report.detail
    assert pipeline.turned is True and referee.position == game.position


def test_a_start_that_is_not_the_opening_shows_the_side_at_once() -> None:
    start = Position.from_text("1B|7,1,1,7,7|2B|0,0,6,6,6 P0 s6/0 q0/0 d0/0 n2")
    observer, _, pipeline = tracked(start)
    observer.board = turned(start.board, start.big)
    assert pipeline(frame("f0")).report.confirmed
    assert pipeline.turned is True
    after = Game(start=start)
    after.play(Move.parse("4+"))
    observer.board = turned(after.position.board, after.position.big)
    assert [str(a.move) for a in pipeline(frame("f1")).report.accepted] == ["4+"]


def test_while_the_side_is_open_a_move_both_ways_show_is_taken() -> None:
    """5+ from the opening leaves a board that looks the same turned half round: the
    side is still open, but either way round the move was 5+."""
    observer, _, pipeline = tracked()
    game = Game()
    observer.board = reading(game.position.board, game.position.big)
    pipeline(frame("f0"))
    game.play(Move.parse("5+"))
    assert game.position.board[:6] == game.position.board[6:]  # symmetric
    observer.board = reading(game.position.board, game.position.big)
    report = pipeline(frame("f1")).report
    assert pipeline.turned is None
    assert [str(a.move) for a in report.accepted] == ["5+"], report.detail


def test_a_move_is_not_taken_by_itself_while_its_side_is_in_doubt() -> None:
    """A photo whose side is in doubt is held for the next one, which may show the
    side; after two such photos (three moves to weigh) the players are asked."""
    start = Position.initial()
    after = Game()
    photos = []
    for move in ("2+", "9-", "4+"):
        after.play(Move.parse(move))
        photos.append(Observation(reading(after.position.board, after.position.big), still=True))
    for doubt, taken in ((0.0, ["2+"]), (0.5, [])):
        referee = Referee()
        referee.vouch(Observation(reading(start.board, start.big), still=True))
        report = referee.see(photos[0], side_doubt=doubt)
        assert [str(a.move) for a in report.accepted] == taken
    assert report.state == "moving"
    assert not referee.see(photos[1], side_doubt=0.5).accepted
    report = referee.see(photos[2], side_doubt=0.5)
    assert report.state == "ambiguous" and report.verdict is not None
    assert "2+" in {str(m) for m in report.verdict.choices}


def test_a_photo_that_cannot_show_the_side_is_judged_with_the_next_one() -> None:
    """5+ leaves a board that looks the same turned half round: the photo is held
    (not asked about), and the next photo, sure of its side, shows 5+ and 8-."""
    start = Position.initial()
    game = Game()
    referee = Referee()
    referee.vouch(Observation(reading(start.board, start.big), still=True))
    shown = []
    for move in ("5+", "8-"):
        game.play(Move.parse(move))
        shown.append(Observation(reading(game.position.board, game.position.big), still=True))
    report = referee.see(shown[0], side_doubt=0.5)
    assert report.state == "moving" and not report.accepted
    report = referee.see(shown[1], side_doubt=0.0)
    assert [str(a.move) for a in report.accepted] == ["5+", "8-"], report.detail
    assert referee.position == game.position


class ScriptedObserver(FakeObserver):
    """Gives the observations it is handed, one per frame, and holds hand frames."""

    def __init__(self, script: list[Observation], again: Observation) -> None:
        super().__init__()
        self.script = script
        self.again = again
        self.held: list[int] = []  # index of each frame it was told to hold
        self.earlier_confirmed = 0
        self.read = -1

    def __call__(self, frame: Frame) -> Observation:
        self.read += 1
        return self.script[self.read]

    def hold_earlier(self) -> bool:
        self.held.append(self.read)
        return True

    def confirmed_earlier(self) -> Observation | None:
        self.earlier_confirmed += 1
        return self.again


def test_a_frame_with_a_hand_between_two_moves_becomes_the_reference_for_the_second() -> None:
    start, _, end, held, shown, again = _two_moves_scene()
    observer = ScriptedObserver(
        [Observation(tuple(reading(start.board, start.big)), still=True), held, shown], again
    )
    referee = Referee()
    pipeline = FramePipeline(observer, referee)
    pipeline.turned = False  # (which side P0 sits on is not what this is about)
    pipeline(frame("f0"))
    assert pipeline(frame("f1")).report.state == "moving" and observer.held == [1]
    references = observer.references
    result = pipeline(frame("f2"))
    assert observer.earlier_confirmed == 1 and result.observation is again
    assert [str(a.move) for a in result.report.accepted] == ["5-", "10-"]
    assert result.report.detail.startswith("5- accepted; ")
    assert referee.position == end
    assert observer.references == references + 1  # then the photo itself, after 10-


def test_a_frame_that_may_show_more_moves_than_are_weighed_is_no_witness_of_the_side() -> None:
    """Three moves after two lost photos: the referee weighs two at most, so neither
    side's explanation need be right, and their comparison says nothing of the side."""
    game = Game()
    for lost in (1, 2):
        referee = Referee()
        referee.vouch(Observation(reading(game.position.board, game.position.big), still=True))
        for _ in range(lost):
            referee.observe(None, fit=False, reason="unreadable image", still=True)
        later = Game()
        for move in ("2+", "9-", "4-")[: lost + 1]:
            later.play(Move.parse(move))
        seen = Observation(reading(later.position.board, later.position.big), still=True)
        weighed = referee.weigh(seen)
        assert weighed is not None and weighed.complete is (lost < 2)


def test_a_photo_of_moves_the_players_named_shows_the_side() -> None:
    """Photos lost after the start (hands, say), then one of three moves: it is no witness
    of the side by itself (the referee weighs two moves at most), but once the players
    have named the three, it is a photo of a board they vouch for, as the start is."""
    game = Game()
    lost = Observation(None, fit=False, reason="hand or arm over the board", still=True)
    opening = Observation(turned(game.position.board, game.position.big), still=True)
    script = [opening, opening, lost, lost]  # (the opening is read again once learnt)
    moves = ("2+", "9-", "4-")
    for move in moves:
        game.play(Move.parse(move))
    shown = Observation(turned(game.position.board, game.position.big), still=True)
    observer = ScriptedObserver([*script, shown], shown)
    referee = Referee()
    referee.setup_checked = True
    pipeline = FramePipeline(observer, referee, start_shown=True)
    for name in ("f0", "f1", "f2"):
        pipeline(frame(name))
    assert pipeline(frame("f3")).report.state == "ambiguous"
    assert pipeline.turned is None
    for move in moves:
        pipeline.answer(move)
    assert referee.position == game.position
    assert pipeline.turned is True


def test_the_last_photo_of_a_folder_is_asked_about_rather_than_held(tmp_path: Path) -> None:
    """A photo in doubt waits for the next one, but after the last none comes."""
    start = Position.initial()
    a, b = play(start, "2+").position.board, play(start, "4-").position.board
    doubtful = [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]
    states = []
    for last in (False, True):
        observer = FakeObserver()
        pipeline = FramePipeline(observer, Referee())
        pipeline.turned = False  # (which side P0 sits on is not what this is about)
        observer.board = reading(start.board, start.big)
        pipeline(frame("f0"))
        observer.board = doubtful
        states.append(pipeline(frame("f1"), last=last).report.state)
    assert states == ["moving", "ambiguous"]
    # and ``track`` says which photo is the last
    told: list[bool] = []

    class Recording(FramePipeline):
        def __call__(self, frame: Frame, *, last: bool = False) -> FrameResult:
            told.append(last)
            return super().__call__(frame, last=last)

    for name in ("f1.png", "f2.png", "f10.png"):
        cv2.imwrite(str(tmp_path / name), np.zeros((8, 8, 3), np.uint8))
    observer = FakeObserver()
    observer.board = reading(start.board, start.big)
    track(frame_files(tmp_path), Recording(observer, Referee()), io.StringIO())
    assert told == [False, False, True]


class LiveCamera:
    """A live camera's frames through a pipeline: each move is a few frames with motion
    in them, then the board at rest for as many as the players take (one a second)."""

    def __init__(self, start: Position | None = None, look: Any = reading) -> None:
        self.observer, self.referee, self.pipeline = tracked(start)
        self.observer.still = False
        self.look = look
        self.t = 0.0
        self.reports: list[Report] = []

    def rest(self, board: list[Evidence], frames: int) -> Report:
        """The board at rest for ``frames`` frames; the last frame's report."""
        self.observer.board = board
        for _ in range(frames):
            self.reports.append(self.shoot(f"rest{self.t}"))
        return self.reports[-1]

    def move(self, board: list[Evidence], frames: int = 4, motion: int = 3) -> Report:
        """A move made (``motion`` frames of it), then its board at rest."""
        for _ in range(motion):
            self.observer.moving.add(f"move{self.t}")
            self.shoot(f"move{self.t}")
        return self.rest(board, frames)

    def shoot(self, name: str) -> Report:
        self.t += 1.0
        return self.pipeline(frame(name, self.t)).report


def test_a_live_camera_on_p1s_side_is_followed_from_the_first_move() -> None:
    """A live camera sees each board in many frames: they are one witness of the side
    (summed, the same reading would take it on little), and the side is taken from the
    moves' boards as from photos; each move is then taken by the camera."""
    game = Game()
    live = LiveCamera()
    live.rest(turned(game.position.board, game.position.big), 3)
    for n, move in enumerate(("2+", "9-", "4-", "7+")):
        game.play(Move.parse(move))
        live.move(turned(game.position.board, game.position.big))
        assert live.pipeline.turned is (None if n == 0 else True), n
    assert live.referee.position == game.position
    taken = [(str(a.move), a.how) for r in live.reports for a in r.accepted]
    assert taken == [(m, "camera") for m in ("2+", "9-", "4-", "7+")]


def test_a_live_hand_at_rest_says_where_p0_sits() -> None:
    """Each move ends with the player's hand resting over the board, and the camera
    sees no board clear: the frame that shows the hand at rest is judged as a photo with
    a hand in it is, so it also witnesses the side (else, the opening being the same
    both ways round, no move was taken till a clear frame came)."""
    game = Game()
    live = LiveCamera()
    live.rest(turned(game.position.board, game.position.big), 3)
    live.observer.hand = frozenset({0, 11})
    for move in ("2+", "9-", "4-"):
        game.play(Move.parse(move))
        live.move(turned(game.position.board, game.position.big), frames=5)
    assert live.pipeline.turned is True and live.referee.position == game.position
    taken = [(str(a.move), a.how) for r in live.reports for a in r.accepted]
    assert taken == [(m, "camera") for m in ("2+", "9-", "4-")]
    assert not {"ambiguous", "dispute"} & {r.state for r in live.reports}


def test_a_live_board_in_doubt_waits_for_the_next_move_to_decide_it() -> None:
    """A board that fits two moves alike is held while the camera keeps showing it (no
    question while the next player thinks); the next move's board decides both."""
    start = Position.initial()
    live = LiveCamera()
    live.rest(reading(start.board, start.big), 3)
    a, b = play(start, "2+").position.board, play(start, "4-").position.board
    doubtful = [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]
    live.pipeline.turned = False  # (which side P0 sits on is not what this is about)
    report = live.move(doubtful, frames=10)
    assert report.state == "moving" and report.detail == HELD_DOUBT_LIVE
    assert live.referee.position == start and live.referee.partials_held == 1
    after = play(play(start, "4-").position, "7+").position
    live.move(reading(after.board, after.big))
    taken = [str(a.move) for r in live.reports for a in r.accepted]
    assert taken == ["4-", "7+"]
    assert live.referee.position == after
    assert not {"ambiguous", "dispute"} & {r.state for r in live.reports}


def test_a_live_board_in_doubt_is_asked_about_when_no_move_comes_to_decide_it() -> None:
    start = Position.initial()
    live = LiveCamera()
    live.pipeline.turned = False
    live.rest(reading(start.board, start.big), 3)
    a, b = play(start, "2+").position.board, play(start, "4-").position.board
    doubtful = [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]
    live.move(doubtful, frames=3)
    held = live.t  # (the frame that was held)
    waited = live.rest(doubtful, int(HOLD_SECONDS) - 1)
    assert live.t - held < HOLD_SECONDS and waited.detail == HELD_DOUBT_LIVE
    asked = live.rest(doubtful, 1)
    assert asked.state == "ambiguous" and asked.verdict is not None
    assert {"2+", "4-"} <= {str(m) for m in asked.verdict.choices}
    live.pipeline.answer("4-")
    assert live.referee.position == play(start, "4-").position
