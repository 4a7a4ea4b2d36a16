"""``oanquan screens`` writes the whole gallery."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from companion.commands.screens import main
from companion.ui.screens.samples import SAMPLES


def test_gallery_writes_every_screen_in_both_languages(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path / "g"), "--scale", "3"]) == 0
    out = tmp_path / "g"
    index = (out / "index.md").read_text()
    for name in SAMPLES:
        for lang in ("vi", "en"):
            with Image.open(out / f"{name}.{lang}.png") as one:
                assert (one.size, one.mode) == ((128, 64), "1")
            with Image.open(out / f"{name}.{lang}.x3.png") as big:
                assert big.size == (384, 192)
            assert f"{name}.{lang}.x3.png" in index
    with Image.open(out / "contact-sheet.png") as sheet:
        assert sheet.width > 2 * 256 and sheet.height > len(SAMPLES) * 128


def test_magnified_frame_is_the_frame_scaled(tmp_path: Path) -> None:
    main(["--out", str(tmp_path), "--scale", "2"])
    with (
        Image.open(tmp_path / "board_start.vi.png") as one,
        Image.open(tmp_path / "board_start.vi.x2.png") as big,
    ):
        assert big.resize((128, 64), Image.Resampling.NEAREST).tobytes() == one.tobytes()
