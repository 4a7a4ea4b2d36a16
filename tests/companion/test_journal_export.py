"""``oanquan journal export``: a journal written by the real app becomes a saved game.

The export must be accepted by ``rules replay`` and ``play --load`` and land
on the very position the referee had: confirmed moves (camera, buttons),
undos applied, the rules and the number of seats kept.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.app import App
from companion.appliance.config import parse_config
from companion.appliance.journal import ARCHIVE_NAME, Journal
from companion.commands import journal as journal_cli
from companion.commands import play as play_cli
from companion.commands.replay import replay_line
from companion.referee.reconcile import Evidence
from device.factory import make_hardware
from engine import Game, Position
from engine.record import load_game


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def build(folder: Path, clock: Clock, config_text: str, manual: bool) -> tuple[App, Any]:
    config = parse_config(config_text)
    hardware = make_hardware(config.hardware, "fake", clock=clock)
    journal = Journal.open(folder / "journal.jsonl", clock=clock)
    observer = None if manual else (lambda frame: None)
    app = App(config, hardware, journal, clock=clock, manual=manual, observer=observer)  # type: ignore[arg-type]
    return app, hardware


def press(app: App, hardware: Any, clock: Clock, button: str, hold: float = 0.1) -> None:
    hardware.buttons.press(button)
    clock.t += hold
    app.step()
    hardware.buttons.release(button)
    clock.t += 0.1
    app.step()
    clock.t += 0.1
    app.step()


def enter(app: App, hardware: Any, clock: Clock, move: str) -> None:
    """A move entered with the buttons: RIGHT to the move in the list, OK."""
    press(app, hardware, clock, "right")
    legal = [str(m) for m in app.referee.game.legal_moves()]
    for _ in range(legal.index(move)):
        press(app, hardware, clock, "right")
    press(app, hardware, clock, "ok")


def camera_sees(app: App, position: Position) -> None:
    """A settled frame showing ``position``, read confidently."""
    seen = []
    for sq, n in enumerate(position.board):
        big = position.big[sq // 6] if sq % 6 == 0 else 0
        seen.append(Evidence.exact(n, big))
    app.controller.on_report(app.referee.observe(seen, still=True))


def export(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = journal_cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_camera_game_with_an_undo_exports_to_the_referees_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = Clock()
    app, hardware = build(tmp_path, clock, '[camera]\nkind = "generated"\n', manual=False)
    truth = Game()
    camera_sees(app, truth.position)  # the opening, checked
    for move in ("2+", "9-"):
        truth.play(move)
        camera_sees(app, truth.position)
    assert [str(m) for m in app.referee.game.moves] == ["2+", "9-"]
    press(app, hardware, clock, "back", hold=1.5)  # a long BACK takes 9- back
    truth.undo()
    truth.play("10+")
    camera_sees(app, truth.position)
    enter(app, hardware, clock, "3-")  # and one move entered with the buttons
    truth.play("3-")
    assert app.referee.position == truth.position
    kinds = [r.kind for r in app.journal.records]
    hows = [r.data["how"] for r in app.journal.records if r.kind == "move"]
    assert "undo" in kinds and hows == ["camera", "camera", "camera", "override"]
    hardware.close()
    app.journal.close()

    saved = tmp_path / "game.json"
    status, out, err = export([str(tmp_path / "journal.jsonl"), "-o", str(saved)], capsys)
    assert (status, err) == (0, "")
    assert out == f"wrote 1 game(s), 3 move(s), to {saved}\n"
    line = saved.read_text()
    assert json.loads(line)["moves"] == ["2+", "10+", "3-"]
    answer = replay_line(line)
    assert answer["error"] is None
    assert answer["positions"][-1] == truth.position.to_json()
    assert load_game(saved).replay().position == truth.position


def test_three_seats_keep_their_rules_and_play_load_continues_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    config = '[camera]\nkind = "generated"\n[rules]\nplayers = 3\nlender = "next"\n'
    app, hardware = build(tmp_path, clock, config, manual=True)
    for move in ("2+", "15-", "9+"):
        enter(app, hardware, clock, move)
    assert len(app.referee.game.moves) == 3
    expected = app.referee.position
    hardware.close()
    app.journal.close()

    status, out, _ = export([str(tmp_path / "journal.jsonl")], capsys)
    assert status == 0
    game = json.loads(out)
    assert game["rules"] == {"players": 3, "lender": "next"}
    assert replay_line(out)["positions"][-1] == expected.to_json()

    saved = tmp_path / "game.json"
    saved.write_text(out)
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert play_cli.main(["--load", str(saved)]) == 0
    shown = capsys.readouterr().out
    assert str(expected) in shown and f"P{expected.to_move} to move" in shown


def test_the_archive_gives_one_line_per_game_and_game_picks_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = Clock()
    app, hardware = build(tmp_path, clock, '[camera]\nkind = "generated"\n', manual=True)
    played = [["2+"], ["5-", "9-"], ["1+"]]
    for i, moves in enumerate(played):
        if i:
            app.controller.new_game()
        for move in moves:
            enter(app, hardware, clock, move)
    hardware.close()
    app.journal.close()

    archive = str(tmp_path / ARCHIVE_NAME)
    status, out, _ = export([archive], capsys)
    assert status == 0
    assert [json.loads(line)["moves"] for line in out.splitlines()] == played[:2]
    status, out, _ = export([archive, "--game", "-1"], capsys)
    assert status == 0 and json.loads(out)["moves"] == played[1]
    status, out, _ = export([str(tmp_path / "journal.jsonl")], capsys)
    assert json.loads(out)["moves"] == played[2]
    status, _, err = export([archive, "--game", "3"], capsys)
    assert (
        status == 2
        and err == f"oanquan journal export: --game 3: {archive} holds 2 game(s) (1 to 2)\n"
    )


def journal_of(folder: Path, moves: list[str]) -> Path:
    with Journal.open(folder / "journal.jsonl", clock=Clock()) as journal:
        from engine import Rules

        journal.new_game(Rules())
        for ply, move in enumerate(moves, start=1):
            journal.move(move, ply=ply, how="buttons")
    return folder / "journal.jsonl"


def test_a_torn_last_line_is_left_out_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = journal_of(tmp_path, ["2+", "9-"])
    path.write_bytes(path.read_bytes()[:-9])  # a power cut while writing 9-
    status, out, err = export([str(path)], capsys)
    assert status == 0 and err == ""  # never confirmed to anyone: nothing lost
    assert json.loads(out)["moves"] == ["2+"]


def test_a_corrupt_line_is_named_and_the_rest_still_exported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = journal_of(tmp_path, ["2+", "9-", "1+"])
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"1+"', b'"1-"')  # edited by hand: the checksum fails
    path.write_bytes(b"\n".join(lines))
    status, out, err = export([str(path)], capsys)
    assert status == 1
    assert err.startswith(f"oanquan journal export: {path}: line 4: checksum mismatch")
    assert err.count("\n") == 1
    assert json.loads(out)["moves"] == ["2+", "9-"]


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        (None, 2, "no such file"),
        (b'{"moves": ["2+"]}\n', 1, "not a journal"),
    ],
)
def test_what_is_not_a_journal_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes | None,
    status: int,
    message: str,
) -> None:
    path = tmp_path / "journal.jsonl"
    if content is not None:
        path.write_bytes(content)
    code, out, err = export([str(path)], capsys)
    assert code == status and out == ""
    assert message in err.splitlines()[-1]
