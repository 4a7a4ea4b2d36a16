"""The input controller on a hand-driven clock: presses, long presses, repeats, chords, chatter."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.ui.input import (
    Chord,
    Held,
    InputController,
    InputEvent,
    InputSettings,
    LongPress,
    Repeat,
    ShortPress,
)
from device.buttons import FakeButtons
from device.clock import FakeClock
from device.ports import ButtonEvent, Edge

P, R, S = Edge.PRESS, Edge.RELEASE, Edge.STEP
SETTINGS = InputSettings(
    debounce_s=0.03,
    long_press_s=0.8,
    chord_window_s=0.25,
    repeat_buttons=frozenset({"left", "right"}),
    repeat_delay_s=0.5,
    repeat_interval_s=0.15,
    hold_marks_s=(5.0,),
)


class Rig:
    """A controller plus a clock; ``at(t, ...)`` delivers raw edges stamped at t."""

    def __init__(self, settings: InputSettings = SETTINGS) -> None:
        self.clock = FakeClock()
        self.ctl = InputController(settings, self.clock)

    def at(self, t: float, *edges: tuple[str, Edge]) -> list[InputEvent]:
        self.clock.set(t)
        return self.ctl.feed([ButtonEvent(name, edge, t) for name, edge in edges])

    def run(self, script: Iterable[tuple[float, str, Edge]], until: float) -> list[InputEvent]:
        out: list[InputEvent] = []
        for t, name, edge in script:
            out += self.at(t, (name, edge))
        self.clock.set(until)
        return out + self.ctl.poll()


def test_short_press_is_reported_on_release() -> None:
    rig = Rig()
    assert rig.at(1.0, ("ok", P)) == []
    assert rig.at(1.2) == []
    assert rig.at(1.3, ("ok", R)) == []  # release not yet stable
    assert rig.at(1.33) == [ShortPress("ok", 1.3)]
    assert rig.at(5.0) == []


def test_long_press_fires_while_held_and_the_release_is_silent() -> None:
    rig = Rig()
    rig.at(2.0, ("ok", P))
    assert rig.at(2.79) == []
    assert rig.at(2.81) == [LongPress("ok", 2.8)]
    assert rig.at(3.5, ("ok", R)) == []
    assert rig.at(4.0) == []


def test_long_press_is_timed_from_the_press_not_from_polling() -> None:
    rig = Rig()
    rig.at(0.0, ("back", P))
    assert rig.at(3.0) == [LongPress("back", 0.8)]


def test_release_just_before_the_threshold_is_a_short_press() -> None:
    rig = Rig()
    out = rig.run([(0.0, "ok", P), (0.79, "ok", R)], until=2.0)
    assert out == [ShortPress("ok", 0.79)]


def test_hold_marks_follow_a_long_press() -> None:
    rig = Rig()
    rig.at(0.0, ("back", P))
    assert rig.at(6.0) == [LongPress("back", 0.8), Held(frozenset({"back"}), 5.0, 5.0)]
    assert rig.at(60.0, ("back", R)) == []


def test_chatter_on_press_and_release_gives_one_short_press() -> None:
    rig = Rig()
    bouncy = [
        (1.000, "ok", P), (1.002, "ok", R), (1.004, "ok", P), (1.009, "ok", R), (1.011, "ok", P),
        (1.300, "ok", R), (1.301, "ok", P), (1.303, "ok", R),
    ]  # fmt: skip
    out = rig.run(bouncy, until=2.0)
    assert out == [ShortPress("ok", 1.303)]


def test_a_glitch_shorter_than_the_debounce_is_ignored() -> None:
    rig = Rig()
    out = rig.run([(1.0, "ok", P), (1.01, "ok", R)], until=3.0)
    assert out == []


def test_a_release_glitch_during_a_hold_does_not_split_the_press() -> None:
    rig = Rig()
    out = rig.run([(0.0, "ok", P), (0.3, "ok", R), (0.31, "ok", P), (0.5, "ok", R)], until=1.0)
    assert out == [ShortPress("ok", 0.5)]


def test_repeat_buttons_repeat_instead_of_long_pressing() -> None:
    rig = Rig()
    rig.at(0.0, ("left", P))
    assert rig.at(0.49) == []
    assert rig.at(0.81) == [Repeat("left", 0.5, 1), Repeat("left", 0.65, 2), Repeat("left", 0.8, 3)]
    assert rig.at(0.9, ("left", R)) == []
    assert rig.at(2.0) == []


def test_a_tap_on_a_repeat_button_is_a_short_press() -> None:
    rig = Rig()
    assert rig.run([(0.0, "right", P), (0.1, "right", R)], until=1.0) == [ShortPress("right", 0.1)]


def test_a_stalled_loop_does_not_burst_stale_repeats() -> None:
    rig = Rig()
    rig.at(0.0, ("left", P))
    out = rig.at(60.0)
    assert out[0] == Repeat("left", 0.5, 1)
    assert len(out) <= 10
    assert rig.at(60.15) == [Repeat("left", 60.15, len(out) + 1)]


def test_two_buttons_within_the_window_are_a_chord_in_either_order() -> None:
    for first, second in (("back", "ok"), ("ok", "back")):
        rig = Rig()
        out = rig.run(
            [(0.0, first, P), (0.2, second, P), (0.5, first, R), (0.6, second, R)], until=2.0
        )
        assert out == [Chord(frozenset({"back", "ok"}), 0.2)]


def test_a_held_chord_reaches_the_operator_mark() -> None:
    rig = Rig()
    rig.at(0.0, ("back", P))
    rig.at(0.1, ("ok", P))
    out = rig.at(6.0)
    assert out == [Chord(frozenset({"back", "ok"}), 0.1), Held(frozenset({"back", "ok"}), 5.1, 5.0)]
    assert rig.at(7.0, ("ok", R), ("back", R)) == []


def test_releasing_one_chord_button_early_cancels_the_hold() -> None:
    rig = Rig()
    out = rig.run([(0.0, "back", P), (0.1, "ok", P), (1.0, "ok", R)], until=9.0)
    assert out == [Chord(frozenset({"back", "ok"}), 0.1)]


def test_a_second_button_outside_the_window_is_independent() -> None:
    rig = Rig()
    out = rig.run([(0.0, "back", P), (0.4, "ok", P), (0.6, "ok", R)], until=1.0)
    assert out == [ShortPress("ok", 0.6), LongPress("back", 0.8)]


def test_a_third_button_during_a_chord_is_ignored() -> None:
    rig = Rig()
    script = [(0.0, "back", P), (0.1, "ok", P), (0.2, "left", P), (0.3, "left", R)]
    out = rig.run(script, until=1.0)
    assert out == [Chord(frozenset({"back", "ok"}), 0.1)]


def test_encoder_steps_are_immediate_presses() -> None:
    rig = Rig()
    assert rig.at(1.0, ("right", S), ("right", S), ("left", S)) == [
        ShortPress("right", 1.0),
        ShortPress("right", 1.0),
        ShortPress("left", 1.0),
    ]


def test_reset_silences_buttons_held_across_a_screen_change() -> None:
    rig = Rig()
    rig.at(0.0, ("ok", P))
    rig.at(0.1)
    rig.ctl.reset()
    assert rig.run([(0.3, "ok", R)], until=2.0) == []
    assert rig.run([(3.0, "ok", P), (3.1, "ok", R)], until=4.0) == [ShortPress("ok", 3.1)]


def test_is_down_reports_the_debounced_level() -> None:
    rig = Rig()
    rig.at(0.0, ("ok", P))
    assert not rig.ctl.is_down("ok")
    rig.at(0.05)
    assert rig.ctl.is_down("ok") and not rig.ctl.is_down("nope")


def test_next_deadline_tells_the_main_loop_how_long_it_may_block() -> None:
    rig = Rig()
    assert rig.ctl.next_deadline() is None
    rig.at(1.0, ("ok", P))
    assert rig.ctl.next_deadline() == pytest.approx(1.03)  # debounce settles
    rig.at(1.05)
    assert rig.ctl.next_deadline() == pytest.approx(1.8)  # long press due
    rig.at(1.9)
    assert rig.ctl.next_deadline() == pytest.approx(6.0)  # operator hold mark
    rig.at(2.0, ("ok", R))
    rig.at(2.1)
    assert rig.ctl.next_deadline() is None


def test_zero_debounce_acts_on_edges_at_once() -> None:
    rig = Rig(InputSettings(debounce_s=0.0))
    rig.at(0.0, ("ok", P))
    assert rig.ctl.is_down("ok")
    assert rig.at(0.1, ("ok", R)) == [ShortPress("ok", 0.1)]


def test_edges_stamped_before_the_last_poll_keep_time_monotonic() -> None:
    rig = Rig()
    rig.clock.set(1.0)
    rig.ctl.poll()
    late = rig.ctl.feed([ButtonEvent("ok", P, 0.9), ButtonEvent("ok", R, 1.1)])
    rig.clock.set(2.0)
    assert late + rig.ctl.poll() == [ShortPress("ok", 1.1)]


def test_end_to_end_with_mock_gpio_buttons() -> None:
    clock = FakeClock()
    buttons = FakeButtons(clock=clock)
    ctl = InputController(SETTINGS, clock)
    try:
        buttons.press("ok")
        clock.advance(0.002)
        buttons.release("ok")  # contact bounce
        clock.advance(0.002)
        buttons.press("ok")
        clock.advance(0.2)
        buttons.release("ok")
        clock.advance(0.05)
        [event] = ctl.feed(buttons.events())
        assert isinstance(event, ShortPress) and event.button == "ok"
        assert event.t == pytest.approx(0.204)
    finally:
        buttons.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"debounce_s": 0.5}, "debounce_s"),
        ({"chord_window_s": 0.6}, "chord_window_s"),
        ({"hold_marks_s": (0.5,)}, "hold_marks_s"),
        ({"repeat_interval_s": 0}, "repeat_interval_s"),
    ],
)
def test_invalid_input_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        InputSettings(**kwargs)  # type: ignore[arg-type]


# Each press: (gap before it, held time, chatter offsets at the press and at the release).
presses = st.lists(
    st.tuples(
        st.floats(0.05, 2.0),
        st.floats(0.05, 0.65),  # + up to 0.1 s of release chatter: stays under long_press_s
        st.lists(st.floats(0.0005, 0.025), max_size=4),
        st.lists(st.floats(0.0005, 0.025), max_size=4),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(presses)
def test_any_chatter_shorter_than_the_debounce_gives_one_short_press_per_press(
    script: list[tuple[float, float, list[float], list[float]]],
) -> None:
    rig = Rig()
    t = 0.0
    expected: list[InputEvent] = []
    raw: list[tuple[float, str, Edge]] = []
    for gap, held, bounce_in, bounce_out in script:
        t += gap
        for offset in sorted(bounce_in):  # contact bounce settles within 25 ms, into "pressed"
            raw += [(t, "ok", P), (t + offset / 2, "ok", R)]
            t += offset
        raw.append((t, "ok", P))
        t += held
        for offset in sorted(bounce_out):
            raw += [(t, "ok", R), (t + offset / 2, "ok", P)]
            t += offset
        raw.append((t, "ok", R))
        expected.append(ShortPress("ok", t))
        t += 0.05
    assert rig.run(raw, until=t + 1.0) == expected
