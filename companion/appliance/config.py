"""The appliance's configuration: one TOML file over embedded, commented defaults.

``companion/appliance/default_config.toml`` is both the documentation and the schema:
a key the defaults do not have is an error (typos must not silently fall back
to a default). ``[rules]`` and ``[vision]`` are plain dicts handed on unchanged,
but they are checked here too, by the engine's and vision's own validators, so
the whole file is known good before ``oanquan run`` opens any hardware (a bad
value found later would be a traceback and a restart loop under systemd).
Every error is one line naming the key:
``config: display.i2c_address: expected an integer 0x03..0x77, got 'abc'``.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

from companion.ui.input import InputSettings
from device.settings import (
    RESERVED_PINS,
    ButtonSettings,
    CameraSettings,
    DisplaySettings,
    EncoderPins,
    HardwareSettings,
)
from engine import EngineError, Rules

#: Where the installer puts the site's file on the Pi.
SYSTEM_CONFIG = Path("/etc/oanquan/config.toml")
ENV_VAR = "OANQUAN_CONFIG"

#: Tables whose keys are free-form (given -> replaces the default table).
_FREE_TABLES = frozenset({"buttons.pins", "rules", "vision"})

Language = Literal["vi", "en"]
_T = TypeVar("_T")


class ConfigError(ValueError):
    """A config file that cannot be read or has a bad value; ``str()`` is one line."""

    def __init__(self, key: str, problem: str, source: str | None = None) -> None:
        super().__init__(f"config: {key}: {problem}")
        self.key = key
        self.problem = problem
        self.source = source


@dataclass(frozen=True)
class KioskConfig:
    """Unattended behaviour: idle reset, dimming, the operator's hidden gesture."""

    enabled: bool = False
    idle_reset_s: float = 300.0
    attract: bool = True
    dim_after_s: float = 60.0
    dim_contrast: int = 0x40
    blank_after_s: float = 1800.0
    operator_buttons: tuple[str, ...] = ("back", "ok")
    operator_long_press_s: float = 5.0


@dataclass(frozen=True)
class PlayConfig:
    """Help for players: hints, and the companion playing one side itself."""

    hints: bool = True
    opponent: str = "off"  # off | easy | medium | hard (engine.search.LEVELS)
    companion_side: int = 1


@dataclass(frozen=True)
class StorageConfig:
    state_dir: Path = Path("/var/lib/oanquan")
    journal_dir: Path = Path("/var/lib/oanquan/journal")


@dataclass(frozen=True)
class Config:
    """Everything the app reads from the file, typed and validated."""

    language: Language = "vi"
    buttons: ButtonSettings = field(default_factory=ButtonSettings)
    display: DisplaySettings = field(default_factory=DisplaySettings)
    camera: CameraSettings = field(default_factory=CameraSettings)
    input: InputSettings = field(default_factory=InputSettings)
    kiosk: KioskConfig = field(default_factory=KioskConfig)
    play: PlayConfig = field(default_factory=PlayConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    #: Rule variant switches for the engine, unvalidated here.
    rules: dict[str, Any] = field(default_factory=dict)
    #: Vision settings for the vision package, unvalidated here.
    vision: dict[str, Any] = field(default_factory=dict)
    #: The file that was read on top of the defaults, if any.
    source: Path | None = None

    @property
    def hardware(self) -> HardwareSettings:
        """What :func:`device.factory.make_hardware` takes."""
        return HardwareSettings(self.buttons, self.display, self.camera)

    def input_settings(self) -> InputSettings:
        """Input timings plus the operator hold as a hold mark."""
        marks = {*self.input.hold_marks_s, self.kiosk.operator_long_press_s}
        return InputSettings(
            debounce_s=self.input.debounce_s,
            long_press_s=self.input.long_press_s,
            chord_window_s=self.input.chord_window_s,
            repeat_buttons=self.input.repeat_buttons,
            repeat_delay_s=self.input.repeat_delay_s,
            repeat_interval_s=self.input.repeat_interval_s,
            hold_marks_s=tuple(sorted(marks)),
        )


# -- finding and reading -------------------------------------------------------------


def default_config_text() -> str:
    """The shipped, commented defaults: every key a config file may set."""
    return resources.files("companion.appliance").joinpath("default_config.toml").read_text("utf-8")


def find_config_path(
    cli_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    system_path: Path = SYSTEM_CONFIG,
) -> Path | None:
    """``--config`` beats ``$OANQUAN_CONFIG`` beats the system file; None = defaults only.

    An explicitly named file must exist; the system file is optional.
    """
    env = os.environ if env is None else env
    if cli_path is not None:
        return _must_exist(Path(cli_path), "--config")
    if env.get(ENV_VAR):
        return _must_exist(Path(env[ENV_VAR]), ENV_VAR)
    return system_path if system_path.is_file() else None


def _must_exist(path: Path, how: str) -> Path:
    if not path.is_file():
        raise ConfigError(str(path), f"file not found (given by {how})", str(path))
    return path


def load_config(
    cli_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    system_path: Path = SYSTEM_CONFIG,
) -> Config:
    """Find the file (see :func:`find_config_path`), read it over the defaults, validate."""
    path = find_config_path(cli_path, env, system_path)
    if path is None:
        return parse_config("")
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"cannot read: {exc}", str(path)) from exc
    return parse_config(text, source=path)


