"""Plain values the hardware factory takes; companion's config builds these.

They validate themselves with ``ValueError`` so a bad value fails where it is
built, whoever builds it (config file, test, selftest CLI).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal

ButtonLayout = Literal["buttons", "encoder"]
#: Where button edges come from: GPIO pins, or the keyboard of the OLED window (laptop mode).
ButtonKind = Literal["gpio", "keys"]
DisplayDriver = Literal["ssd1306", "sh1106"]
#: What shows the screens: the I2C panel, a window on a desktop (luma.emulator on pygame),
#: PNG + GIF files (luma.emulator's capture devices), or nothing.
DisplayKind = Literal["oled", "window", "capture", "none"]
CameraKind = Literal["picamera2", "opencv", "replay", "generated"]

#: BCM numbers the app must never claim: the HAT ID EEPROM bus (the firmware probes
#: it at boot; a button there can stop a HAT or the extender being recognised),
#: I2C1 (OLED) and the UART.
RESERVED_PINS: Mapping[int, str] = MappingProxyType(
    {
        0: "ID_SD (HAT EEPROM)",
        1: "ID_SC (HAT EEPROM)",
        2: "I2C1 SDA (OLED)",
        3: "I2C1 SCL (OLED)",
        14: "UART TX",
        15: "UART RX",
    }
)

DEFAULT_BUTTON_PINS: Mapping[str, int] = MappingProxyType(
    {"left": 5, "right": 6, "ok": 13, "back": 19}
)
#: The buttons the keyboard stands in for (``ButtonSettings.kind = "keys"``).
KEY_BUTTONS: tuple[str, ...] = ("left", "right", "ok", "back")


def _check_pin(what: str, pin: int) -> None:
    if isinstance(pin, bool) or not isinstance(pin, int) or not 0 <= pin <= 27:
        raise ValueError(f"{what}: expected a BCM GPIO number 0..27, got {pin!r}")
    if pin in RESERVED_PINS:
        raise ValueError(f"{what}: GPIO{pin} is reserved for {RESERVED_PINS[pin]}")


@dataclass(frozen=True)
class EncoderPins:
    """A quadrature encoder: A/B pins, optional push switch; CW steps report as ``right``."""

    a: int = 20
    b: int = 21
    switch: int | None = 26

    def __post_init__(self) -> None:
        _check_pin("encoder.a", self.a)
        _check_pin("encoder.b", self.b)
        if self.switch is not None:
            _check_pin("encoder.switch", self.switch)


@dataclass(frozen=True)
class ButtonSettings:
    """Which GPIOs are buttons. ``layout="encoder"`` adds an encoder (left/right + ok).

    With the encoder layout, ``pins`` holds the extra plain buttons (e.g. ``back``).
    Buttons are wired to GND and use the internal pull-up.
    """

    layout: ButtonLayout = "buttons"
    pins: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_BUTTON_PINS))
    encoder: EncoderPins = field(default_factory=EncoderPins)
    pull_up: bool = True
    #: Hardware glitch filter handed to gpiozero (lgpio debounce); None = off.
    bounce_s: float | None = 0.01
    #: gpiochip for lgpio; None lets gpiozero pick (Pi 5 aware since 2.0.1.post3).
    chip: int | None = None
    #: "keys": arrow keys, Enter and Backspace of the OLED window (pins are not claimed).
    kind: ButtonKind = "gpio"

    def __post_init__(self) -> None:
        if self.kind not in ("gpio", "keys"):
            raise ValueError(f"kind: expected 'gpio' or 'keys', got {self.kind!r}")
        if self.layout not in ("buttons", "encoder"):
            raise ValueError(f"layout: expected 'buttons' or 'encoder', got {self.layout!r}")
        object.__setattr__(self, "pins", MappingProxyType(dict(self.pins)))
        for name, pin in self.pins.items():
            _check_pin(f"pins.{name}", pin)
        if self.bounce_s is not None and not 0 <= self.bounce_s <= 1:
            raise ValueError(f"bounce_s: expected 0..1 seconds, got {self.bounce_s!r}")
        if self.layout == "encoder":
            taken = {"left", "right"} | ({"ok"} if self.encoder.switch is not None else set())
            clash = sorted(taken & set(self.pins))
            if clash:
                raise ValueError(f"pins.{clash[0]}: already provided by the encoder")
        used = self.pin_numbers()
        dupes = sorted({p for p in used if used.count(p) > 1})
        if dupes:
            raise ValueError(f"pins: GPIO{dupes[0]} is used twice")

    def pin_numbers(self) -> list[int]:
        """Every BCM pin this layout claims, in claim order."""
        pins = list(self.pins.values())
        if self.layout == "encoder":
            enc = self.encoder
            pins += [enc.a, enc.b] + ([enc.switch] if enc.switch is not None else [])
        return pins

    def names(self) -> tuple[str, ...]:
        """Logical names the buttons report."""
        if self.kind == "keys":
            return KEY_BUTTONS
        names = list(self.pins)
        if self.layout == "encoder":
            names += ["left", "right"] + (["ok"] if self.encoder.switch is not None else [])
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class DisplaySettings:
    """An SSD1306/SH1106 panel on I2C; see hardware notes for offsets and addresses."""

    driver: DisplayDriver = "ssd1306"
    i2c_port: int = 1
    i2c_address: int = 0x3C
    #: Quarter turns clockwise: 0 or 2 (upside-down mount). The screens are drawn
    #: landscape, 128x64; luma wants a 64x128 image for 1 and 3 and would assert.
    rotate: int = 0
    #: SH1106 RAM is 132 columns wide: usually 2, some modules need 0.
    sh1106_column_offset: int = 2
    contrast: int = 0xCF
    #: False: a missing panel is retried every ``retry_s`` and the app runs on meanwhile.
    required: bool = False
    #: Seconds between attempts to open a missing or failed panel.
    retry_s: float = 5.0
    #: Seconds between re-sending the controller's init sequence (0 = never). Static
    #: from a visitor can reset an SSD1306/SH1106 without any I2C error: the panel
    #: goes dark while every write still succeeds.
    reinit_s: float = 60.0
    #: "window"/"capture": the panel emulated by luma.emulator (needs the laptop extra).
    kind: DisplayKind = "oled"
    #: Window and capture pixels per panel pixel (each drawn with the panel's dark gap).
    scale: int = 4
    #: Folder for kind="capture": oled_0001.png ... and oled.gif.
    capture_dir: Path | None = None
    #: Seconds each frame stays up in the captured GIF.
    gif_frame_s: float = 1.2

    def __post_init__(self) -> None:
        if self.kind not in ("oled", "window", "capture", "none"):
            raise ValueError(f"kind: expected oled, window, capture or none, got {self.kind!r}")
        if not 1 <= self.scale <= 12:
            raise ValueError(f"scale: expected 1..12, got {self.scale!r}")
        if self.kind == "capture" and self.capture_dir is None:
            raise ValueError("capture_dir: required when kind is 'capture'")
        if not 0.01 <= self.gif_frame_s <= 60:
            raise ValueError(f"gif_frame_s: expected 0.01..60 seconds, got {self.gif_frame_s!r}")
        if self.driver not in ("ssd1306", "sh1106"):
            raise ValueError(f"driver: expected 'ssd1306' or 'sh1106', got {self.driver!r}")
        if not 0 <= self.i2c_port <= 31:
            raise ValueError(f"i2c_port: expected 0..31, got {self.i2c_port!r}")
        if not 0x03 <= self.i2c_address <= 0x77:
            raise ValueError(f"i2c_address: expected 0x03..0x77, got {self.i2c_address!r}")
        if self.rotate in (1, 3):
            raise ValueError(
                f"rotate: {self.rotate} would turn the panel portrait (64x128), but the "
                "screens are drawn 128x64: use 0, or 2 for an upside-down mount"
            )
        if self.rotate not in (0, 2):
            raise ValueError(f"rotate: expected 0 or 2, got {self.rotate!r}")
        if not 0 <= self.sh1106_column_offset <= 4:
            raise ValueError(
                f"sh1106_column_offset: expected 0..4, got {self.sh1106_column_offset!r}"
            )
        if not 0 <= self.contrast <= 255:
            raise ValueError(f"contrast: expected 0..255, got {self.contrast!r}")
        if not 0.1 <= self.retry_s <= 3600:
            raise ValueError(f"retry_s: expected 0.1..3600 seconds, got {self.retry_s!r}")
        if self.reinit_s != 0 and not 1 <= self.reinit_s <= 86400:
            raise ValueError(
                f"reinit_s: expected 0 (off) or 1..86400 seconds, got {self.reinit_s!r}"
            )

    @property
    def bus_path(self) -> str:
        return f"/dev/i2c-{self.i2c_port}"


@dataclass(frozen=True)
class CameraSettings:
    """Where frames come from and how a live camera is locked.

    ``exposure_us``/``analogue_gain``/``colour_gains`` None means: let AE/AWB settle
    for ``settle_frames`` frames, then lock whatever they chose.
    """

    kind: CameraKind = "picamera2"
    #: OpenCV source: device path ("/dev/v4l/by-id/...") or index.
    device: str | int = 0
    #: Camera Module 3 full resolution (16:9). With ``match_sensor`` a CSI camera
    #: keeps the width and takes its height from the sensor's aspect ratio, capped
    #: at the sensor size, so the ISP never crops the field of view (a 4:3 size on
    #: the 16:9 imx708 would turn 66 degrees into about 52).
    width: int = 4608
    height: int = 2592
    match_sensor: bool = True
    settle_frames: int = 30
    #: A grab waiting longer than this raises CameraStoppedError.
    timeout_s: float = 5.0
    exposure_us: int | None = None
    analogue_gain: float | None = None
    colour_gains: tuple[float, float] | None = None
    #: Settled exposures are rounded to whole periods of mains flicker (50 Hz mains:
    #: 10000 us); None = off.
    flicker_period_us: int | None = 10000
    #: Lens-to-board distance for a fixed focus (Camera Module 3: LensPosition is
    #: 1/focus_m dioptres). None: one autofocus sweep when the exposure is locked,
    #: then the lens is held there (AfMode manual) so it cannot hunt at hands.
    focus_m: float | None = None
    #: Folder of images for kind="replay" (sorted by file name).
    replay_dir: Path | None = None
    loop: bool = False
    #: Replay: each image stands for this many frames in a row, as a camera over a still
    #: scene sees it (a tally reads a scene from two frames or more).
    hold: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("picamera2", "opencv", "replay", "generated"):
            raise ValueError(
                f"kind: expected picamera2, opencv, replay or generated, got {self.kind!r}"
            )
        if not (16 <= self.width <= 8192 and 16 <= self.height <= 8192):
            raise ValueError(f"size: expected 16..8192 pixels, got {self.width}x{self.height}")
        if self.settle_frames < 0:
            raise ValueError(f"settle_frames: expected >= 0, got {self.settle_frames!r}")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s: expected > 0, got {self.timeout_s!r}")
        if self.exposure_us is not None and self.exposure_us <= 0:
            raise ValueError(f"exposure_us: expected > 0, got {self.exposure_us!r}")
        if self.analogue_gain is not None and self.analogue_gain < 1.0:
            raise ValueError(f"analogue_gain: expected >= 1.0, got {self.analogue_gain!r}")
        if self.colour_gains is not None and (
            len(self.colour_gains) != 2 or min(self.colour_gains) <= 0
        ):
            raise ValueError(
                f"colour_gains: expected two positive numbers, got {self.colour_gains!r}"
            )
        if self.flicker_period_us is not None and not 1000 <= self.flicker_period_us <= 100000:
            raise ValueError(
                f"flicker_period_us: expected 1000..100000, got {self.flicker_period_us!r}"
            )
        if self.focus_m is not None and not 0.1 <= self.focus_m <= 100:
            raise ValueError(f"focus_m: expected 0.1..100 metres, got {self.focus_m!r}")
        if self.kind == "replay" and self.replay_dir is None:
            raise ValueError("replay_dir: required when kind is 'replay'")
        if not 1 <= self.hold <= 1000:
            raise ValueError(f"hold: expected 1..1000 frames, got {self.hold!r}")


@dataclass(frozen=True)
class HardwareSettings:
    """Everything :func:`device.factory.make_hardware` needs."""

    buttons: ButtonSettings = field(default_factory=ButtonSettings)
    display: DisplaySettings = field(default_factory=DisplaySettings)
    camera: CameraSettings = field(default_factory=CameraSettings)

    def __post_init__(self) -> None:
        if self.buttons.kind == "keys" and self.display.kind != "window":
            raise ValueError(
                "buttons.kind: the keys are read from the OLED window: "
                "set display.kind = 'window' too (oanquan run --display window --keys)"
            )


#: A webcam's size for ``--camera usb:N``: most offer 1920x1080 MJPG; the driver picks
#: the nearest mode it has.
USB_CAMERA_SIZE = (1920, 1080)


def _camera_from_spec(camera: CameraSettings, spec: str) -> CameraSettings:
    kind, _, source = spec.partition(":")
    if kind == "usb":
        if not source:
            raise ValueError(f"--camera: expected usb:INDEX or usb:/dev/PATH, got {spec!r}")
        device: str | int = int(source) if source.isdigit() else source
        if isinstance(device, int) and not 0 <= device <= 63:
            raise ValueError(f"--camera: expected a camera index 0..63, got {spec!r}")
        width, height = USB_CAMERA_SIZE
        return replace(
            camera, kind="opencv", device=device, width=width, height=height, match_sensor=False
        )
    if kind == "replay":
        if not source:
            raise ValueError(f"--camera: expected replay:FOLDER, got {spec!r}")
        return replace(camera, kind="replay", replay_dir=Path(source))
    if kind == "picamera2" and not source:
        return replace(camera, kind="picamera2")
    raise ValueError(
        f"--camera: expected usb:INDEX, usb:/dev/PATH, replay:FOLDER or picamera2, got {spec!r}"
    )


def _display_from_spec(display: DisplaySettings, spec: str) -> DisplaySettings:
    kind, _, arg = spec.partition(":")
    if kind in ("oled", "window", "none") and not arg:
        return replace(display, kind=kind)  # type: ignore[arg-type]  # checked just above
    if kind == "capture" and arg:
        return replace(display, kind="capture", capture_dir=Path(arg))
    raise ValueError(f"--display: expected oled, window, none or capture:FOLDER, got {spec!r}")


def laptop_settings(
    settings: HardwareSettings,
    *,
    camera: str | None = None,
    display: str | None = None,
    keys: bool = False,
    backend: str = "real",
) -> HardwareSettings:
    """The settings with command-line overrides for trying the referee without a Pi.

    ``camera``: ``usb:N`` (``cv2.VideoCapture(N)``, V4L2 on Linux), ``usb:/dev/...``,
    ``replay:FOLDER`` or ``picamera2``; ``display``: ``window`` (the OLED in a desktop
    window), ``capture:FOLDER``, ``oled`` or ``none``; ``keys``: the keyboard as the
    buttons (needs the window). None/False keeps what the config says. ``backend``
    is the factory's: a fake one never opens a live camera, so asking it for one is
    refused rather than ignored.

    Raises:
        ValueError: one line naming the option and what it expects.
    """
    cam = settings.camera if camera is None else _camera_from_spec(settings.camera, camera)
    if camera is not None and backend != "real" and cam.kind in ("opencv", "picamera2"):
        raise ValueError(
            f"--camera {camera}: the {backend} backend never opens a live camera: "
            "leave out --hardware fake, or use replay:FOLDER"
        )
    disp = settings.display if display is None else _display_from_spec(settings.display, display)
    buttons = replace(settings.buttons, kind="keys") if keys else settings.buttons
    if keys and disp.kind != "window":
        raise ValueError("--keys: the keys are read from the OLED window: add --display window")
    return HardwareSettings(buttons, disp, cam)
