"""sd_notify and SIGTERM handling, against a real AF_UNIX datagram socket.

The fake manager is what systemd itself is to the service: a datagram socket
whose address goes into ``NOTIFY_SOCKET``. Time is a fake clock, so the
watchdog rate limit is tested to the microsecond without sleeping.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.appliance.service import Notifier, ShutdownHandler, ShutdownRequested, notify_address

REPO = Path(__file__).resolve().parents[2]


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakeManager:
    """The systemd side: a bound datagram socket that collects notifications."""

    def __init__(self, sock: socket.socket, env_value: str) -> None:
        self.sock = sock
        self.env_value = env_value

    def messages(self) -> list[str]:
        """Drain every datagram received so far (delivery on AF_UNIX is synchronous)."""
        out: list[str] = []
        while True:
            try:
                out.append(self.sock.recv(4096).decode("utf-8"))
            except BlockingIOError:
                return out


@pytest.fixture
def manager() -> Iterator[FakeManager]:
    # AF_UNIX paths are limited to ~108 bytes; pytest's tmp_path can be longer.
    tmp = tempfile.mkdtemp(prefix="oq-notify-")
    path = os.path.join(tmp, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.setblocking(False)
    try:
        yield FakeManager(sock, path)
    finally:
        sock.close()
        shutil.rmtree(tmp)


@pytest.fixture
def abstract_manager() -> Iterator[FakeManager]:
    name = f"oanquan-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.setblocking(False)
    try:
        yield FakeManager(sock, "@" + name)
    finally:
        sock.close()


def test_without_notify_socket_every_call_is_a_no_op() -> None:
    notifier = Notifier.from_environ({})
    assert not notifier.enabled
    assert notifier.watchdog_interval is None
    assert notifier.ready("x") is False
    assert notifier.status("x") is False
    assert notifier.watchdog() is False
    assert notifier.stopping() is False
    notifier.close()


def test_ready_status_and_stopping_reach_the_manager(manager: FakeManager) -> None:
    with Notifier.from_environ({"NOTIFY_SOCKET": manager.env_value}) as notifier:
        assert notifier.enabled
        assert notifier.ready("attract mode")
        assert notifier.status("playing: turn of player 1")
        assert notifier.stopping()
    assert manager.messages() == [
        "READY=1\nSTATUS=attract mode",
        "STATUS=playing: turn of player 1",
        "STOPPING=1",
    ]


def test_abstract_namespace_socket_is_supported(abstract_manager: FakeManager) -> None:
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": abstract_manager.env_value})
    assert notifier.ready()
    notifier.close()
    assert abstract_manager.messages() == ["READY=1"]


def test_status_newlines_cannot_inject_other_fields(manager: FakeManager) -> None:
    notifier = Notifier(manager.env_value)
    notifier.status("camera lost\nWATCHDOG=1\n  retrying")
    assert manager.messages() == ["STATUS=camera lost WATCHDOG=1 retrying"]


def test_watchdog_is_rate_limited_to_half_the_watchdog_interval(manager: FakeManager) -> None:
    clock = FakeClock()
    env = {"NOTIFY_SOCKET": manager.env_value, "WATCHDOG_USEC": "30000000"}
    notifier = Notifier.from_environ(env, clock=clock)
    assert notifier.watchdog_interval == 15.0

    sent = []
    for t in (0.0, 1.0, 14.999999, 15.0, 20.0, 29.9, 30.0, 45.5):
        clock.now = 1000.0 + t
        sent.append(notifier.watchdog())
    assert sent == [True, False, False, True, False, False, True, True]
    assert manager.messages() == ["WATCHDOG=1"] * 4


def test_watchdog_is_off_without_watchdog_usec(manager: FakeManager) -> None:
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": manager.env_value}, clock=FakeClock())
    assert notifier.watchdog() is False
    assert manager.messages() == []


@pytest.mark.parametrize(("watchdog_pid", "expected"), [("4242", True), ("999", False)])
def test_watchdog_pid_must_be_ours(manager: FakeManager, watchdog_pid: str, expected: bool) -> None:
    env = {
        "NOTIFY_SOCKET": manager.env_value,
        "WATCHDOG_USEC": "10000000",
        "WATCHDOG_PID": watchdog_pid,
    }
    notifier = Notifier.from_environ(env, clock=FakeClock(), pid=4242)
    assert notifier.watchdog() is expected
    assert manager.messages() == (["WATCHDOG=1"] if expected else [])


def test_extend_timeout_is_sent_in_microseconds(manager: FakeManager) -> None:
    Notifier(manager.env_value).extend_timeout(20.5)
    assert manager.messages() == ["EXTEND_TIMEOUT_USEC=20500000"]


def test_a_missing_manager_is_logged_once_and_never_raises(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    notifier = Notifier(str(tmp_path / "gone"), watchdog_usec=2_000_000, clock=clock)
    assert notifier.ready() is False
    assert notifier.watchdog() is False
    # A failed ping is not remembered as sent: the next turn tries again.
    assert notifier.watchdog() is False
    assert len([r for r in caplog.records if "sd_notify" in r.getMessage()]) == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/run/systemd/notify", "/run/systemd/notify"),
        ("@x", "\0x"),
        ("@", None),
        ("relative", None),
        ("vsock:2:1234", None),
    ],
)
def test_notify_address(value: str, expected: str | None) -> None:
    assert notify_address(value) == expected


def test_unusable_notify_socket_disables_notifications() -> None:
    assert not Notifier.from_environ({"NOTIFY_SOCKET": "vsock:2:1234"}).enabled


def test_sigterm_raises_a_clean_exit_once_and_tells_systemd(manager: FakeManager) -> None:
    before = signal.getsignal(signal.SIGTERM)
    notifier = Notifier(manager.env_value)
    cleaned_up = []
    with pytest.raises(ShutdownRequested) as info, ShutdownHandler(notifier=notifier) as shutdown:
        try:
            signal.raise_signal(signal.SIGTERM)
        finally:
            # A second SIGTERM during cleanup must not abort the cleanup.
            signal.raise_signal(signal.SIGTERM)
            cleaned_up.append("display blanked")
    assert info.value.code == 0
    assert info.value.signum == signal.SIGTERM
    assert str(info.value) == "stopped by SIGTERM"
    assert shutdown.requested
    assert cleaned_up == ["display blanked"]
    assert manager.messages() == ["STOPPING=1\nSTATUS=shutting down"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_polling_mode_sets_the_flag_without_raising() -> None:
    with ShutdownHandler(raise_exit=False) as shutdown:
        signal.raise_signal(signal.SIGTERM)
        assert shutdown.requested
        assert shutdown.signum == signal.SIGTERM


CHILD = textwrap.dedent(
    """
    import sys
    from companion.appliance.service import Notifier, ShutdownHandler

    notifier = Notifier.from_environ()
    with ShutdownHandler(notifier=notifier):
        try:
            notifier.ready("attract mode")
            print("running", flush=True)
            sys.stdin.readline()  # the main loop, blocked on I/O
            print("loop ended without a signal", flush=True)
        finally:
            print("display blanked", flush=True)
    """
)


def test_systemctl_stop_ends_the_process_cleanly(manager: FakeManager) -> None:
    """What ``systemctl stop`` does: SIGTERM to a process blocked in its loop."""
    env = {**os.environ, "NOTIFY_SOCKET": manager.env_value, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "running\n"
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert out == "display blanked\n"
    assert manager.messages() == [
        "READY=1\nSTATUS=attract mode",
        "STOPPING=1\nSTATUS=shutting down",
    ]
