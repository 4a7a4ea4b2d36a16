"""Laptop mode end to end: the real loop with the OLED in a (headless) window and the keyboard.

SDL's dummy video driver stands in for a desktop; key events are posted to pygame's queue.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.app import App
from companion.appliance.config import parse_config
from companion.appliance.journal import Journal
from companion.commands import run
from device.clock import FakeClock
from device.factory import make_hardware
from device.settings import laptop_settings
from engine import Position, play

FRAMES = Path(__file__).resolve().parents[2] / "companion" / "commands" / "demo_frames"


@pytest.fixture
def pygame(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    import pygame as pg

    pg.display.init()
    pg.event.clear()
    yield pg
    pg.display.quit()


def tap(pg: Any, app: App, clock: FakeClock, code: int, hold: float = 0.0) -> None:
    """Key down and up as a person types them: both may land in one loop turn."""
    pg.event.post(pg.event.Event(pg.KEYDOWN, key=code))
    if hold:
        app.step()
        clock.advance(hold)
    pg.event.post(pg.event.Event(pg.KEYUP, key=code))
    for _ in range(4):  # the loop turns while the gesture is decided
        app.step()
        clock.advance(0.2)


def test_the_keyboard_plays_moves_in_the_window(pygame: Any, tmp_path: Path) -> None:
    config = parse_config('[camera]\nkind = "generated"\n')
    settings = laptop_settings(config.hardware, display="window", keys=True)
    clock = FakeClock(100.0)
    hw = make_hardware(settings, "fake", clock=clock)
    journal = Journal.open(tmp_path / "journal.jsonl", clock=clock)
    app = App(config, hw, journal, clock=clock, manual=True)
    with hw:
        app.step()
        window = pygame.display.get_surface()
        assert window is not None and window.get_size() == (512, 256)
        before = pygame.image.tobytes(window, "RGB")
        tap(pygame, app, clock, pygame.K_RIGHT)  # the move cursor opens
        assert pygame.image.tobytes(window, "RGB") != before  # the window shows it
        legal = [str(m) for m in app.referee.game.legal_moves()]
        for _ in range(legal.index("2+")):
            tap(pygame, app, clock, pygame.K_RIGHT)
        tap(pygame, app, clock, pygame.K_RETURN)
        assert app.referee.position == play(Position.initial(), "2+").position
    journal.close()


def test_run_in_laptop_mode_ends_cleanly_when_the_window_closes(
    pygame: Any, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    argv = [
        "--camera",
        f"replay:{FRAMES}",
        "--display",
        "window",
        "--keys",
        "--journal",
        str(journal),
        "--config",
        str(tmp_path / "none.toml"),
    ]
    (tmp_path / "none.toml").write_text("")
    with pytest.raises(SystemExit) as info:
        run.main(argv)
    assert info.value.code == 0
    assert journal.stat().st_size > 0  # the game was opened and the journal closed


def test_run_refuses_keys_without_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c.toml").write_text("")
    code = run.main(
        ["--keys", "--journal", str(tmp_path / "j.jsonl"), "--config", str(tmp_path / "c.toml")]
    )
    err = capsys.readouterr().err.strip()
    assert code == 1 and err == (
        "oanquan run: --keys: the keys are read from the OLED window: add --display window"
    )
