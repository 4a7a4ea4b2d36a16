"""Button policy: raw press/release edges -> short press, long press, repeat, chords.

Pure and clock-driven: the main loop feeds raw edges (from ``device`` buttons)
and polls; every decision is made at exact times derived from the edges'
timestamps and the injected clock, so tests drive time by hand and never
sleep. Debouncing is done here, not by the pin library, because gpiozero's
mock pins ignore ``bounce_time`` and each real backend debounces differently.

Rules:
* A contact counts only after it has been stable for ``debounce_s`` (chatter
  and glitches shorter than that vanish; timing is taken from the stable edge).
* Release before ``long_press_s`` -> :class:`ShortPress` (on release).
* Held to ``long_press_s`` -> :class:`LongPress` at that moment; the release is silent.
* Repeat buttons (left/right) held past ``repeat_delay_s`` emit :class:`Repeat`
  every ``repeat_interval_s`` instead of a long press.
* A second button pressed within ``chord_window_s`` of the first, while the
  first is still undecided -> :class:`Chord`; the members' releases are silent.
* ``hold_marks_s`` (e.g. the operator's 5 s hold) -> :class:`Held` while a long
  press or chord stays down.
* Encoder detents (``Edge.STEP``) are already clean: each is a :class:`ShortPress`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from device.clock import Clock
from device.ports import ButtonEvent, Edge


@dataclass(frozen=True)
class InputSettings:
    """Timings of the button policy, in seconds."""

    debounce_s: float = 0.03
    long_press_s: float = 0.8
    chord_window_s: float = 0.25
    repeat_buttons: frozenset[str] = frozenset({"left", "right"})
    repeat_delay_s: float = 0.5
    repeat_interval_s: float = 0.15
    hold_marks_s: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "repeat_buttons", frozenset(self.repeat_buttons))
        object.__setattr__(self, "hold_marks_s", tuple(sorted(set(self.hold_marks_s))))
        if not 0 <= self.debounce_s <= 0.2:
            raise ValueError(f"debounce_s: expected 0..0.2, got {self.debounce_s!r}")
        if self.repeat_interval_s <= 0:
            raise ValueError(f"repeat_interval_s: expected > 0, got {self.repeat_interval_s!r}")
        if self.chord_window_s < 0:
            raise ValueError(f"chord_window_s: expected >= 0, got {self.chord_window_s!r}")
        earliest = min(self.long_press_s, self.repeat_delay_s)
        if self.chord_window_s + self.debounce_s >= earliest:
            raise ValueError(
                "chord_window_s: chord window + debounce must be shorter than long_press_s "
                f"and repeat_delay_s, got {self.chord_window_s} + {self.debounce_s} >= {earliest}"
            )
        if any(mark <= self.long_press_s for mark in self.hold_marks_s):
            raise ValueError(
                f"hold_marks_s: every mark must exceed long_press_s ({self.long_press_s})"
            )


@dataclass(frozen=True)
class ShortPress:
    button: str
    t: float


@dataclass(frozen=True)
class LongPress:
    button: str
    t: float


@dataclass(frozen=True)
class Repeat:
    """Auto-repeat while a repeat button is held; ``count`` starts at 1."""

    button: str
    t: float
    count: int


@dataclass(frozen=True)
class Chord:
    """Two buttons pressed together (order does not matter)."""

    buttons: frozenset[str]
    t: float


@dataclass(frozen=True)
class Held:
    """A long press or chord still held at one of the configured marks."""

    buttons: frozenset[str]
    t: float
    seconds: float


InputEvent = ShortPress | LongPress | Repeat | Chord | Held

#: A main loop this far behind skips missed auto-repeats instead of bursting them.
_STALL_S = 1.0

_Role = Literal["idle", "pending", "long", "repeating", "chord", "ignored"]


@dataclass
class _Key:
    name: str
    raw: bool = False
    raw_since: float = 0.0
    down: bool = False
    down_t: float = 0.0
    role: _Role = "idle"
    next_t: float | None = None
    repeats: int = 0
    mark: int = 0


@dataclass
class _ChordState:
    members: frozenset[str]
    t0: float
    mark: int = 0
    active: bool = True
    released: set[str] = field(default_factory=set)


class InputController:
    """Feed raw edges, get gestures; see the module docstring for the rules."""

    def __init__(self, settings: InputSettings, clock: Clock) -> None:
        self.settings = settings
        self._clock = clock
        self._keys: dict[str, _Key] = {}
        self._chord: _ChordState | None = None
        self._now = clock()

    # -- public -------------------------------------------------------------------

    def feed(self, raw: Iterable[ButtonEvent] = ()) -> list[InputEvent]:
        """Process raw edges in order, then everything due up to the clock's now."""
        out: list[InputEvent] = []
        for event in raw:
            t = max(event.t, self._now)  # stamped before our last poll: keep time monotonic
            self._advance(t, out)
            self._apply(event, t, out)
        self._advance(max(self._clock(), self._now), out)
        return out

    def poll(self) -> list[InputEvent]:
        """Gestures that became due by the passage of time alone (long press, repeat)."""
        return self.feed(())

    def next_deadline(self) -> float | None:
        """When :meth:`poll` will next have something to decide (None: only a new edge).

        The main loop can block on ``buttons.events(timeout=...)`` until then
        instead of spinning.
        """
        times = [d for key in self._keys.values() if (d := self._deadline(key)) is not None]
        chord = self._chord_deadline()
        if chord is not None:
            times.append(chord)
        return min(times) if times else None

    def is_down(self, button: str) -> bool:
        """Debounced level of a button."""
        key = self._keys.get(button)
        return key is not None and key.down

    def reset(self) -> None:
        """Forget gestures in progress (e.g. on a screen change); held buttons go silent."""
        for key in self._keys.values():
            if key.down or key.raw:
                key.role, key.next_t = "ignored", None
        self._chord = None

    # -- raw edges ----------------------------------------------------------------

    def _key(self, name: str) -> _Key:
        key = self._keys.get(name)
        if key is None:
            key = self._keys[name] = _Key(name)
        return key

    def _apply(self, event: ButtonEvent, t: float, out: list[InputEvent]) -> None:
        if event.edge is Edge.STEP:
            out.append(ShortPress(event.button, t))
            return
        key = self._key(event.button)
        level = event.edge is Edge.PRESS
        if level == key.raw:
            return  # a repeated edge (lost event in between): nothing changed
        key.raw, key.raw_since = level, t
        if self.settings.debounce_s == 0:
            self._settle(key, out)

    # -- time ---------------------------------------------------------------------

    def _deadline(self, key: _Key) -> float | None:
        action = key.next_t if key.down else None
        if key.raw == key.down:
            return action
        # A change is settling: actions due before it began still happen, later ones wait.
        if action is not None and action < key.raw_since:
            return action
        return key.raw_since + self.settings.debounce_s

    def _chord_deadline(self) -> float | None:
        chord, marks = self._chord, self.settings.hold_marks_s
        if chord is None or not chord.active or chord.mark >= len(marks):
            return None
        return chord.t0 + marks[chord.mark]

    def _advance(self, to: float, out: list[InputEvent]) -> None:
        """Fire every deadline up to ``to`` in time order (ties: chord, then key order)."""
        while True:
            best_t: float | None = self._chord_deadline()
            best_key: _Key | None = None
            for key in self._keys.values():
                d = self._deadline(key)
                if d is not None and (best_t is None or d < best_t):
                    best_t, best_key = d, key
            if best_t is None or best_t > to:
                break
            self._now = max(self._now, best_t)
            if best_key is None:
                self._fire_chord(best_t, out)
            elif best_key.raw != best_key.down and best_t >= best_key.raw_since:
                self._settle(best_key, out)
            else:
                self._fire_key(best_key, best_t, to, out)
        self._now = max(self._now, to)

    def _settle(self, key: _Key, out: list[InputEvent]) -> None:
        """The raw level has been stable long enough: it is now the debounced level."""
        key.down = key.raw
        if key.down:
            self._on_down(key, key.raw_since, out)
        else:
            self._on_up(key, key.raw_since, out)

    def _on_down(self, key: _Key, t: float, out: list[InputEvent]) -> None:
        s = self.settings
        key.down_t, key.repeats, key.mark = t, 0, 0
        partner = self._chord_partner(key, t)
        if partner is not None:
            members = frozenset({partner.name, key.name})
            for member in (partner, key):
                member.role, member.next_t = "chord", None
            self._chord = _ChordState(members, t)
            out.append(Chord(members, t))
            return
        if self._chord is not None and self._chord.active:
            key.role, key.next_t = "ignored", None  # a third finger during a chord
            return
        key.role = "pending"
        delay = s.repeat_delay_s if key.name in s.repeat_buttons else s.long_press_s
        key.next_t = t + delay

    def _chord_partner(self, key: _Key, t: float) -> _Key | None:
        if self._chord is not None and self._chord.active:
            return None
        window = self.settings.chord_window_s
        for other in self._keys.values():
            pending = other is not key and other.down and other.role == "pending"
            if pending and t - other.down_t <= window:
                return other
        return None

    def _on_up(self, key: _Key, t: float, out: list[InputEvent]) -> None:
        if key.role == "pending":
            out.append(ShortPress(key.name, t))
        elif key.role == "chord" and self._chord is not None:
            self._chord.active = False
            self._chord.released.add(key.name)
            if self._chord.released >= self._chord.members:
                self._chord = None
        key.role, key.next_t = "idle", None

    def _fire_key(self, key: _Key, t: float, to: float, out: list[InputEvent]) -> None:
        s = self.settings
        if key.role == "pending" and key.name in s.repeat_buttons:
            key.role = "repeating"
        elif key.role == "pending":
            key.role = "long"
            out.append(LongPress(key.name, t))
            self._next_mark(key)
            return
        if key.role == "repeating":
            key.repeats += 1
            out.append(Repeat(key.name, t, key.repeats))
            nxt = t + s.repeat_interval_s
            # After a stalled main loop, do not replay a burst of stale repeats.
            key.next_t = nxt if to - nxt <= _STALL_S else to
            return
        if key.role == "long":
            out.append(Held(frozenset({key.name}), t, s.hold_marks_s[key.mark]))
            key.mark += 1
            self._next_mark(key)

    def _next_mark(self, key: _Key) -> None:
        marks = self.settings.hold_marks_s
        key.next_t = key.down_t + marks[key.mark] if key.mark < len(marks) else None

    def _fire_chord(self, t: float, out: list[InputEvent]) -> None:
        chord = self._chord
        if chord is None:  # pragma: no cover - only called when _chord_deadline() found one
            return
        out.append(Held(chord.members, t, self.settings.hold_marks_s[chord.mark]))
        chord.mark += 1
