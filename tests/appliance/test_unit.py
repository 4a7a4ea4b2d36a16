"""The systemd unit: systemd's own checks, and the contract the app relies on.

``systemd/check-unit.sh`` runs ``systemd-analyze verify`` and ``security``;
it installs systemd from apt when ``systemd-analyze`` is missing and we are
root (CI), and fails with instructions otherwise: a unit check that silently
skips would let a broken unit ship. The checker itself is tested too, on
units broken on purpose, so a checker that always passes cannot go unnoticed.

The content tests cover what systemd accepts but the appliance would get
wrong, e.g. start-limit keys in [Service] (accepted for compatibility, yet
the wrong place) or an lgpio working directory that is not writable.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "oanquan.service"
CHECK = REPO / "systemd" / "check-unit.sh"


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """Parse unit text into section -> key -> values (keys may repeat, as in systemd)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"key outside a section: {raw!r}"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def run_check(*units: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(CHECK), *map(str, units)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
    )


@pytest.fixture(scope="module")
def unit() -> dict[str, dict[str, list[str]]]:
    return parse_unit(UNIT.read_text())


def test_shipped_unit_passes_verify_and_security() -> None:
    result = run_check(UNIT)
    assert result.returncode == 0, result.stderr
    assert "verify" in result.stderr and "clean" in result.stderr
    level = re.search(r"exposure level (\d+\.\d+)", result.stderr)
    assert level is not None, result.stderr
    assert float(level.group(1)) <= 2.0


def test_checker_fails_on_any_verify_output(tmp_path: Path) -> None:
    # verify only warns (exit 0) about an unknown Type=; the checker must fail.
    broken = tmp_path / "oanquan.service"
    broken.write_text(UNIT.read_text().replace("Type=notify", "Type=bogus"))
    result = run_check(broken)
    assert result.returncode != 0
    assert "Failed to parse service type" in result.stderr


def test_checker_fails_on_an_unsandboxed_unit(tmp_path: Path) -> None:
    weak = tmp_path / "weak.service"
    weak.write_text("[Unit]\nDescription=x\n\n[Service]\nExecStart=/opt/x/bin/x\n")
    result = run_check(weak)
    assert result.returncode != 0
    assert "is above 2.0" in result.stderr


def test_checker_threshold_is_applied(tmp_path: Path) -> None:
    result = run_check(UNIT, MAX_EXPOSURE="0.1")
    assert result.returncode != 0
    assert "is above 0.1" in result.stderr


def test_checker_verifies_the_unit_text_unchanged(tmp_path: Path) -> None:
    # The stub ExecStart binary only exists inside the checker's scratch root,
    # so a typo in the real path still fails nowhere else; but a command that
    # is relative (and so not stubbed) must still be reported by verify.
    relative = tmp_path / "oanquan.service"
    relative.write_text(
        UNIT.read_text().replace("ExecStart=/opt/oanquan/venv/bin/oanquan", "ExecStart=oanquan")
    )
    result = run_check(relative)
    assert result.returncode != 0
    assert "oanquan" in result.stderr


def test_notify_watchdog_and_restart_policy(unit: dict[str, dict[str, list[str]]]) -> None:
    service = unit["Service"]
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    assert int(service["WatchdogSec"][0]) >= 10
    assert service["Restart"][0] in ("always", "on-failure")


def test_start_limit_keys_are_in_unit_section(unit: dict[str, dict[str, list[str]]]) -> None:
    for key in ("StartLimitIntervalSec", "StartLimitBurst", "StartLimitAction"):
        assert key in unit["Unit"], key
        assert key not in unit["Service"], key


def test_runs_as_dedicated_user_with_hardware_groups(
    unit: dict[str, dict[str, list[str]]],
) -> None:
    service = unit["Service"]
    assert service["User"] == ["oanquan"]
    groups = " ".join(service["SupplementaryGroups"]).split()
    assert {"gpio", "i2c", "video"} <= set(groups)


