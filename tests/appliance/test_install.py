"""systemd/install.sh --dry-run: every step is shown, nothing is changed.

The dry run is what CI can check on a machine that is not a Pi, so it has to
be honest in both directions: it must name every real step (apt packages,
venv, pinned numpy, user and groups, config, unit, overlay), and it must not
touch the system even when run as root. "Nothing written" is checked three
ways: every path the installer writes is under OANQUAN_ROOT, an empty temp dir
that must stay empty; every command that could change the system is replaced
on PATH by a shim that logs its use; and the checkout itself is unchanged
(a stray ``pip install`` would leave build files there).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "systemd" / "install.sh"

#: Commands that change the system; in a dry run none may be executed.
MUTATORS = (
    "apt-get", "apt", "dpkg", "systemctl", "useradd", "usermod", "groupadd", "install",
    "runuser", "chown", "chmod", "mv", "mkdir", "cp", "ln", "rm", "tar", "mktemp", "pip",
    "pip3", "reboot", "env",
)  # fmt: skip


def snapshot(tree: Path) -> dict[str, float]:
    """What an installer run by mistake would change in the checkout.

    Top-level names (pip leaves ``build/`` and ``*.egg-info`` behind) plus the
    mtimes of everything under ``systemd/`` and the egg-info. Not the whole
    tree: other files may be edited while the tests run, which is no fault of
    the installer.
    """
    out = {entry.name: 0.0 for entry in tree.iterdir() if not entry.name.startswith(".")}
    for sub in [tree / "systemd", *tree.glob("*.egg-info")]:
        for path in sub.rglob("*"):
            out[str(path)] = path.stat().st_mtime
    return out


def make_shims(bin_dir: Path, log: Path, *, raspi_config: bool) -> None:
    bin_dir.mkdir()
    names = [*MUTATORS, "raspi-config"] if raspi_config else list(MUTATORS)
    for name in names:
        shim = bin_dir / name
        # raspi-config's get_* calls are read-only probes; answer "1" (disabled).
        shim.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\necho 1\nexit 0\n')
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR)


def dry_run(
    tmp_path: Path, *args: str, raspi_config: bool = False
) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    make_shims(tmp_path / "bin", log, raspi_config=raspi_config)
    env = {
        **os.environ,
        "OANQUAN_ROOT": str(root),
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
    }
    result = subprocess.run(
        ["bash", str(INSTALL), "--dry-run", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return result, root, log


@pytest.fixture
def checkout_unchanged() -> Iterator[None]:
    before = snapshot(REPO)
    yield
    assert snapshot(REPO) == before


@pytest.mark.usefixtures("checkout_unchanged")
def test_dry_run_shows_every_step_and_writes_nothing(tmp_path: Path) -> None:
    result, root, log = dry_run(tmp_path, "--overlay")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    r = str(root)

    expected = [
        # apt: picamera2 and lgpio from the distribution, tools for troubleshooting
        "apt-get install -y --no-install-recommends",
        "python3-picamera2",
        "python3-lgpio",
        "python3-venv",
        "i2c-tools",
        # I2C at 400 kHz and camera auto-detection
        f"append to {r}/boot/firmware/config.txt: dtparam=i2c_arm=on",
        "dtparam=i2c_arm_baudrate=400000",
        "camera_auto_detect=1",
        # the service user and its hardware groups
        "useradd --system --user-group --home-dir /var/lib/oanquan",
        "usermod --append --groups gpio\\,i2c\\,video oanquan",
        # the venv sees apt's picamera2; numpy stays the system one
        f"/usr/bin/python3 -m venv --system-site-packages {r}/opt/oanquan/venv",
        "numpy==",
        "opencv-python-headless",
        f"copy {REPO} (without .git, .venv, build and caches) to a scratch directory",
        f"--constraint {r}/opt/oanquan/constraints.txt SCRATCH_COPY_OF_CHECKOUT",
        "-m compileall",
        f"ln -sfn /opt/oanquan/venv/bin/oanquan {r}/usr/local/bin/oanquan",
        # config, unit, start, self-test
        f"{REPO}/systemd/config.toml {r}/etc/oanquan/config.toml",
        f"{REPO}/systemd/oanquan.service {r}/etc/systemd/system/oanquan.service",
        "systemctl daemon-reload",
        "systemctl enable oanquan.service",
        "oanquan selftest",
        # --overlay
        "Storage=volatile",
        "raspi-config nonint enable_overlayfs",
        "overlayroot=tmpfs:recurse=0",
        "DRY RUN complete: nothing was changed.",
    ]
    missing = [text for text in expected if text not in out]
    assert not missing, out
    assert list(root.iterdir()) == []
    assert not log.exists(), log.read_text()


@pytest.mark.usefixtures("checkout_unchanged")
def test_dry_run_uses_raspi_config_only_to_probe(tmp_path: Path) -> None:
    result, root, log = dry_run(tmp_path, raspi_config=True)
    assert result.returncode == 0, result.stderr
    assert "raspi-config nonint do_i2c 0" in result.stdout
    assert log.read_text().splitlines() == ["raspi-config nonint get_i2c"]
    assert list(root.iterdir()) == []
    # Without --overlay the root filesystem is left writable.
    assert "enable_overlayfs" not in result.stdout


def test_existing_config_is_kept(tmp_path: Path) -> None:
    config = tmp_path / "root" / "etc" / "oanquan" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("# local edits\n")
    result, _, _ = dry_run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "keeping local edits" in result.stdout
    writes = [
        line for line in result.stdout.splitlines() if line.startswith(("+ install", "+ write"))
    ]
    assert not [line for line in writes if "etc/oanquan/config.toml" in line]
    assert config.read_text() == "# local edits\n"


def test_unit_runs_the_venv_the_installer_builds() -> None:
    unit = (REPO / "systemd" / "oanquan.service").read_text()
    installer = INSTALL.read_text()
    assert "readonly VENV=$PREFIX/venv" in installer
    assert "readonly PREFIX=/opt/oanquan" in installer
    assert "ExecStart=/opt/oanquan/venv/bin/oanquan run --config /etc/oanquan/config.toml" in unit


def test_help_and_bad_arguments() -> None:
    ok = subprocess.run(["bash", str(INSTALL), "--help"], capture_output=True, text=True)
    assert ok.returncode == 0
    assert "--dry-run" in ok.stdout and "--overlay" in ok.stdout
    bad = subprocess.run(["bash", str(INSTALL), "--frobnicate"], capture_output=True, text=True)
    assert bad.returncode != 0
    assert "unknown argument: --frobnicate" in bad.stderr


def test_shipped_site_config_is_valid_for_the_app() -> None:
    """The file the installer puts in /etc/oanquan parses with the app's own loader."""
    from companion.config import parse_config

    path = REPO / "systemd" / "config.toml"
    config = parse_config(path.read_text(), source=path)
    assert (config.camera.width, config.camera.height) == (4608, 2592)
    # Only site changes: everything else stays at the app's defaults.
    assert config.hardware.buttons == parse_config("").hardware.buttons
    assert config.hardware.display == parse_config("").hardware.display