def parse_config(text: str, source: Path | None = None) -> Config:
    """Validate ``text`` (a user file, possibly empty) on top of the defaults."""
    where = str(source) if source is not None else "<text>"
    defaults = _parse_toml(default_config_text(), "companion/appliance/default_config.toml")
    user = _parse_toml(text, where)
    _check_known(user, defaults, "", where)
    merged = _merge(defaults, user)
    return _build(merged, source, where)


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(where, f"invalid TOML: {exc}", where) from exc


def _check_known(
    user: Mapping[str, Any], defaults: Mapping[str, Any], prefix: str, where: str
) -> None:
    for key, value in user.items():
        dotted = f"{prefix}{key}"
        if key not in defaults:
            close = difflib.get_close_matches(key, list(defaults), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(dotted, f"unknown key{hint}", where)
        if isinstance(defaults[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(dotted, f"expected a table, got {value!r}", where)
            if dotted not in _FREE_TABLES:
                _check_known(value, defaults[key], dotted + ".", where)
        elif isinstance(value, dict):
            raise ConfigError(dotted, f"expected a value, not a table {value!r}", where)


def _merge(
    defaults: Mapping[str, Any], user: Mapping[str, Any], prefix: str = ""
) -> dict[str, Any]:
    out = copy.deepcopy(dict(defaults))
    for key, value in user.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and dotted not in _FREE_TABLES:
            out[key] = _merge(out[key], value, dotted + ".")
        else:
            out[key] = copy.deepcopy(value)
    return out


# -- typed access ---------------------------------------------------------------------


class _Table:
    """Typed getters over one table, producing key-naming errors."""

    def __init__(self, data: Mapping[str, Any], prefix: str, where: str) -> None:
        self.data = data
        self.prefix = prefix
        self.where = where

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.prefix}{key}", problem, self.where)

    def table(self, key: str) -> _Table:
        return _Table(self.data[key], f"{self.prefix}{key}.", self.where)

    def boolean(self, key: str) -> bool:
        value = self.data[key]
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def integer(self, key: str, lo: int, hi: int, *, hexa: bool = False) -> int:
        value = self.data[key]
        if isinstance(value, str) and hexa:
            with contextlib.suppress(ValueError):
                value = int(value, 0)
        fmt = (lambda n: f"0x{n:02X}") if hexa else str
        expected = f"expected an integer {fmt(lo)}..{fmt(hi)}"
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"{expected}, got {value!r}")
        if not lo <= value <= hi:
            raise self.error(key, f"{expected}, got {fmt(value)}")
        return value

    def number(self, key: str, lo: float, hi: float, *, lo_open: bool = False) -> float:
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"expected a number, got {value!r}")
        if value < lo or value > hi or (lo_open and value == lo):
            bound = f"> {lo:g}" if lo_open else f">= {lo:g}"
            raise self.error(key, f"expected a number {bound} and <= {hi:g}, got {value!r}")
        return float(value)

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.data[key]
        if value not in choices:
            options = ", ".join(repr(c) for c in choices)
            raise self.error(key, f"expected one of {options}, got {value!r}")
        return str(value)

    def auto_number(self, key: str, lo: float, hi: float) -> float | None:
        return None if self.data[key] == "auto" else self._number_or_auto(key, lo, hi)

    def _number_or_auto(self, key: str, lo: float, hi: float) -> float:
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f'expected "auto" or a number {lo:g}..{hi:g}, got {value!r}')
        if not lo <= value <= hi:
            raise self.error(key, f'expected "auto" or a number {lo:g}..{hi:g}, got {value!r}')
        return float(value)

    def names(self, key: str, *, min_len: int, max_len: int) -> tuple[str, ...]:
        value = self.data[key]
        ok = isinstance(value, list) and all(isinstance(v, str) and v for v in value)
        if not ok or not min_len <= len(value) <= max_len:
            raise self.error(
                key, f"expected a list of {min_len}..{max_len} button names, got {value!r}"
            )
        return tuple(value)

    def path(self, key: str, *, empty_ok: bool = False) -> Path | None:
        value = self.data[key]
        if not isinstance(value, str) or (not value and not empty_ok):
            raise self.error(key, f"expected a path, got {value!r}")
        return Path(value).expanduser() if value else None

    def pin(self, key: str) -> int:
        pin = self.integer(key, 0, 27)
        if pin in RESERVED_PINS:
            raise self.error(key, f"GPIO{pin} is reserved for {RESERVED_PINS[pin]}")
        return pin


