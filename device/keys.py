# mypy: disable-error-code="import-untyped,import-not-found"
"""The keyboard as the four buttons, read from the OLED window's pygame event queue.

Left/right arrows are LEFT/RIGHT, Enter (either) is OK, Backspace is BACK. Key-down
and key-up become PRESS and RELEASE edges stamped with the injected clock when the
loop drains them, so long presses and chords come from the same policy as on the Pi
(companion's input controller). Keys do not bounce, but a tap whose key-down and
key-up arrive in one drain would carry one time stamp and look like a glitch to the
debounce: its release is held back until ``min_press_s`` after the press.
Closing the window or pressing Escape ends the program (``SystemExit(0)``), as
luma.emulator's own window does.
"""

from __future__ import annotations

import logging
from typing import Any

from device.clock import Clock, monotonic
from device.emulator import _emulator_module
from device.ports import ButtonEvent, Edge
from device.settings import KEY_BUTTONS

log = logging.getLogger(__name__)

#: Longer than the largest debounce the input policy accepts (0.2 s), shorter than
#: its long press and repeat delay.
MIN_PRESS_S = 0.21


def key_names(pygame: Any) -> dict[int, str]:
    """pygame key code -> button name."""
    return {
        pygame.K_LEFT: "left",
        pygame.K_RIGHT: "right",
        pygame.K_RETURN: "ok",
        pygame.K_KP_ENTER: "ok",
        pygame.K_BACKSPACE: "back",
    }


class KeyButtons:
    """A :class:`~device.ports.Buttons` over the pygame window's keyboard events."""

    def __init__(
        self, *, clock: Clock = monotonic, min_press_s: float = MIN_PRESS_S, pygame: Any = None
    ) -> None:
        if pygame is None:
            _emulator_module()  # one clear line if the extra is missing
            import pygame
        self._pg = pygame
        pygame.display.init()  # idempotent; the event queue needs the video system
        self._clock = clock
        self._min_press_s = min_press_s
        self._keys = key_names(pygame)
        self._down: dict[str, float] = {}
        self._held_back: list[ButtonEvent] = []
        self._closed = False

    @property
    def names(self) -> tuple[str, ...]:
        return KEY_BUTTONS

    def events(self, timeout: float = 0.0) -> list[ButtonEvent]:
        """Edges since the last call; waits up to ``timeout`` only when there are none."""
        if self._closed:
            return []
        pg = self._pg
        wanted = (pg.KEYDOWN, pg.KEYUP, pg.QUIT, pg.WINDOWFOCUSLOST)
        raw = pg.event.get(wanted)
        if not raw and timeout > 0 and not self._held_back:
            first = pg.event.wait(max(1, int(timeout * 1000)))
            raw = ([first] if first.type in wanted else []) + pg.event.get(wanted)
        now = self._clock()
        out = self._due(now)
        for event in raw:
            if event.type == pg.QUIT or (event.type == pg.KEYDOWN and event.key == pg.K_ESCAPE):
                log.info("the OLED window was closed")
                raise SystemExit(0)
            if event.type == pg.WINDOWFOCUSLOST:
                for held in list(self._down):
                    out += self._release(held, now)
                continue
            name = self._keys.get(event.key)
            if name is None:
                continue
            if event.type == pg.KEYDOWN and name not in self._down:
                self._down[name] = now
                out.append(ButtonEvent(name, Edge.PRESS, now))
            elif event.type == pg.KEYUP and name in self._down:
                out += self._release(name, now)
        return out

    def _release(self, name: str, now: float) -> list[ButtonEvent]:
        pressed = self._down.pop(name)
        due = pressed + self._min_press_s
        if now >= due:
            return [ButtonEvent(name, Edge.RELEASE, now)]
        self._held_back.append(ButtonEvent(name, Edge.RELEASE, due))
        return []

    def _due(self, now: float) -> list[ButtonEvent]:
        ready = [e for e in self._held_back if e.t <= now]
        self._held_back = [e for e in self._held_back if e.t > now]
        return ready

    def is_pressed(self, name: str) -> bool:
        return name in self._down

    def close(self) -> None:
        """Forget held keys; the window itself belongs to the display."""
        self._closed = True
        self._down.clear()
        self._held_back.clear()


__all__ = ["MIN_PRESS_S", "KeyButtons", "key_names"]
