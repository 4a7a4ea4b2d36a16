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
import shutil
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
    result, root, log = dry_run(tmp_path, "--overlay", "--data-partition", "/dev/mmcblk0p3")
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
        # the hardware watchdog: systemd leaves it off unless told
        f"write {r}/etc/systemd/system.conf.d/oanquan-watchdog.conf",
        "[Manager]\n|   RuntimeWatchdogSec=15s\n|   RebootWatchdogSec=2min",
        "systemctl daemon-reexec",
        # no swap file wearing the SD card
        "No swap file on the SD card",
        # the service user and its hardware groups
        "useradd --system --user-group --home-dir /var/lib/oanquan",
        "usermod --append --groups gpio\\,i2c\\,video oanquan",
        # the venv sees apt's picamera2; numpy stays the system one
        f"/usr/bin/python3 -m venv --system-site-packages {r}/opt/oanquan/venv",
        "numpy==",
        "opencv-python-headless",
        "luma.oled>=3.16.0",  # page_address_offset (sh1106_column_offset) exists from 3.16
        f"copy {REPO} (without .git, .venv, build and caches) to a scratch directory",
        f"--constraint {r}/opt/oanquan/constraints.txt SCRATCH_COPY_OF_CHECKOUT",
        "-m compileall",
        f"ln -sfn /opt/oanquan/venv/bin/oanquan {r}/usr/local/bin/oanquan",
        # config, unit, start, self-test
        # readable by `oanquan selftest` run as any user
        f"install -D -m 0644 -o root -g root {REPO}/systemd/config.toml {r}/etc/oanquan/config.toml",
        # --data-partition: partition, filesystem, fstab with noatime, move the state over
        "parted -s /dev/mmcblk0 -- mkpart primary ext4",
        "mkfs.ext4 -q -L oanquan-data /dev/mmcblk0p3",
        f"append to {r}/etc/fstab: LABEL=oanquan-data /var/lib/oanquan ext4 "
        "defaults,noatime,nofail",
        f"cp -a {r}/var/lib/oanquan/. {r}/mnt/oanquan-data/",
        f"{REPO}/systemd/oanquan.service {r}/etc/systemd/system/oanquan.service",
        "systemctl daemon-reload",
        "systemctl enable oanquan.service",
        "oanquan selftest",
        # --overlay
        "Storage=volatile",
        "raspi-config nonint enable_bootro",
        "raspi-config nonint enable_overlayfs",
        "overlayroot=tmpfs:recurse=0",
        "--overlay-off, then reboot",
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
    config.chmod(0o640)  # what older installers made: unreadable for `oanquan selftest`
    result, _, _ = dry_run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "keeping local edits" in result.stdout
    assert f"+ chmod 0644 {config}" in result.stdout
    assert f"+ chown root:root {config}" in result.stdout
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
    from companion.appliance.config import parse_config

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
    twice = f"ensure_config_line /boot/firmware/config.txt {line}; " * 2
    result = helpers(tmp_path, twice)
    assert result.returncode == 0, result.stderr
    assert config.read_text() == f"[all]\ndtparam=audio=on\n{line}\n"
    assert f"= {config} already has (for all models): {line}" in result.stdout


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # Pi OS images end with a model filter: appending there would apply to a CM4 only.
        (
            "dtparam=audio=on\n[cm4]\notg_mode=1\n[cm5]\ndtoverlay=dwc2,dr_mode=host\n",
            "dtparam=audio=on\n[cm4]\notg_mode=1\n[cm5]\ndtoverlay=dwc2,dr_mode=host\n"
            "[all]\ndtparam=i2c_arm_baudrate=400000\n",
        ),
        # present, but only for the Pi 4: still missing for every other model
        (
            "[pi4]\ndtparam=i2c_arm_baudrate=400000\n[all]\n",
            "[pi4]\ndtparam=i2c_arm_baudrate=400000\n[all]\ndtparam=i2c_arm_baudrate=400000\n",
        ),
        # already in effect before any section: nothing to do
        (
            "dtparam=i2c_arm_baudrate=400000\n[cm4]\notg_mode=1\n",
            "dtparam=i2c_arm_baudrate=400000\n[cm4]\notg_mode=1\n",
        ),
    ],
)
def test_config_txt_lines_never_land_inside_a_model_filter(
    tmp_path: Path, before: str, after: str
) -> None:
    config = tmp_path / "boot" / "firmware" / "config.txt"
    config.parent.mkdir(parents=True)
    config.write_text(before)
    line = "dtparam=i2c_arm_baudrate=400000"
    for _ in range(2):
        result = helpers(tmp_path, f"ensure_config_line /boot/firmware/config.txt {line}")
        assert result.returncode == 0, result.stderr
    assert config.read_text() == after


def test_rerun_with_the_overlay_on_refuses_instead_of_writing_into_ram(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cmdline").write_text("console=tty1 overlayroot=tmpfs:recurse=0 rootwait\n")
    real = helpers(tmp_path, "refuse_if_overlay; echo SHOULD-NOT-GET-HERE")
    assert real.returncode != 0 and "SHOULD-NOT-GET-HERE" not in real.stdout
    assert "read-only overlay (RAM)" in real.stderr and "--overlay-off" in real.stderr
    assert len(real.stderr.strip().splitlines()) == 1  # one clear line
    (proc / "cmdline").write_text("console=tty1 rootwait\n")
    assert helpers(tmp_path, "refuse_if_overlay").returncode == 0
    # the dry run says the same as a warning and carries on
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "cmdline").write_text("overlayroot=tmpfs:recurse=0 console=tty1\n")
    result, _, _ = dry_run(tmp_path)
    assert result.returncode == 0
    assert "warning: the root filesystem is a read-only overlay" in result.stderr


