"""The companion playing one side: its move on the screen, the visitor sowing it."""

from __future__ import annotations

import io
import random

import pytest

from companion.appliance.config import ConfigError, parse_config
from companion.referee import Referee
from companion.referee.advice import opponent_advice
from companion.referee.reconcile import Evidence
from companion.ui.controller import Advice, Controller
from companion.ui.input import LongPress, ShortPress
from companion.ui.screens import BoardScreen, HintScreen, MenuScreen
from engine import Position, Rules, legal_moves, play


def press(c: Controller, *buttons: str) -> None:
    for b in buttons:
        c.on_input(ShortPress(b, 0.0))


class Scripted:
    """An opponent that plays the last legal move and counts how often it was asked."""

    def __init__(self, ref: Referee) -> None:
        self.ref, self.calls, self.levels = ref, 0, []

    def __call__(self, level: str) -> Advice:
        self.calls += 1
        self.levels.append(level)
        return Advice(self.ref.game.legal_moves()[-1], "quiet")


def exact(p: Position) -> list[Evidence]:
    return [Evidence.exact(n, p.big[sq // 6] if sq % 6 == 0 else 0) for sq, n in enumerate(p.board)]


def test_after_the_visitors_move_the_screen_names_the_companions_move() -> None:
    ref = Referee(mode="manual")
    own = Scripted(ref)
    c = Controller(ref, opponent_move=own, opponent="medium", ai_side=1)
    press(c, "right", "ok")  # the visitor plays the first legal move
    assert ref.position.to_move == 1
    screen = c.screen()
    assert isinstance(screen, HintScreen) and screen.own
    expected = ref.game.legal_moves()[-1]
    assert screen.preview.square == expected.square
    press(c, "back", "ok")  # away and back again: the same move, not a second search
    assert c.screen() == screen and own.calls == 1 and own.levels == ["medium"]
    press(c, "ok")  # the visitor sowed it for the companion
    assert ref.game.moves[-1] == expected
    assert isinstance(c.screen(), BoardScreen) and ref.position.to_move == 0


def test_the_camera_checks_the_companions_move_and_names_a_different_one() -> None:
    ref = Referee()
    own = Scripted(ref)
    c = Controller(ref, opponent_move=own, opponent="easy", ai_side=0)
    start = Position.initial()
    c.on_report(ref.observe(exact(start), still=True))
    assert c.view == "ai"
    asked = own(c.opponent)
    other = next(m for m in ref.game.legal_moves() if m != asked.move)
    c.on_report(ref.observe(exact(play(start, other).position), still=True))
    assert ref.game.moves == [other]
    assert f"companion asked for {asked.move}" in c.message
    # the right move is taken without a word
    ref2 = Referee()
    c2 = Controller(ref2, opponent_move=Scripted(ref2), opponent="easy", ai_side=0)
    c2.on_report(ref2.observe(exact(start), still=True))
    right = ref2.game.legal_moves()[-1]
    c2.on_report(ref2.observe(exact(play(start, right).position), still=True))
    assert ref2.game.moves == [right] and "companion asked" not in c2.message


def test_menu_cycles_the_opponent_level_and_off_hides_the_companions_move() -> None:
    ref = Referee(mode="manual")
    c = Controller(ref, opponent_move=Scripted(ref), ai_side=0)
    assert c.view == "board"
    c.on_input(LongPress("ok", 1.0))
    menu = c.screen()
    assert isinstance(menu, MenuScreen)
    index = [item.key for item in menu.items].index("menu.opponent")
    press(c, *["right"] * index)
    seen = []
    for _ in range(4):
        press(c, "ok")
        seen.append(c.opponent)
    assert seen == ["easy", "medium", "hard", "off"]
    press(c, "ok", "back")  # easy, back to the game: P0 is the companion's side
    assert c.view == "ai"


def test_without_an_opponent_the_menu_has_no_opponent_item() -> None:
    c = Controller(Referee(mode="manual"))
    c.on_input(LongPress("ok", 1.0))
    menu = c.screen()
    assert isinstance(menu, MenuScreen)
    assert "menu.opponent" not in [item.key for item in menu.items]


def test_opponent_advice_names_what_its_move_captures() -> None:
    rng = random.Random(5)
    pos, reasons = Position.initial(), set()
    while not pos.over and len(reasons) < 2:
        advice = opponent_advice(pos, Rules(), "easy", rng=random.Random(1))
        taken = play(pos, advice.move).captured.points
        assert (advice.reason, advice.amount) == (("gain", taken) if taken else ("quiet", 0))
        reasons.add(advice.reason)
        pos = play(
            pos, rng.choice(legal_moves(pos)) if rng.random() < 0.5 else advice.move
        ).position
    assert reasons == {"gain", "quiet"}


def test_play_section_is_validated() -> None:
    config = parse_config('[play]\nopponent = "hard"\ncompanion_side = 0\n')
    assert (config.play.opponent, config.play.companion_side, config.play.hints) == (
        "hard",
        0,
        True,
    )
    with pytest.raises(ConfigError, match=r"play\.opponent"):
        parse_config('[play]\nopponent = "grandmaster"\n')
    with pytest.raises(ConfigError, match=r"play\.companion_side"):
        parse_config("[play]\ncompanion_side = 2\n")


def test_versus_demo_plays_a_whole_game_against_the_companion() -> None:
    from companion.commands.demo import run_versus

    out = io.StringIO()
    frames, ref = run_versus(out, level="easy", seed=3)
    position = ref.position
    assert position.over and position.outcome is not None
    # every P1 move was the one the companion's screen named: P0's are greedy picks
    assert len(ref.game.moves) == position.ply
    assert "visitor sows the companion's" in out.getvalue()
    assert len(frames) > 2 * position.ply // 2
