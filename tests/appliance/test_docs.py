"""hardware.md, docs/wiring.png and the code must tell the same story.

A wrong pin number in the wiring table costs someone an afternoon (or a
board), so the tables in hardware.md, the pin list the diagram is drawn from,
the default pins in device/settings.py and the BCM-to-physical map that
``oanquan selftest`` prints are compared here; so is the camera-height table
with the script that computes it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys
from pathlib import Path
from types import ModuleType

from PIL import Image

from companion.commands.selftest import PHYSICAL_PIN
from device.settings import DEFAULT_BUTTON_PINS

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "hardware.md").read_text()


def load_script(name: str) -> ModuleType:
    path = REPO / "docs" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def table_rows(heading: str) -> list[list[str]]:
    """Cells of the first Markdown table after a bold heading line."""
    start = DOC.index(heading)
    rows: list[list[str]] = []
    for line in DOC[start:].splitlines()[1:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # without the header row


def test_header_map_agrees_with_selftest() -> None:
    wiring = load_script("make_wiring")
    gpio_to_pin = {
        int(m.group(1)): pin
        for pin, name in wiring.HEADER.items()
        if (m := re.fullmatch(r"GPIO(\d+)( \w+)?", name))
    }
    assert gpio_to_pin == PHYSICAL_PIN
    assert sorted(wiring.HEADER) == list(range(1, 41))


def test_diagram_wires_match_the_default_buttons_and_the_oled_bus() -> None:
    wiring = load_script("make_wiring")
    buttons = {w.terminal: w.pin for w in wiring.WIRES if w.part == "button"}
    ground = buttons.pop("GND")
    assert buttons == {name: PHYSICAL_PIN[gpio] for name, gpio in DEFAULT_BUTTON_PINS.items()}
    assert wiring.HEADER[ground] == "GND"
    oled = {w.terminal: w.pin for w in wiring.WIRES if w.part == "oled"}
    assert oled == {"VCC": 1, "SDA": 3, "SCL": 5, "GND": 9}
    assert wiring.HEADER[1] == "3V3"


def test_hardware_md_tables_match_the_diagram() -> None:
    wiring = load_script("make_wiring")
    oled = {row[0]: int(row[1]) for row in table_rows("**OLED (I2C bus 1)**")}
    assert oled == {w.terminal: w.pin for w in wiring.WIRES if w.part == "oled"}
    buttons = table_rows("**Buttons**")
    listed = {row[0]: (row[1], int(row[2])) for row in buttons}
    assert listed.pop("common") == ("GND", 39)
    assert listed == {
        name: (f"GPIO{gpio}", PHYSICAL_PIN[gpio]) for name, gpio in DEFAULT_BUTTON_PINS.items()
    }


def test_wiring_png_is_current_and_redrawable(tmp_path: Path) -> None:
    wiring = load_script("make_wiring")
    out = tmp_path / "wiring.png"
    assert wiring.main([str(out)]) == 0
    shipped = Image.open(REPO / "docs" / "wiring.png")
    fresh = Image.open(out)
    assert shipped.size == fresh.size == (wiring.W, wiring.H)
    # The drawn pins carry the wire colours: pin 29 (left button) is green.
    x, y = wiring.pin_xy(29)
    assert shipped.convert("RGB").getpixel((x - 8, y - 8)) == (0x2C, 0xA0, 0x2C)


def test_camera_height_table_matches_the_formula() -> None:
    script = load_script("camera_height")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        script.main([])
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| Camera") or
            line.startswith("| USB")]  # fmt: skip
    assert len(rows) == 5
    for row in rows:
        assert row in DOC, row


def test_mounting_drawing_is_redrawable_and_its_numbers_are_hardware_md_s(tmp_path: Path) -> None:
    """The drawing a builder measures from and the parts table must give the same lengths."""
    wiring = load_script("make_wiring")
    mounting = tmp_path / "mounting.png"
    with contextlib.redirect_stdout(io.StringIO()):
        assert wiring.main([str(tmp_path / "wiring.png"), str(mounting)]) == 0
    shipped = Image.open(REPO / "docs" / "mounting.png")
    assert shipped.size == Image.open(mounting).size == (wiring.MW, wiring.MH)
    layout = wiring.LAYOUT
    assert f"{layout['lens_height']:.2f} m" in DOC
    assert f"{layout['ribbon'] * 1000:.0f} mm" in DOC
    assert f"{layout['cat_cable']:.0f} m" in DOC
    assert f"{layout['panel_height']:.1f} m" in DOC