def raspi_config_shim(bin_dir: Path, cmdline: Path) -> None:
    """raspi-config's disable_overlayfs: it removes exactly "overlayroot=tmpfs " and no more."""
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "raspi-config"
    shim.write_text(
        "#!/bin/sh\n"
        '[ "$2" = disable_overlayfs ] || exit 0\n'
        f"sed -i {cmdline} -e 's/\\(.*\\)overlayroot=tmpfs \\(.*\\)/\\1\\2/'\n"
    )
    shim.chmod(0o755)
    mount = bin_dir / "mount"
    mount.write_text("#!/bin/sh\nexit 0\n")
    mount.chmod(0o755)


@pytest.mark.parametrize(
    "before",
    [
        "overlayroot=tmpfs:recurse=0 console=serial0,115200 console=tty1 root=PARTUUID=1-02",
        "console=tty1 root=PARTUUID=1-02 overlayroot=tmpfs:recurse=0",
        "console=tty1 overlayroot=tmpfs root=PARTUUID=1-02",
    ],
)
def test_overlay_off_really_removes_the_overlay(tmp_path: Path, before: str) -> None:
    cmdline = tmp_path / "boot" / "firmware" / "cmdline.txt"
    cmdline.parent.mkdir(parents=True)
    cmdline.write_text(before + "\n")
    raspi_config_shim(tmp_path / "bin", cmdline)
    result = subprocess.run(
        ["bash", "-c", f'source "{INSTALL}"; dry_run=0; root="{tmp_path}"; disable_overlay'],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    after = cmdline.read_text()
    assert "overlayroot" not in after
    assert after.split() == [w for w in before.split() if not w.startswith("overlayroot")]


def test_raspi_config_alone_cannot_remove_recurse0(tmp_path: Path) -> None:
    """Why --overlay-off exists: the bug this guards against, reproduced on the shim."""
    cmdline = tmp_path / "cmdline.txt"
    cmdline.write_text("overlayroot=tmpfs:recurse=0 console=tty1\n")
    raspi_config_shim(tmp_path / "bin", cmdline)
    subprocess.run([str(tmp_path / "bin" / "raspi-config"), "nonint", "disable_overlayfs"])
    assert "overlayroot=tmpfs:recurse=0" in cmdline.read_text()


def test_data_partition_goes_into_the_free_space_after_the_root(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    parted = bin_dir / "parted"  # read-only `print free` answer of a 32 GB card
    parted.write_text(
        "#!/bin/sh\n"
        "printf 'BYT;\\n/dev/mmcblk0:30436MiB:sd/mmc:512:512:msdos:SD:;\\n'\n"
        "printf '1:4.00MiB:516MiB:512MiB:fat32::lba;\\n2:516MiB:16900MiB:16384MiB:ext4::;\\n'\n"
        "printf '1:16900MiB:30436MiB:13536MiB:free;\\n'\n"
    )
    parted.chmod(0o755)
    result = subprocess.run(
        ["bash", "-c", f'source "{INSTALL}"; free_tail_mib /dev/mmcblk0'],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        timeout=60,
    )
    assert result.stdout.strip() == "16901"
    full = parted.read_text().replace("13536MiB:free", "0.50MiB:free")
    parted.write_text(full)
    small = subprocess.run(
        ["bash", "-c", f'source "{INSTALL}"; free_tail_mib /dev/mmcblk0'],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        timeout=60,
    )
    assert small.stdout.strip() == ""


@pytest.mark.parametrize(
    ("part", "split"),
    [
        ("/dev/mmcblk0p3", "/dev/mmcblk0 3"),
        ("/dev/sda1", "/dev/sda 1"),
        ("/dev/nvme0n1p4", "/dev/nvme0n1 4"),
    ],
)
def test_partition_names(part: str, split: str) -> None:
    result = subprocess.run(
        ["bash", "-c", f'source "{INSTALL}"; split_partition {part}'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip() == split


def test_a_bad_data_partition_name_is_one_clear_line(tmp_path: Path) -> None:
    result, root, _ = dry_run(tmp_path, "--data-partition", "/dev/sdcard")
    assert result.returncode != 0
    assert "expected a partition such as /dev/mmcblk0p3" in result.stderr
    assert list(root.iterdir()) == []


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


@pytest.mark.usefixtures("checkout_unchanged")
def test_engine_core_is_compiled_where_a_compiler_is_and_can_be_declined(tmp_path: Path) -> None:
    """mypyc roughly doubles the AI's nodes per second; it is optional, never required."""
    result, root, _ = dry_run(tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    step = out[out.index("Compile the engine core with mypyc") :]
    step = step[: step.index("==>")]
    if shutil.which("cc") or shutil.which("gcc"):
        assert "mypyc engine/core.py engine/evaluate.py engine/search.py" in step
        assert "otherwise remove the .so files again" in step
    else:
        assert "the pure-Python engine is used" in step
    (tmp_path / "no").mkdir()
    declined, _, _ = dry_run(tmp_path / "no", "--no-compile")
    assert declined.returncode == 0, declined.stderr
    assert "skipped (--no-compile)" in declined.stdout
    assert "mypyc engine/core.py" not in declined.stdout
    assert list(root.iterdir()) == []
