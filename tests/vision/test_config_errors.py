from __future__ import annotations

import numpy as np
import pytest

from vision import bigstone, detect
from vision.config import VisionConfig, config_from_dict, load_config
from vision.errors import (
    BoardNotFoundError,
    ConfigError,
    ImageReadError,
    VisionError,
)


def test_defaults_are_frozen_sections() -> None:
    cfg = VisionConfig()
    with pytest.raises(AttributeError):
        cfg.locate.work_width = 1  # type: ignore[misc]


def test_dict_overrides_one_key() -> None:
    cfg = config_from_dict({"count": {"px_per_square": 64}, "gate": {"motion_threshold": 3}})
    assert cfg.count.px_per_square == 64
    assert cfg.gate.motion_threshold == 3.0
    assert cfg.locate == VisionConfig().locate


def test_unknown_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"\[locate\] work_widht"):
        config_from_dict({"locate": {"work_widht": 600}})


def test_unknown_section_is_named() -> None:
    with pytest.raises(ConfigError, match=r"\[counting\]"):
        config_from_dict({"counting": {}})


def test_wrong_type_is_named() -> None:
    with pytest.raises(ConfigError, match=r"\[count\] px_per_square"):
        config_from_dict({"count": {"px_per_square": "big"}})
    with pytest.raises(ConfigError, match=r"manual_corners"):
        config_from_dict({"locate": {"manual_corners": [[1, 2], [3, 4]]}})


def test_toml_file_with_vision_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "v.toml"
    path.write_text(
        "[vision.locate]\nmanual_corners = [[1, 2], [30, 2], [30, 20], [1, 20]]\n", "utf-8"
    )
    cfg = load_config(path)
    assert cfg.locate.manual_corners == ((1.0, 2.0), (30.0, 2.0), (30.0, 20.0), (1.0, 20.0))
    bad = tmp_path / "bad.toml"
    bad.write_text("[vision.locate\n", "utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_error_tree_matches_builtins() -> None:
    err = BoardNotFoundError("no lines")
    assert err.reason == "no lines"
    assert isinstance(err, VisionError) and isinstance(err, LookupError)
    assert issubclass(ImageReadError, OSError) and issubclass(ImageReadError, VisionError)
    assert issubclass(ConfigError, ValueError)


def test_networks_are_picked_by_the_config(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = config_from_dict({"count": {"model": "fold0.onnx", "big_crop_x1": 0.5}})
    assert cfg.count.model == "fold0.onnx" and cfg.count.big_crop_x1 == 0.5
    assert VisionConfig().count.model == detect.MODEL_PATH
    assert VisionConfig().count.big_model == bigstone.MODEL_PATH
    with pytest.raises(ConfigError, match=r"\[count\] big_model"):
        config_from_dict({"count": {"big_model": 3}})
    with pytest.raises(ConfigError, match=r"none\.onnx does not exist"):
        detect.density(np.zeros((40, 40, 3), np.uint8), str(tmp_path / "none.onnx"))
