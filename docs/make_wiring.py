"""Draw docs/wiring.png (the 40-pin header, OLED, buttons) and docs/mounting.png.

Generated rather than drawn by hand so the picture cannot drift from the
wiring table: the pins come from :data:`WIRES`, which a test compares with
``hardware.md``, the default button pins in ``device.settings`` and the
BCM-to-physical map that ``oanquan selftest`` prints. The mounting drawing
takes its heights and cable lengths from :data:`LAYOUT`, the numbers
hardware.md's parts list quotes.

    python docs/make_wiring.py [WIRING.png [MOUNTING.png]]
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

#: Physical pin -> function, 40-pin header of every Pi since the B+ (Pi 4, Pi 5).
HEADER: dict[int, str] = {
    1: "3V3", 2: "5V", 3: "GPIO2 SDA", 4: "5V", 5: "GPIO3 SCL", 6: "GND",
    7: "GPIO4", 8: "GPIO14 TXD", 9: "GND", 10: "GPIO15 RXD", 11: "GPIO17", 12: "GPIO18",
    13: "GPIO27", 14: "GND", 15: "GPIO22", 16: "GPIO23", 17: "3V3", 18: "GPIO24",
    19: "GPIO10", 20: "GND", 21: "GPIO9", 22: "GPIO25", 23: "GPIO11", 24: "GPIO8",
    25: "GND", 26: "GPIO7", 27: "ID_SD", 28: "ID_SC", 29: "GPIO5", 30: "GND",
    31: "GPIO6", 32: "GPIO12", 33: "GPIO13", 34: "GND", 35: "GPIO19", 36: "GPIO16",
    37: "GPIO26", 38: "GPIO20", 39: "GND", 40: "GPIO21",
}  # fmt: skip


@dataclass(frozen=True)
class Wire:
    part: str  # "oled" or "button"
    terminal: str  # label at the part's end
    pin: int  # physical header pin
    colour: str


WIRES: tuple[Wire, ...] = (
    Wire("oled", "VCC", 1, "#d62728"),
    Wire("oled", "SDA", 3, "#1f5fbf"),
    Wire("oled", "SCL", 5, "#c9a100"),
    Wire("oled", "GND", 9, "#111111"),
    Wire("button", "left", 29, "#2ca02c"),
    Wire("button", "right", 31, "#ff7f0e"),
    Wire("button", "ok", 33, "#9467bd"),
    Wire("button", "back", 35, "#8c564b"),
    Wire("button", "GND", 39, "#111111"),
)

W, H = 1400, 860
PITCH = 50
X0 = 200  # x of pins 1 and 2
Y_EVEN, Y_ODD = 170, 220  # even pins in the top row, odd pins in the bottom row
R = 15


def pin_xy(pin: int) -> tuple[int, int]:
    col = (pin - 1) // 2
    return X0 + col * PITCH, (Y_ODD if pin % 2 else Y_EVEN)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # Pillow's bundled scalable font: identical on every machine, no system fonts needed.
    return ImageFont.load_default(size=size)


def _vtext(img: Image.Image, xy: tuple[int, int], text: str, size: int, up: bool) -> None:
    """Text rotated 90 degrees, anchored at its end nearest the header."""
    font = _font(size)
    box = ImageDraw.Draw(img).textbbox((0, 0), text, font=font)
    tile = Image.new("RGBA", (round(box[2]) + 4, round(box[3]) + 4), (255, 255, 255, 0))
    ImageDraw.Draw(tile).text((2, 0), text, font=font, fill="#333333")
    tile = tile.rotate(90, expand=True)
    x, y = xy
    if up:
        img.paste(tile, (x - tile.width // 2, y - tile.height), tile)
    else:
        img.paste(tile, (x - tile.width // 2, y), tile)


def _legend(
    d: ImageDraw.ImageDraw,
    xy: tuple[int, int],
    wires: list[Wire],
    heading: str,
    font: ImageFont.FreeTypeFont | ImageFont.ImageFont,
) -> None:
    """A colour-keyed list "name -> pin N (function)" beside a part."""
    x, y = xy
    d.text((x, y), heading, font=font, fill="black")
    for i, w in enumerate(wires, start=1):
        row = y + i * 24
        d.rectangle((x, row + 3, x + 26, row + 15), fill=w.colour)
        d.text((x + 36, row), f"{w.terminal}  ->  pin {w.pin}  ({HEADER[w.pin]})", font=font,
               fill="black")  # fmt: skip


def draw(path: Path) -> None:
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    title, small, body = _font(26), _font(13), _font(17)
    d.text((40, 20), "O an quan referee: wiring (Raspberry Pi 4 / 5)", font=title, fill="black")

    # The Pi's header: pin 1 is the square pad.
    d.rounded_rectangle((X0 - 40, Y_EVEN - 30, X0 + 19 * PITCH + 40, Y_ODD + 30), 10,
                        fill="#1b6b3a")  # fmt: skip
    used = {w.pin: w for w in WIRES}
    for pin, name in HEADER.items():
        x, y = pin_xy(pin)
        fill = used[pin].colour if pin in used else "#d9d9d9"
        shape = (x - R, y - R, x + R, y + R)
        if pin == 1:
            d.rectangle(shape, fill=fill, outline="white", width=2)
        else:
            d.ellipse(shape, fill=fill, outline="white", width=2)
        d.text((x, y), str(pin), font=small, fill="white" if pin in used else "black",
               anchor="mm")  # fmt: skip
        if pin % 2 == 0:
            _vtext(img, (x, Y_EVEN - 36), name, 13, up=True)
        elif pin not in used:
            _vtext(img, (x, Y_ODD + 36), name, 13, up=False)
    d.text((X0 + 19 * PITCH + 60, Y_EVEN - 10), "40-pin\nheader", font=body, fill="black")

    # OLED module below the left end; its terminals sit under their pins.
    oled = [w for w in WIRES if w.part == "oled"]
    ox0, ox1, oy = X0 - 60, pin_xy(9)[0] + 80, 560
    d.rounded_rectangle((ox0, oy, ox1, oy + 150), 8, fill="#0d2a4a", outline="black")
    d.rectangle((ox0 + 30, oy + 50, ox1 - 30, oy + 130), fill="black", outline="#5a7da8")
    d.text(((ox0 + ox1) // 2, oy + 90), "128x64 OLED\nSSD1306 / SH1106", font=body,
           fill="#9fd3ff", anchor="mm", align="center")  # fmt: skip
    for w in oled:
        x, y = pin_xy(w.pin)
        d.line((x, y + R, x, oy), fill=w.colour, width=6)
        d.rectangle((x - 9, oy - 6, x + 9, oy + 12), fill="#e0c060", outline="black")
        d.text((x, oy + 26), w.terminal, font=small, fill="white", anchor="mm")
    _legend(d, (ox1 + 30, oy + 10), oled, "OLED", body)
    d.text((ox0, oy + 165), "Terminal order differs between modules:\nfollow the printed labels.",
           font=small, fill="black")  # fmt: skip

    # Buttons: each between its GPIO and a shared GND rail to pin 39.
    buttons = [w for w in WIRES if w.part == "button" and w.terminal != "GND"]
    ground = next(w for w in WIRES if w.part == "button" and w.terminal == "GND")
    by, rail = 520, 660
    for w in buttons:
        x, y = pin_xy(w.pin)
        d.line((x, y + R, x, by - 22), fill=w.colour, width=6)
        d.ellipse((x - 22, by - 22, x + 22, by + 22), fill="#f2f2f2", outline="black", width=3)
        d.ellipse((x - 12, by - 12, x + 12, by + 12), fill=w.colour)
        d.line((x, by + 22, x, rail), fill=ground.colour, width=4)
    gx, gy = pin_xy(ground.pin)
    d.line((pin_xy(buttons[0].pin)[0], rail, gx, rail), fill=ground.colour, width=4)
    d.line((gx, gy + R, gx, rail), fill=ground.colour, width=6)
    _legend(d, (pin_xy(buttons[0].pin)[0] - 300, 330), [*buttons, ground], "Buttons", body)
    d.text((pin_xy(buttons[0].pin)[0] - 30, rail + 15),
           "Push buttons to GND. Leads over 1 m (the pole layout):\n"
           "4.7 kOhm pull-up, 1 kOhm series, 100 nF and a TVS per button.",
           font=small, fill="black")  # fmt: skip

    d.text((40, H - 70),
           "Camera: Camera Module 3 on the CSI ribbon connector (CAM/DISP 0 on a Pi 5), "
           "or a USB camera.\nNever use GPIO2/GPIO3 (pins 3, 5) for buttons: they are the "
           "OLED's I2C bus.", font=body, fill="black")  # fmt: skip
    img.save(path, optimize=True)


#: The one mounting layout hardware.md describes ("Pi up the pole"): metres.
LAYOUT: dict[str, float] = {
    "lens_height": 1.34,  # Camera Module 3 Wide over the board (docs/camera_height.py)
    "board_length": 3.31,  # covered length with both semicircles and 10 % margin
    "ribbon": 0.2,  # camera ribbon inside the top box
    "cat_cable": 2.0,  # each Cat5e/6 patch cable, top box to control box (3 m at most)
    "panel_height": 0.9,  # control box, at a child's and an adult's reach
}

MW, MH = 1400, 900


def draw_mounting(path: Path) -> None:
    """Side view: board on the floor, pole, top box with Pi and camera, control box."""
    img = Image.new("RGB", (MW, MH), "white")
    d = ImageDraw.Draw(img)
    title, body, small = _font(26), _font(16), _font(13)
    d.text((40, 20), "O an quan referee: mounting (Pi up the pole)", font=title, fill="black")
    px_per_m = 430
    floor = 820
    board_x0 = 200
    board_len = LAYOUT["board_length"] * px_per_m * 0.38  # the board, seen end-on at a slant
    centre = board_x0 + board_len / 2
    top = floor - LAYOUT["lens_height"] * px_per_m
    # floor and board
    d.line((40, floor, MW - 40, floor), fill="#555555", width=4)
    d.rectangle((board_x0, floor - 8, board_x0 + board_len, floor), fill="#e8e8e8", outline="black")
    d.text((board_x0 + 10, floor + 12), "board on the floor (chalk, 2.0 m + semicircles)", font=small,
           fill="black")  # fmt: skip
    # view cone
    d.polygon([(centre, top + 30), (board_x0 - 20, floor - 8), (board_x0 + board_len + 20,
              floor - 8)], outline="#9ec5ff")  # fmt: skip
    # pole with foot and arm
    pole_x = board_x0 + board_len + 150
    d.rectangle((pole_x - 10, top - 40, pole_x + 10, floor), fill="#8c8c8c", outline="black")
    d.rectangle((pole_x - 90, floor - 16, pole_x + 90, floor), fill="#5a5a5a")
    d.rectangle((centre - 20, top - 40, pole_x, top - 24), fill="#8c8c8c", outline="black")
    # top box with the Pi, PSU and camera
    d.rounded_rectangle((centre - 150, top - 20, centre + 150, top + 30), 6, fill="#d8ecd8",
                        outline="black", width=2)  # fmt: skip
    d.text((centre, top + 5), "top box: Pi 5 + cooler, 27 W PSU,\nI2C extender, button protection",
           font=small, fill="black", anchor="mm", align="center")  # fmt: skip
    d.rectangle((centre - 14, top + 30, centre + 14, top + 44), fill="#222222")
    d.text((centre + 22, top + 36), f"Camera Module 3 Wide\nlens {LAYOUT['lens_height']:.2f} m "
           f"above the board\n{LAYOUT['ribbon'] * 1000:.0f} mm ribbon", font=small,
           fill="black")  # fmt: skip
    # height dimension
    dim_x = 120
    d.line((dim_x, top + 44, dim_x, floor), fill="black", width=2)
    for y in (top + 44, floor):
        d.line((dim_x - 10, y, dim_x + 10, y), fill="black", width=2)
    d.text((dim_x - 80, (top + floor) / 2), f"{LAYOUT['lens_height']:.2f} m", font=body,
           fill="black")  # fmt: skip
    # control box at hand height, cables down the pole
    panel_y = floor - LAYOUT["panel_height"] * px_per_m
    bx = pole_x + 60
    d.rounded_rectangle((bx, panel_y - 50, bx + 260, panel_y + 50), 8, fill="#dde6f5",
                        outline="black", width=2)  # fmt: skip
    d.rectangle((bx + 15, panel_y - 35, bx + 95, panel_y + 5), fill="black", outline="#5a7da8")
    for i, colour in enumerate(("#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")):
        cx = bx + 120 + i * 36
        d.ellipse((cx - 14, panel_y - 14, cx + 14, panel_y + 14), fill=colour, outline="black")
    d.text((bx, panel_y + 60), f"control box at {LAYOUT['panel_height']:.1f} m: OLED + 4 buttons"
           "\n+ I2C extender (far end)", font=small, fill="black")  # fmt: skip
    for off, colour, label in ((16, "#1f5fbf", "A: Cat5e, I2C (differential)"),
                               (28, "#c9a100", "B: Cat5e, 4 buttons + GND")):  # fmt: skip
        x = pole_x + off
        d.line((x, top - 10, x, panel_y - 30), fill=colour, width=4)
        d.line((x, panel_y - 30, bx, panel_y - 30 + off - 16), fill=colour, width=4)
        d.text((pole_x + 50, top + 10 + off * 2), label, font=small, fill=colour)
    d.text((pole_x + 50, top + 80), f"each cable {LAYOUT['cat_cable']:.0f} m (at most 3 m), "
           "inside or clipped to the pole", font=small, fill="black")  # fmt: skip
    d.text((pole_x + 50, top + 100), "mains lead to the PSU also runs down the pole",
           font=small, fill="black")  # fmt: skip
    img.save(path, optimize=True)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).with_name("wiring.png")
    draw(out)
    print(out)
    if len(argv) != 1:
        mounting = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("mounting.png")
        draw_mounting(mounting)
        print(mounting)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
