"""Start-up order: the whole config is checked before any hardware opens; bad = exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from companion.commands import run, selftest
from companion.commands.demo import FRAMES

REPO = Path(__file__).resolve().parents[2]

BAD_CONFIGS = {
    "rules switch the engine lacks": "[rules]\nborrow_when_empty = true\n",
    "rules value out of range": "[rules]\nquan_non_min = 99\n",
    "vision typo": "[vision]\nfoo = 1\n",
    "vision stage typo": "[vision.locate]\nfoo = 1\n",
    "corners pasted badly": "[vision.locate]\nmanual_corners = [[1, 2], [3, 4]]\n",
    "corners all zero": "[vision.locate]\nmanual_corners = [[0, 0], [0, 0], [0, 0], [0, 0]]\n",
    "corners nan": "[vision.locate]\nmanual_corners = [[nan, 1], [9, 1], [9, 9], [1, 9]]\n",
    "unknown section": "[kamera]\nwidth = 3\n",
    "bad pin": "[buttons.pins]\nok = 2\n",
    "not TOML": "[camera\n",
    "replay without folder": '[camera]\nkind = "replay"\n',
    "missing model": '[vision.count]\nmodel = "/nonexistent/counter.onnx"\n',
    "missing big-stone model": '[vision.count]\nmandarin_big_model = "/nonexistent/b.onnx"\n',
}


@pytest.fixture
def no_hardware(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Any attempt to open hardware is recorded (and refused)."""
    opened: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        opened.append("hardware")
        raise AssertionError("hardware opened before the config was checked")

    monkeypatch.setattr(run, "make_hardware", refuse)
    return opened


@pytest.mark.parametrize("text", list(BAD_CONFIGS.values()), ids=list(BAD_CONFIGS))
def test_every_config_error_exits_2_before_the_hardware_opens(
    text: str, tmp_path: Path, no_hardware: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, "utf-8")
    status = run.main(["--config", str(path), "--journal", str(tmp_path / "j.jsonl")])
    err = capsys.readouterr().err
    assert status == 2
    assert no_hardware == []
    assert not (tmp_path / "j.jsonl").exists()  # nothing opened, not even the journal
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oanquan run: config: ")
    assert "Traceback" not in err


@pytest.mark.parametrize("text", list(BAD_CONFIGS.values()), ids=list(BAD_CONFIGS))
def test_selftest_refuses_the_same_configs(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """selftest once said OK to a [rules] table that stopped `run`."""
    path = tmp_path / "config.toml"
    path.write_text(text, "utf-8")
    status = selftest.main(["--config", str(path), "--backend", "fake"])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and "config: " in err


def test_run_on_fake_hardware_referees_a_replay_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --hardware fake`: the real loop, mock buttons, dummy display, replayed frames."""
    frames = tmp_path / "frames"
    frames.mkdir()
    for name in sorted(p.name for p in FRAMES.glob("*.jpg"))[:3]:
        shutil.copy(FRAMES / name, frames / name)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[camera]\nkind = "replay"\nreplay_dir = "{frames}"\n'
        f'[storage]\nstate_dir = "{tmp_path}"\njournal_dir = "{tmp_path}"\n',
        "utf-8",
    )
    status = run.main(["--config", str(config), "--hardware", "fake"])
    assert status == 0  # the replay ended
    journal = (tmp_path / "journal.jsonl").read_text("utf-8").splitlines()
    assert journal and '"kind":"game"' in journal[0]


def test_the_shipped_site_config_is_read_by_run_selftest_and_analyze(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`analyze --config systemd/config.toml` once failed with "unknown section [camera]"."""
    from companion.commands.analyze import analyze_main

    site = REPO / "systemd" / "config.toml"
    blank = tmp_path / "blank.png"
    import cv2
    import numpy as np

    cv2.imwrite(str(blank), np.full((120, 160, 3), 90, np.uint8))
    assert analyze_main(["--config", str(site), str(blank)]) == 0
    status = selftest.main(["--config", str(site), "--backend", "fake", "--skip", "board"])
    assert status in (0, 1)  # the checks ran: the config was accepted
    assert "config: " not in capsys.readouterr().err


def test_a_journal_that_cannot_record_the_new_game_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full disk at boot: no traceback, status 1 and the reason."""
    from companion.appliance.journal import Journal, JournalError

    def full(self: Journal, *args: Any, **kwargs: Any) -> Any:
        raise JournalError("journal: cannot write journal.jsonl: no space left on device")

    monkeypatch.setattr(Journal, "new_game", full)
    config = tmp_path / "config.toml"
    config.write_text('[camera]\nkind = "generated"\n', "utf-8")
    args = ["--config", str(config), "--hardware", "fake", "--manual", "--frames", "1"]
    assert run.main([*args, "--journal", str(tmp_path / "journal.jsonl")]) == 1
    assert "no space left" in one_line(capsys.readouterr().err)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_run_warms_vision_up_at_the_cameras_size_and_manual_mode_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    shutil.copy(sorted(FRAMES.glob("*.jpg"))[0], frames / "a.jpg")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[camera]\nkind = "replay"\nreplay_dir = "{frames}"\nwidth = 640\nheight = 480\n'
        f'[storage]\nstate_dir = "{tmp_path}"\njournal_dir = "{tmp_path}"\n',
        "utf-8",
    )
    sizes: list[tuple[int, int]] = []
    monkeypatch.setattr("vision.warm_up", lambda config, size: sizes.append(size))
    assert run.main(["--config", str(config), "--hardware", "fake"]) == 0
    assert sizes == [(640, 480)]
    args = ["--config", str(config), "--hardware", "fake", "--manual", "--frames", "1"]
    assert run.main(args) == 0
    assert sizes == [(640, 480)]  # (no camera, no vision to warm)
