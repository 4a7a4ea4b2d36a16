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


def run_main(
    argv: list[str], stdin: str, monkeypatch: object, capsys: object
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))  # type: ignore[attr-defined]
    status = terminal.main(argv)
    captured = capsys.readouterr()  # type: ignore[attr-defined]
    return status, captured.out, captured.err


def test_a_saved_game_loads_with_its_position_history_and_rules(
    tmp_path: object, monkeypatch: object, capsys: object
) -> None:
    from pathlib import Path

    from companion.commands.replay import replay_line
    from engine import Rules

    saved = Path(str(tmp_path)) / "game.json"
    rules = ["--quan-non-min", "0", "--mandarin-value", "5"]
    status, out, _ = run_main(rules, f"1-\n9-\nsave {saved}\nquit\n", monkeypatch, capsys)
    assert status == 0 and f"saved {saved}" in out
    expected = Game(Rules(quan_non_min=0, mandarin_value=5))
    expected.play_all(["1-", "9-"])

    # the file is a `rules replay` line: any checker replays it to the same position
    answer = replay_line(saved.read_text())
    assert answer["error"] is None
    assert answer["positions"][-1] == expected.position.to_json()

    loaded: list[Game] = []
    real_run = terminal.run
    monkeypatch.setattr(  # type: ignore[attr-defined]
        terminal, "run", lambda game, *a: (loaded.append(game), real_run(game, *a))[1]
    )
    status, out, err = run_main(
        ["--load", str(saved)], "undo\nundo\n1-\nquit\n", monkeypatch, capsys
    )
    assert status == 0 and err == ""
    game = loaded[0]
    assert game.rules == expected.rules and game.start == expected.start
    # the history came too: both moves could be taken back, then 1- played again
    assert "took back P1 9-" in out and "took back P0 1-" in out
    assert game.moves == [terminal.Move.parse("1-")]
    # ... under the saved rules: without quan non, 1- takes the mandarin square
    under_saved = terminal.describe(Game(expected.rules).preview("1-"), expected.rules)
    assert under_saved != terminal.describe(Game().preview("1-"), Rules())
    assert f"P0 1-: {under_saved}" in out


def test_the_older_record_format_loads_too(
    tmp_path: object, monkeypatch: object, capsys: object
) -> None:
    from pathlib import Path

    from engine.record import write_record

    old = Path(str(tmp_path)) / "old.jsonl"
    game = Game()
    game.play_all(["2+", "9-"])
    write_record(old, game)
    status, out, _ = run_main(["--load", str(old)], "quit\n", monkeypatch, capsys)
    assert status == 0
    assert str(game.position) in out


def _illegal_line(path: object) -> None:
    from pathlib import Path

    Path(str(path)).write_text('{"moves": ["2+", "2+"]}\n')


def _two_games(path: object) -> None:
    from pathlib import Path

    Path(str(path)).write_text('{"moves": ["2+"]}\n{"moves": []}\n')


def _torn_record(path: object) -> None:
    from pathlib import Path

    from engine.record import write_record

    game = Game()
    game.play_all(["2+", "9-"])
    write_record(str(path), game)
    Path(str(path)).write_text(Path(str(path)).read_text()[:-5])


def test_a_bad_saved_game_is_one_line_and_status_2(
    tmp_path: object, monkeypatch: object, capsys: object
) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    cases = {
        "missing.json": (None, "cannot read the file"),
        "garbage.json": ("not a game\n", "not valid JSON"),
        "empty.json": ("", "empty"),
        "list.json": ("[1, 2]\n", "JSON object"),
        "colour.json": ('{"colour": 1}\n', "unknown key 'colour'"),
        "rules.json": ('{"rules": {"quan_non": 0}}\n', "unknown switch"),
        "board.json": ('{"position": {"board": [0,5,5]}}\n', "12 integers"),
        "illegal.json": (_illegal_line, "square 2"),
        "two.json": (_two_games, "holds 2 lines"),
        "torn.json": (_torn_record, "incomplete"),
    }
    for name, (content, fragment) in cases.items():
        path = folder / name
        if isinstance(content, str):
            path.write_text(content)
        elif content is not None:
            content(path)
        status, out, err = run_main(["--load", str(path)], "quit\n", monkeypatch, capsys)
        assert status == 2, name
        assert out == "", name
        assert err.count("\n") == 1 and err.startswith(f"oanquan play: --load {path}: "), name
        assert fragment in err, (name, err)


def test_load_refuses_rule_flags_it_would_ignore(
    tmp_path: object, monkeypatch: object, capsys: object
) -> None:
    from pathlib import Path

    saved = Path(str(tmp_path)) / "game.json"
    saved.write_text('{"moves": ["2+"]}\n')
    for flags in (["--chain", "false"], ["--rules", "{}"], ["--first", "0"]):
        status, _, err = run_main(["--load", str(saved), *flags], "", monkeypatch, capsys)
        assert status == 2 and f"leave out {flags[0]}" in err


def test_save_without_a_file_name_says_so() -> None:
    out = io.StringIO()
    terminal.run(Game(), io.StringIO("save\nquit\n"), out)
    assert "save needs a file name" in out.getvalue()


def _first_legal(played: list[str]) -> object:
    def choose(game: Game) -> terminal.Move:
        move = game.legal_moves()[0]
        played.append(str(move))
        return move

    return choose


def test_undo_against_the_computer_takes_back_the_players_move_and_the_reply() -> None:
    played: list[str] = []
    game = Game()
    out = io.StringIO()
    terminal.run(
        game, io.StringIO("2+\nundo\nquit\n"), out, computer=_first_legal(played), computer_side=1
    )  # type: ignore[arg-type]
    # Taking back only the reply would let the computer play it again at once.
    assert len(played) == 1
    assert game.position == Game().position and not game.transitions
    assert f"took back P1 {played[0]}, P0 2+" in out.getvalue()


def test_undo_when_only_the_computer_has_moved_takes_nothing_back() -> None:
    played: list[str] = []
    game = Game()
    out = io.StringIO()
    terminal.run(
        game, io.StringIO("undo\nquit\n"), out, computer=_first_legal(played), computer_side=0
    )  # type: ignore[arg-type]
    assert len(played) == 1 and len(game.transitions) == 1
    assert "nothing to undo" in out.getvalue()


def test_ai_side_without_ai_is_refused(monkeypatch: object, capsys: object) -> None:
    status, out, err = run_main(["--ai-side", "0"], "quit\n", monkeypatch, capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "--ai-side needs --ai" in err


def test_seats_beyond_the_game_are_refused(monkeypatch: object, capsys: object) -> None:
    status, _, err = run_main(["--ai", "easy", "--ai-side", "2"], "", monkeypatch, capsys)
    assert status == 2 and "a seat from 0 to 1" in err
    status, out, _ = run_main(["--players", "3", "--first", "2"], "quit\n", monkeypatch, capsys)
    assert status == 0 and "P2 to move" in out
