"""Config: embedded defaults, one file on top, typed values, one-line errors naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from companion.appliance.config import (
    ENV_VAR,
    Config,
    ConfigError,
    default_config_text,
    find_config_path,
    load_config,
    parse_config,
)
from device.settings import ButtonSettings, CameraSettings, DisplaySettings, HardwareSettings

REPO = Path(__file__).resolve().parents[2]


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_the_shipped_defaults_equal_the_dataclass_defaults() -> None:
    assert parse_config("") == Config()
    assert "#" in default_config_text()  # the defaults are the documentation


def test_the_installed_example_config_loads() -> None:
    """systemd/config.toml is what the installer copies to /etc/oanquan/config.toml."""
    config = parse_config((REPO / "systemd" / "config.toml").read_text())
    assert dict(config.buttons.pins) == {"left": 5, "right": 6, "ok": 13, "back": 19}
    assert config.display.i2c_address == 0x3C


def test_a_file_overrides_only_what_it_names(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text(
        'language = "en"\n'
        "[display]\n"
        'driver = "sh1106"\n'
        "i2c_address = 0x3D\n"
        "sh1106_column_offset = 0\n"
        "rotate = 2\n"
        "[camera]\n"
        'kind = "opencv"\n'
        'device = "/dev/v4l/by-id/usb-cam-video-index0"\n'
        "exposure_us = 20000\n"
        "colour_gains = [1.8, 1.5]\n"
        "[kiosk]\n"
        "idle_reset_s = 120\n"
    )
    config = load_config(path, env={})
    assert config.source == path
    assert config.language == "en"
    assert config.display == DisplaySettings(
        driver="sh1106", i2c_address=0x3D, sh1106_column_offset=0, rotate=2
    )
    assert config.camera.kind == "opencv" and config.camera.exposure_us == 20000
    assert config.camera.colour_gains == (1.8, 1.5) and config.camera.analogue_gain is None
    assert config.kiosk.idle_reset_s == 120.0 and config.kiosk.attract is True
    assert config.buttons == ButtonSettings()


def test_hardware_settings_for_the_factory() -> None:
    config = parse_config('[camera]\nkind = "replay"\nreplay_dir = "frames"\n')
    hw = config.hardware
    assert isinstance(hw, HardwareSettings)
    assert hw.camera == CameraSettings(kind="replay", replay_dir=Path("frames"))


def test_config_values_are_frozen() -> None:
    config = parse_config("")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.language = "en"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.buttons.pins["ok"] = 2  # type: ignore[index]


def test_rules_and_vision_pass_through_as_plain_dicts() -> None:
    config = parse_config(
        '[rules]\nquan_non_min = 0\nend_when = "big_captured"\n'
        "[vision]\nlocate = { work_width = 400 }\n"
    )
    assert config.rules == {"quan_non_min": 0, "end_when": "big_captured"}
    assert config.vision == {"locate": {"work_width": 400}}
    assert type(config.rules) is dict and type(config.vision) is dict


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[rules]\nborrow_when_empty = true\n", "rules.borrow_when_empty"),
        ("[rules]\nquan_non_min = 99\n", "rules.quan_non_min"),
        ('[rules]\ndirection = "sideways"\n', "rules.direction"),
        ("[vision]\nfoo = 1\n", "vision.foo"),
        ("[camera]\ncolour_gains = { a = 1 }\n", "camera.colour_gains"),  # found by bench/fuzz.py
        ("[kiosk]\noperator_long_press_s = { a = 1 }\n", "kiosk.operator_long_press_s"),
        ("[vision.locate]\nfoo = 1\n", "vision.locate.foo"),
        ('[vision.locate]\nwork_width = "wide"\n', "vision.locate.work_width"),
        ("[vision.locate]\nmanual_corners = [[1, 2], [3, 4]]\n", "vision.locate.manual_corners"),
        (
            "[vision.locate]\nmanual_corners = [[0, 0], [0, 0], [0, 0], [0, 0]]\n",
            "vision.locate.manual_corners",
        ),
        (
            "[vision.locate]\nmanual_corners = [[nan, 0], [100, 0], [100, 50], [0, 50]]\n",
            "vision.locate.manual_corners",
        ),
        (
            "[vision.locate]\nmanual_corners = [[0, 0], [100, 50], [100, 0], [0, 50]]\n",
            "vision.locate.manual_corners",
        ),
    ],
)
def test_rules_and_vision_are_checked_when_the_file_is_read(text: str, key: str) -> None:
    """Both tables used to pass unchecked and fail after the hardware was opened."""
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert caught.value.key == key
    assert str(caught.value).startswith(f"config: {key}: ")
    assert "\n" not in str(caught.value)


def test_every_commented_example_in_the_defaults_is_valid() -> None:
    """The [rules] example once named a switch the engine does not have."""
    text = default_config_text()
    examples = [
        line.removeprefix("#").strip()
        for line in text.splitlines()
        if line.startswith("#   ") and ("=" in line or line.strip("# ").startswith("["))
    ]
    assert any(line.startswith("[rules]") for line in examples)
    config = parse_config("\n".join(examples) + "\n")
    assert config.rules == {"quan_non_min": 0, "end_when": "big_captured"}
    assert config.vision["locate"]["manual_corners"][0] == [412.0, 655.5]


def test_the_file_calibrate_writes_is_a_config_file() -> None:
    from companion.commands.calibrate import calibration_toml

    corners = np.array([[200.0, 650.0], [1000.0, 640.0], [900.0, 300.0], [250.0, 310.0]])
    config = parse_config(calibration_toml(corners, "frame.jpg"))
    assert config.vision == {
        "locate": {
            "manual_corners": [[200.0, 650.0], [1000.0, 640.0], [900.0, 300.0], [250.0, 310.0]]
        }
    }


def test_a_pins_table_replaces_the_default_one() -> None:
    config = parse_config(
        "[buttons.pins]\nup = 5\ndown = 6\nok = 13\nback = 19\n[input]\nrepeat_buttons = []\n"
    )
    assert dict(config.buttons.pins) == {"up": 5, "down": 6, "ok": 13, "back": 19}


def test_encoder_layout_takes_left_right_ok_from_the_encoder() -> None:
    config = parse_config('[buttons]\nlayout = "encoder"\n[buttons.encoder]\na = 17\nb = 27\n')
    assert dict(config.buttons.pins) == {"back": 19}
    assert (config.buttons.encoder.a, config.buttons.encoder.b) == (17, 27)
    assert set(config.buttons.names()) == {"left", "right", "ok", "back"}
    no_switch = parse_config('[buttons]\nlayout = "encoder"\n[buttons.encoder]\nswitch = "none"\n')
    assert no_switch.buttons.encoder.switch is None and no_switch.buttons.pins["ok"] == 13


def test_hex_strings_are_accepted_for_the_address() -> None:
    assert parse_config('[display]\ni2c_address = "0x3d"\n').display.i2c_address == 0x3D


def test_operator_hold_becomes_an_input_hold_mark() -> None:
    config = parse_config("[kiosk]\noperator_long_press_s = 4.0\n")
    assert config.input_settings().hold_marks_s == (4.0,)
    assert config.input_settings().long_press_s == config.input.long_press_s


# -- errors ---------------------------------------------------------------------------


def test_wrong_type_names_the_key_in_one_line() -> None:
    assert (
        error_of('[display]\ni2c_address = "abc"\n')
        == "config: display.i2c_address: expected an integer 0x03..0x77, got 'abc'"
    )
    assert error_of("[display]\ni2c_address = 0x78\n") == (
        "config: display.i2c_address: expected an integer 0x03..0x77, got 0x78"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[display]\nrotate = true\n",
            "config: display.rotate: expected an integer 0..3, got True",
        ),
        ('[buttons]\npull_up = "yes"\n', "config: buttons.pull_up: expected true or false"),
        ('language = "fr"\n', "config: language: expected one of 'vi', 'en', got 'fr'"),
        ("[buttons.pins]\nok = 3\n", "config: buttons.pins.ok: GPIO3 is reserved for I2C1 SCL"),
        ('[buttons.pins]\nok = "x"\n', "config: buttons.pins.ok: expected an integer 0..27"),
        (
            "[buttons.pins]\nok = 13\nback = 13\n",
            "config: buttons.pins.back: GPIO13 is already used by buttons.pins.ok",
        ),
        ("[buttons.pins]\n", "config: buttons.pins: expected at least one button"),
        ("[camera]\ntimeout_s = 0\n", "config: camera.timeout_s: expected a number > 0"),
        ('[camera]\nexposure_us = "long"\n', 'config: camera.exposure_us: expected "auto" or'),
        ("[camera]\ncolour_gains = [1]\n", "config: camera.colour_gains: expected"),
        ('[camera]\nkind = "replay"\n', "config: camera.replay_dir: required"),
        ("[camera]\ndevice = true\n", "config: camera.device: expected a device path"),
        ("[camera]\nhold = 0\n", "config: camera.hold: expected an integer 1..1000, got 0"),
        ("[input]\ndebounce_s = 0.5\n", "config: input.debounce_s: expected a number"),
        ("[input]\nlong_press_s = 0.2\n", "config: input.chord_window_s:"),
        ('[input]\nrepeat_buttons = "left"\n', "config: input.repeat_buttons: expected a list"),
        (
            '[kiosk]\noperator_buttons = ["menu"]\n',
            "config: kiosk.operator_buttons: no button named 'menu'",
        ),
        (
            "[kiosk]\noperator_long_press_s = 1.0\n[input]\nlong_press_s = 1.5\n",
            "config: kiosk.operator_long_press_s: must be longer than input.long_press_s",
        ),
        ('[storage]\nstate_dir = ""\n', "config: storage.state_dir: expected a path"),
        ("display = 3\n", "config: display: expected a table, got 3"),
    ],
)
def test_bad_values(text: str, expected: str) -> None:
    assert error_of(text).startswith(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[display]\nadress = 0x3C\n",
            "config: display.adress: unknown key (did you mean 'i2c_address'?)",
        ),
        ("langauge = 'vi'\n", "config: langauge: unknown key (did you mean 'language'?)"),
        ("[screen]\nx = 1\n", "config: screen: unknown key"),
        ("[buttons.encoder]\nc = 4\n", "config: buttons.encoder.c: unknown key"),
    ],
)
def test_unknown_keys_are_errors(text: str, expected: str) -> None:
    assert error_of(text).startswith(expected)


def test_corrupt_toml_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[display]\ndriver = \n")
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    message = str(info.value)
    assert message.startswith(f"config: {path}: invalid TOML:") and "line 2" in message
    assert "\n" not in message and info.value.source == str(path)


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"language = '\xff'\n")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(path, env={})


# -- finding the file -----------------------------------------------------------------


def test_cli_beats_env_beats_system_file(tmp_path: Path) -> None:
    cli, env_file, system = (tmp_path / n for n in ("cli.toml", "env.toml", "system.toml"))
    for path in (cli, env_file, system):
        path.write_text("")
    env = {ENV_VAR: str(env_file)}
    assert find_config_path(cli, env, system) == cli
    assert find_config_path(None, env, system) == env_file
    assert find_config_path(None, {}, system) == system
    assert find_config_path(None, {ENV_VAR: ""}, system) == system
    assert find_config_path(None, {}, tmp_path / "absent.toml") is None


def test_an_explicit_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found \\(given by --config\\)"):
        find_config_path(tmp_path / "nope.toml", {}, tmp_path / "x")
    with pytest.raises(ConfigError, match=f"given by {ENV_VAR}"):
        find_config_path(None, {ENV_VAR: str(tmp_path / "nope.toml")}, tmp_path / "x")


def test_no_file_anywhere_means_defaults(tmp_path: Path) -> None:
    config = load_config(None, env={}, system_path=tmp_path / "absent.toml")
    assert config == Config()


def test_the_env_var_is_read_when_no_cli_path(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('language = "en"\n')
    config = load_config(None, env={ENV_VAR: str(path)}, system_path=tmp_path / "absent")
    assert config.language == "en" and config.source == path
