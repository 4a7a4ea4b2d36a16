"""`oanquan play`: the terminal game shows moves, previews and the final score."""

from __future__ import annotations

import io

from companion.commands import play as terminal
from engine import Game


def test_scripted_full_game_reaches_the_final_count() -> None:
    out = io.StringIO()
    status = terminal.run(
        Game(), io.StringIO(), out, ["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"]
    )
    assert status == 0
    assert "final score 52 - 18: P0 wins" in out.getvalue()


def test_interactive_preview_undo_and_illegal_move() -> None:
    out = io.StringIO()
    terminal.run(Game(), io.StringIO("?\n2+\nundo\n8+\nquit\n"), out)
    text = out.getvalue()
    assert "captures 3:6 = 6 points" in text  # preview of 2+
    assert "not P0's" in text  # 8+ refused with the reason
    assert text.count("P0 to move;") == 2 and "P1 to move;" in text  # start, 2+, undo


def test_rule_flags_reach_the_engine(capsys: object) -> None:
    assert terminal.main(["--quan-non-min", "0", "--moves", "1-"]) == 0
    assert terminal.main(["--direction", "sideways"]) == 2


def test_the_computer_answers_every_move_of_its_side() -> None:
    out = io.StringIO()
    played: list[str] = []

    def first_legal(game: Game) -> terminal.Move:
        move = game.legal_moves()[0]
        played.append(str(move))
        return move

    terminal.run(Game(), io.StringIO("2+\nquit\n"), out, computer=first_legal, computer_side=1)
    assert played and f"computer plays {played[0]}" in out.getvalue()


def test_three_seats_show_every_seat_and_its_points() -> None:
    from engine import Rules

    out = io.StringIO()
    terminal.run(Game(Rules(players=3)), io.StringIO("2+\nquit\n"), out)
    text = out.getvalue()
    assert "points now: P0 6  P1 0  P2 0" in text
    assert "P1 to move; legal: 13+" in text


def test_every_rule_flag_says_what_it_accepts(capsys: object) -> None:
    import pytest

    with pytest.raises(SystemExit):
        terminal.main(["--help"])
    help_text = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "one of occupied, always, take_one (default occupied)" in " ".join(help_text.split())
    assert "a whole number 2-4 (default 2)" in " ".join(help_text.split())