def test_lgpio_can_write_its_fifos(unit: dict[str, dict[str, list[str]]]) -> None:
    """lgpio writes .lgd-nfy* into LG_WD / the CWD; both must be writable under strict."""
    service = unit["Service"]
    env = dict(item.split("=", 1) for line in service["Environment"] for item in line.split())
    writable = {f"/run/{d}" for d in service["RuntimeDirectory"]} | {
        f"/var/lib/{d}" for d in service["StateDirectory"]
    }
    assert service["ProtectSystem"] == ["strict"]
    assert env["LG_WD"] in writable
    assert service["WorkingDirectory"][0] in writable
    assert env["GPIOZERO_PIN_FACTORY"] == "lgpio"
    assert service["StateDirectory"] == ["oanquan"]


def test_devices_for_gpio_i2c_and_camera_are_allowed(
    unit: dict[str, dict[str, list[str]]],
) -> None:
    service = unit["Service"]
    assert service["DevicePolicy"] == ["closed"]
    assert service["PrivateNetwork"] == ["yes"]
    assert "PrivateDevices" not in service  # it would hide /dev/i2c-1 and friends
    allowed = {line.split()[0] for line in service["DeviceAllow"]}
    for name in ("gpiochip", "i2c", "video4linux", "media", "dma_heap"):
        assert f"char-{name}" in allowed, name


def test_checker_installs_a_missing_systemd_analyze_with_apt(tmp_path: Path) -> None:
    """A clean CI machine has no systemd-analyze: the checker must install it, not skip.

    PATH holds only the tools the checker uses, minus systemd-analyze; a fake
    apt-get "installs" it by linking the real one in, and ``id`` claims root.
    """
    import shutil

    if shutil.which("systemd-analyze") is None:  # a clean machine: install as CI would
        subprocess.run(["bash", str(CHECK), "--install-deps"], check=True, timeout=600)
    real_analyze = shutil.which("systemd-analyze")
    assert real_analyze is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tools = "bash sed grep sort mktemp cp mkdir chmod basename dirname awk rm cat shellcheck"
    for tool in tools.split():
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    log = tmp_path / "apt.log"
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")
    (bin_dir / "apt-get").write_text(
        "#!/bin/sh\n"
        f'echo "apt-get $*" >> "{log}"\n'
        f'case "$*" in *install*systemd*) /bin/ln -sf "{real_analyze}" "{bin_dir}/systemd-analyze";; esac\n'
    )
    for shim in ("id", "apt-get"):
        (bin_dir / shim).chmod(0o755)
    result = subprocess.run(
        [str(bin_dir / "bash"), str(CHECK), str(UNIT)],
        capture_output=True,
        text=True,
        env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "apt-get update -qq",
        "apt-get install -y -qq --no-install-recommends systemd",
    ]
    assert "exposure level" in result.stderr


BUDGET = REPO / "systemd" / "watchdog-budget.sh"


def test_watchdog_budget_times_a_loop_turn_against_the_units_watchdog(tmp_path: Path) -> None:
    """The documented on-Pi check runs end to end (here on a plain frame and the easy level)."""
    import sys

    import cv2
    import numpy as np

    frame = tmp_path / "view.png"
    assert cv2.imwrite(str(frame), np.full((120, 160, 3), 90, np.uint8))
    args = ["--frame", str(frame), "--runs", "1", "--level", "easy", "--python", sys.executable]
    result = subprocess.run(
        ["bash", str(BUDGET), *args], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("frame 160x120: slowest vision pass ")
    assert lines[1].startswith("level easy: slowest search ")
    watchdog = parse_unit(UNIT.read_text())["Service"]["WatchdogSec"][0]
    assert f"WatchdogSec={watchdog}: OK" in lines[2]
    tight = subprocess.run(
        ["bash", str(BUDGET), *args, "--watchdog", "0"], capture_output=True, text=True, timeout=300
    )
    assert tight.returncode == 1 and "TOO SLOW" in tight.stdout


def test_watchdog_budget_bad_arguments_are_one_line() -> None:
    result = subprocess.run(
        ["bash", str(BUDGET), "--runs", "zero"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "watchdog-budget: --runs: expected a positive whole number, got 'zero'"
    ]
