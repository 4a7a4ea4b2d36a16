"""The whole app loop on fake hardware: buttons in, OLED frames out, journal on disk."""

from __future__ import annotations

from pathlib import Path

from companion.appliance.app import App
from companion.appliance.config import parse_config
from companion.appliance.journal import Journal
from companion.referee.reconcile import Evidence
from companion.ui.controller import View
from companion.ui.screens import OperatorScreen
from device.factory import make_hardware
from engine import Position, play


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def build(tmp_path: Path, clock: Clock) -> tuple[App, object]:
    config = parse_config('[camera]\nkind = "generated"\n')
    hardware = make_hardware(config.hardware, "fake", clock=clock)
    journal = Journal.open(tmp_path / "journal.jsonl", clock=clock)
    return App(config, hardware, journal, clock=clock, manual=True), hardware


def tap(app: App, hardware: object, clock: Clock, button: str) -> None:
    hardware.buttons.press(button)  # type: ignore[attr-defined]
    clock.t += 0.1
    app.step()
    hardware.buttons.release(button)  # type: ignore[attr-defined]
    clock.t += 0.1
    app.step()
    clock.t += 0.1
    app.step()


def play_with_buttons(app: App, hardware: object, clock: Clock, move: str) -> None:
    tap(app, hardware, clock, "right")
    legal = [str(m) for m in app.referee.game.legal_moves()]
    for _ in range(legal.index(move)):
        tap(app, hardware, clock, "right")
    tap(app, hardware, clock, "ok")


def test_buttons_play_moves_and_a_restart_resumes_the_game(tmp_path: Path) -> None:
    clock = Clock()
    app, hardware = build(tmp_path, clock)
    app.step()
    first = hardware.display.last_image  # type: ignore[attr-defined]
    assert first is not None and first.size == (128, 64)
    play_with_buttons(app, hardware, clock, "2+")
    play_with_buttons(app, hardware, clock, "9-")
    expected = play(play(Position.initial(), "2+").position, "9-").position
    assert app.referee.position == expected
    assert hardware.display.last_image.tobytes() != first.tobytes()  # type: ignore[attr-defined]
    hardware.close()  # type: ignore[attr-defined]
    # Power comes back: a new process opens the same journal.
    again, hardware2 = build(tmp_path, clock)
    assert again.referee.position == expected
    hardware2.close()  # type: ignore[attr-defined]


def test_new_game_from_the_menu_is_journaled(tmp_path: Path) -> None:
    clock = Clock()
    app, hardware = build(tmp_path, clock)
    play_with_buttons(app, hardware, clock, "2+")
    hardware.buttons.press("ok")  # type: ignore[attr-defined]
    clock.t += 2.0  # a long press opens the menu
    app.step()
    hardware.buttons.release("ok")  # type: ignore[attr-defined]
    clock.t += 0.1
    app.step()
    assert app.controller.view == "menu"
    tap(app, hardware, clock, "ok")  # "new game" is the first item: it asks first
    assert app.controller.view == View.NEW_GAME
    assert app.referee.position != Position.initial()  # the game in progress is kept
    tap(app, hardware, clock, "right")  # from "keep playing" to "new game"
    tap(app, hardware, clock, "ok")
    assert app.referee.position == Position.initial()
    kinds = [r.kind for r in Journal.open(tmp_path / "journal.jsonl").records]
    assert kinds[-1] == "game"
    hardware.close()  # type: ignore[attr-defined]


def test_kiosk_dims_then_blanks_the_panel_and_a_button_wakes_it(tmp_path: Path) -> None:
    clock = Clock()
    config = parse_config(
        '[camera]\nkind = "generated"\n[kiosk]\ndim_after_s = 60.0\nblank_after_s = 600.0\n'
    )
    hardware = make_hardware(config.hardware, "fake", clock=clock)
    journal = Journal.open(tmp_path / "journal.jsonl", clock=clock)
    app = App(config, hardware, journal, clock=clock, manual=True, kiosk=True)
    calls: list[tuple[str, object]] = []
    display = hardware.display
    display.set_contrast = lambda level: calls.append(("contrast", level))  # type: ignore[method-assign]
    display.sleep = lambda asleep: calls.append(("sleep", asleep))  # type: ignore[method-assign]
    app.step()
    clock.t += 61
    app.step()
    clock.t += 600
    app.step()
    tap(app, hardware, clock, "left")
    assert calls == [
        ("contrast", config.kiosk.dim_contrast),
        ("sleep", True),
        ("sleep", False),
        ("contrast", config.display.contrast),
    ]
    hardware.close()


def _operator_totals(app: App) -> tuple[int, int]:
    app.controller.view = View.OPERATOR
    screen = app.controller.screen()
    assert isinstance(screen, OperatorScreen)
    return screen.games, screen.disputes


def test_operator_totals_survive_a_restart(tmp_path: Path) -> None:
    """The kiosk's games and disputes come back after a power cut, and so does a reset."""
    clock = Clock()
    app, hardware = build(tmp_path, clock)
    wrong = [Evidence.exact(n + (sq == 3)) for sq, n in enumerate(Position.initial().board)]
    wrong[0] = wrong[6] = Evidence.exact(5, 1)
    app.controller.on_report(app.referee.observe(wrong, still=True))  # the opening is off
    app.controller.on_report(app.referee.observe(wrong, still=True))  # the same dispute
    app.controller.new_game()
    app.controller.new_game()
    before = _operator_totals(app)
    assert before == (3, 1)  # the game at power-on, two new ones; one dispute
    hardware.close()  # type: ignore[attr-defined]
    app.journal.close()
    app, hardware = build(tmp_path, clock)
    assert _operator_totals(app) == before
    app.controller.view = View.OPERATOR
    shown = app.controller.screen()
    assert isinstance(shown, OperatorScreen)
    app.controller.operator_index = [i.key for i in shown.items].index("operator.reset_counters")
    app.controller._press("ok")
    hardware.close()  # type: ignore[attr-defined]
    app.journal.close()
    app, hardware = build(tmp_path, clock)
    assert _operator_totals(app) == (0, 0)
    hardware.close()  # type: ignore[attr-defined]


def test_a_new_game_relocks_the_camera_exposure(tmp_path: Path) -> None:
    """Daylight drifts over a day at the kiosk: exposure is measured again between games."""
    clock = Clock()
    config = parse_config('[camera]\nkind = "generated"\n')
    hardware = make_hardware(config.hardware, "fake", clock=clock)
    journal = Journal.open(tmp_path / "journal.jsonl", clock=clock)
    relocks: list[float] = []
    hardware.camera.relock = lambda: relocks.append(clock.t) or {}  # type: ignore[method-assign]
    app = App(config, hardware, journal, clock=clock, observer=lambda frame: None)  # type: ignore[arg-type]
    assert relocks == []  # never at start or mid-game
    app.controller.new_game()
    assert relocks == [clock.t]
    hardware.close()