# -- building -------------------------------------------------------------------------


def _build(data: dict[str, Any], source: Path | None, where: str) -> Config:
    root = _Table(data, "", where)
    language = root.choice("language", ("vi", "en"))
    buttons = _buttons(root.table("buttons"))
    kiosk = _kiosk(root.table("kiosk"))
    unknown_ops = [n for n in kiosk.operator_buttons if n not in buttons.names()]
    if unknown_ops:
        raise root.error(
            "kiosk.operator_buttons",
            f"no button named {unknown_ops[0]!r} (have {', '.join(buttons.names())})",
        )
    input_settings = _input(root.table("input"))
    if kiosk.operator_long_press_s <= input_settings.long_press_s:
        raise root.error(
            "kiosk.operator_long_press_s",
            f"must be longer than input.long_press_s ({input_settings.long_press_s:g})",
        )
    return Config(
        language="vi" if language == "vi" else "en",
        buttons=buttons,
        display=_display(root.table("display")),
        camera=_camera(root.table("camera")),
        input=input_settings,
        kiosk=kiosk,
        play=_play(root.table("play")),
        storage=_storage(root.table("storage")),
        rules=_rules(data["rules"], where),
        vision=_vision(data["vision"], where),
        source=source,
    )


def _rules(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The ``[rules]`` table, checked by the engine; errors name ``rules.<switch>``."""
    known = [f.name for f in dataclasses.fields(Rules)]
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"rules.{key}", f"unknown switch{hint}", where)
    try:
        Rules.from_json(dict(data))
    except EngineError as exc:
        text = str(exc).removeprefix("rules: ")
        name, sep, problem = text.partition(": ")
        if sep and name in known:
            raise ConfigError(f"rules.{name}", problem, where) from None
        raise ConfigError("rules", text, where) from None
    return dict(data)


_VISION_KEY = re.compile(r"\[(\w+)\](?: (\w+))?")


def _vision(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The ``[vision]`` table, checked by vision's own loader; errors name ``vision.<stage>.<key>``.

    Hand-given corners are also checked for being a usable quadrilateral: a
    pasted row of zeros or a NaN would otherwise replace the board's outline.
    """
    from vision.config import config_from_dict
    from vision.errors import VisionError

    try:
        settings = config_from_dict({"vision": dict(data)} if data else {})
    except VisionError as exc:
        text = str(exc).removeprefix("vision config: ")
        found = _VISION_KEY.search(text)
        key = "vision"
        if found:
            key += "." + ".".join(part for part in found.groups() if part)
        problem = _VISION_KEY.sub("", text, count=1).strip() or text
        if problem == "unknown section":
            problem = (
                "unknown key (vision has one table per stage: locate, count, gate, change, lens)"
            )
        raise ConfigError(key, problem, where) from None
    models = [f.name for f in dataclasses.fields(settings.count) if f.name.endswith("model")]
    for key in models:  # every network file counting reads
        name = getattr(settings.count, key)
        model = Path(name).expanduser()
        if name and not model.is_file():  # ("" turns an optional classifier off)
            raise ConfigError(f"vision.count.{key}", f"no such file: {model}", where)
    corners = settings.locate.manual_corners
    if corners is not None:
        bad = corners_problem(corners)
        if bad:
            raise ConfigError("vision.locate.manual_corners", bad, where)
    return dict(data)


def as_corners(pairs: Any) -> tuple[tuple[float, float], ...]:
    """Corners as the app keeps them (the config's ``manual_corners``, marked ones): a
    tuple of (x, y) floats, from any sequence of pairs of numbers."""
    return tuple((float(x), float(y)) for x, y in pairs)


def corners_problem(corners: Any) -> str | None:
    """Why four hand-given corners cannot outline a board, or None when they can.

    They must be finite numbers and enclose a convex quadrilateral of some
    size; the order (any rotation or mirror of SW, SE, NE, NW) does not matter.
    """
    try:
        pts = [(float(x), float(y)) for x, y in corners]
    except (TypeError, ValueError):
        return "expected four [x, y] pairs"
    if len(pts) != 4:
        return f"expected four [x, y] pairs, got {len(pts)}"
    if not all(math.isfinite(c) for p in pts for c in p):
        return "every corner must be a finite number (no nan or inf)"
    crosses = []
    for i in range(4):
        (ax, ay), (bx, by), (cx, cy) = pts[i], pts[(i + 1) % 4], pts[(i + 2) % 4]
        crosses.append((bx - ax) * (cy - by) - (by - ay) * (cx - bx))
    area = (
        abs(
            sum(pts[i][0] * pts[(i + 1) % 4][1] - pts[(i + 1) % 4][0] * pts[i][1] for i in range(4))
        )
        / 2
    )
    if area < MIN_CORNER_AREA:
        return f"the four corners enclose {area:.0f} square pixels: not a board"
    if not (all(c > 0 for c in crosses) or all(c < 0 for c in crosses)):
        return "the four corners must go round the board in order (a convex outline)"
    return None


#: Smallest area, in square pixels, four hand-given corners may enclose.
MIN_CORNER_AREA = 100.0


def _buttons(t: _Table) -> ButtonSettings:
    layout = t.choice("layout", ("buttons", "encoder"))
    pins_table = t.table("pins")
    enc_table = t.table("encoder")
    encoder = EncoderPins(
        a=enc_table.pin("a"),
        b=enc_table.pin("b"),
        switch=None if enc_table.data["switch"] == "none" else enc_table.pin("switch"),
    )
    from_encoder = {"left", "right"} | ({"ok"} if encoder.switch is not None else set())
    pins: dict[str, int] = {}
    for name in pins_table.data:
        if layout == "encoder" and name in from_encoder:
            continue
        pins[name] = pins_table.pin(name)
    used: dict[int, str] = {}
    claims = [(f"buttons.pins.{n}", p) for n, p in pins.items()]
    if layout == "encoder":
        claims += [("buttons.encoder.a", encoder.a), ("buttons.encoder.b", encoder.b)]
        if encoder.switch is not None:
            claims.append(("buttons.encoder.switch", encoder.switch))
    for key, pin in claims:
        if pin in used:
            raise ConfigError(key, f"GPIO{pin} is already used by {used[pin]}", t.where)
        used[pin] = key
    if layout == "buttons" and not pins:
        raise t.error("pins", "expected at least one button")
    bounce = t.number("bounce_s", 0.0, 1.0)
    chip = None if t.data["chip"] == "auto" else t.integer("chip", 0, 15)
    return _settings(
        t,
        "",
        lambda: ButtonSettings(
            layout="encoder" if layout == "encoder" else "buttons",
            pins=pins,
            encoder=encoder,
            pull_up=t.boolean("pull_up"),
            bounce_s=bounce or None,
            chip=chip,
        ),
    )


def _display(t: _Table) -> DisplaySettings:
    driver = t.choice("driver", ("ssd1306", "sh1106"))
    return _settings(
        t,
        "",
        lambda: DisplaySettings(
            driver="sh1106" if driver == "sh1106" else "ssd1306",
            i2c_port=t.integer("i2c_port", 0, 31),
            i2c_address=t.integer("i2c_address", 0x03, 0x77, hexa=True),
            rotate=t.integer("rotate", 0, 3),
            sh1106_column_offset=t.integer("sh1106_column_offset", 0, 4),
            contrast=t.integer("contrast", 0, 255),
            required=t.boolean("required"),
        ),
    )


def _camera(t: _Table) -> CameraSettings:
    kind = t.choice("kind", ("picamera2", "opencv", "replay", "generated"))
    device = t.data["device"]
    if isinstance(device, bool) or not isinstance(device, int | str) or device == "":
        raise t.error("device", f"expected a device path or index, got {device!r}")
    if isinstance(device, int) and not 0 <= device <= 63:
        raise t.error("device", f"expected a device path or index 0..63, got {device!r}")
    exposure = t.auto_number("exposure_us", 1, 10_000_000)
    gains_raw = t.data["colour_gains"]
    gains: tuple[float, float] | None = None
    if gains_raw != "auto":
        ok = isinstance(gains_raw, list) and len(gains_raw) == 2
        ok = ok and all(isinstance(g, int | float) and not isinstance(g, bool) for g in gains_raw)
        if not ok or min(gains_raw) <= 0:
            raise t.error("colour_gains", f'expected "auto" or [red, blue] > 0, got {gains_raw!r}')
        gains = (float(gains_raw[0]), float(gains_raw[1]))
    if isinstance(device, str) and device.isdigit():
        device = int(device)
    flicker = t.integer("flicker_period_us", 0, 100_000)
    if 0 < flicker < 1000:
        raise t.error("flicker_period_us", f"expected 0 (off) or 1000..100000, got {flicker}")
    replay_dir = t.path("replay_dir", empty_ok=True)
    if kind == "replay" and replay_dir is None:
        raise t.error("replay_dir", 'required when camera.kind is "replay"')
    return _settings(
        t,
        "",
        lambda: CameraSettings(
            kind=kind,  # type: ignore[arg-type]  # checked by choice()
            device=device,
            width=t.integer("width", 16, 8192),
            height=t.integer("height", 16, 8192),
            match_sensor=t.boolean("match_sensor"),
            settle_frames=t.integer("settle_frames", 0, 1000),
            timeout_s=t.number("timeout_s", 0.0, 600.0, lo_open=True),
            exposure_us=None if exposure is None else int(exposure),
            analogue_gain=t.auto_number("analogue_gain", 1.0, 64.0),
            colour_gains=gains,
            flicker_period_us=flicker or None,
            focus_m=t.auto_number("focus_m", 0.1, 100.0),
            replay_dir=replay_dir,
            loop=t.boolean("loop"),
            hold=t.integer("hold", 1, 1000),
        ),
    )


def _input(t: _Table) -> InputSettings:
    return _settings(
        t,
        "",
        lambda: InputSettings(
            debounce_s=t.number("debounce_s", 0.0, 0.2),
            long_press_s=t.number("long_press_s", 0.1, 10.0),
            chord_window_s=t.number("chord_window_s", 0.0, 2.0),
            repeat_buttons=frozenset(t.names("repeat_buttons", min_len=0, max_len=16)),
            repeat_delay_s=t.number("repeat_delay_s", 0.1, 10.0),
            repeat_interval_s=t.number("repeat_interval_s", 0.02, 10.0),
        ),
    )


def _kiosk(t: _Table) -> KioskConfig:
    return KioskConfig(
        enabled=t.boolean("enabled"),
        idle_reset_s=t.number("idle_reset_s", 1.0, 86_400.0),
        attract=t.boolean("attract"),
        dim_after_s=t.number("dim_after_s", 0.0, 86_400.0),
        dim_contrast=t.integer("dim_contrast", 0, 255),
        blank_after_s=t.number("blank_after_s", 0.0, 864_000.0),
        operator_buttons=t.names("operator_buttons", min_len=1, max_len=2),
        operator_long_press_s=t.number("operator_long_press_s", 1.0, 60.0),
    )


def _play(t: _Table) -> PlayConfig:
    return PlayConfig(
        hints=t.boolean("hints"),
        opponent=t.choice("opponent", ("off", "easy", "medium", "hard")),
        companion_side=t.integer("companion_side", 0, 1),
    )


def _storage(t: _Table) -> StorageConfig:
    state = t.path("state_dir")
    journal = t.path("journal_dir")
    assert state is not None and journal is not None  # empty_ok=False never returns None
    return StorageConfig(state_dir=state, journal_dir=journal)


def _settings(t: _Table, key: str, build: Callable[[], _T]) -> _T:
    """Run a settings constructor, turning its ValueError into a key-naming ConfigError.

    The device/input dataclasses name the field first (``"pins.ok: ..."``).
    """
    try:
        result = build()
    except ConfigError:
        raise
    except ValueError as exc:
        field_name, _, problem = str(exc).partition(": ")
        raise t.error(field_name if problem else key.rstrip("."), problem or str(exc)) from exc
    return result