def helpers(root: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run install.sh's own helpers for real (not --dry-run) inside a scratch root."""
    return subprocess.run(
        ["bash", "-c", f'source "{INSTALL}"; dry_run=0; root="{root}"; {script}'],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_config_edits_are_idempotent(tmp_path: Path) -> None:
    config = tmp_path / "boot" / "firmware" / "config.txt"
    config.parent.mkdir(parents=True)
    config.write_text("[all]\ndtparam=audio=on\n")
    line = "dtparam=i2c_arm_baudrate=400000"
    twice = f"ensure_line /boot/firmware/config.txt {line}; " * 2
    result = helpers(tmp_path, twice)
    assert result.returncode == 0, result.stderr
    assert config.read_text() == f"[all]\ndtparam=audio=on\n{line}\n"
    assert f"= {config} already has: {line}" in result.stdout


def test_write_file_replaces_atomically_with_mode(tmp_path: Path) -> None:
    owner = f"{os.getuid()}:{os.getgid()}"
    write = f"printf 'Storage=volatile\\n' | write_file /etc/j/oq.conf 0640 {owner}"
    for _ in range(2):
        result = helpers(tmp_path, write)
        assert result.returncode == 0, result.stderr
    target = tmp_path / "etc" / "j" / "oq.conf"
    assert target.read_text() == "Storage=volatile\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(target.parent) == ["oq.conf"]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "console=tty1 overlayroot=tmpfs rootwait",
            "console=tty1 overlayroot=tmpfs:recurse=0 rootwait",
        ),
        (
            "console=tty1 rootwait overlayroot=tmpfs",
            "console=tty1 rootwait overlayroot=tmpfs:recurse=0",
        ),
        ("overlayroot=tmpfs:recurse=0 quiet", "overlayroot=tmpfs:recurse=0 quiet"),
    ],
)
def test_overlay_keeps_a_data_partition_writable(tmp_path: Path, before: str, after: str) -> None:
    cmdline = tmp_path / "boot" / "firmware" / "cmdline.txt"
    cmdline.parent.mkdir(parents=True)
    cmdline.write_text(before + "\n")
    for _ in range(2):
        result = helpers(tmp_path, "overlay_recurse0 /boot/firmware/cmdline.txt")
        assert result.returncode == 0, result.stderr
    assert cmdline.read_text() == after + "\n"
