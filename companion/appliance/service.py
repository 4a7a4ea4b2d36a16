"""Talk to systemd: readiness, status, watchdog, and a clean stop on SIGTERM.

The appliance runs as a ``Type=notify`` unit with ``WatchdogSec=``
(``systemd/oanquan.service``). systemd considers the service started only
when it reads ``READY=1``, shows the last ``STATUS=`` line in
``systemctl status``, and kills and restarts the process when ``WATCHDOG=1``
stops arriving. The watchdog is fed from the main loop itself, never from a
helper thread: a thread would keep the dog fed while the loop is wedged on a
dead I2C bus, which is exactly the failure it is there to catch.

The protocol is one datagram of newline-separated ``KEY=VALUE`` lines sent to
the AF_UNIX socket named by ``$NOTIFY_SOCKET`` (a leading ``@`` means Linux's
abstract namespace). That is a dozen lines of :mod:`socket`, so we do it here
instead of depending on a package. Outside systemd (a laptop, tests, ``oanquan
demo``) ``$NOTIFY_SOCKET`` is unset and every call is a cheap no-op, so callers
never need to ask whether they run under systemd.

SIGTERM: Python's default action for SIGTERM kills the process without running
``finally`` blocks or ``atexit`` hooks, so ``systemctl stop`` would leave the
last frame lit on the OLED (burn-in while the service is down).
:class:`ShutdownHandler` turns the first SIGTERM into :class:`ShutdownRequested`
(a :class:`SystemExit` with status 0), which unwinds the main loop through its
``finally`` blocks where the display is blanked and the camera released.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from types import FrameType
from typing import Any

__all__ = [
    "Notifier",
    "ShutdownHandler",
    "ShutdownRequested",
    "notify_address",
]

log = logging.getLogger(__name__)

Clock = Callable[[], float]
SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


def notify_address(value: str) -> str | None:
    """Return the socket address for a ``$NOTIFY_SOCKET`` value, or None if unusable.

    ``@name`` is an abstract-namespace socket, which Python spells with a
    leading NUL byte; ``/path`` is a filesystem socket. Anything else (empty,
    relative, or the ``vsock:`` form newer systemd uses for VMs) cannot be a
    local appliance's manager, so notifications are switched off rather than
    sent to a wrong place.

    >>> notify_address("@oanquan/notify")
    '\\x00oanquan/notify'
    >>> notify_address("/run/systemd/notify")
    '/run/systemd/notify'
    >>> notify_address("notify") is None
    True
    """
    if value.startswith("@") and len(value) > 1:
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    return None


def _one_line(text: str) -> str:
    """Flatten text to one line: a newline would start a new ``KEY=`` field."""
    return " ".join(text.split())


class Notifier:
    """Send sd_notify messages; silently does nothing when not run by systemd.

    Build it with :meth:`from_environ` in ``oanquan run``; tests pass the
    address, watchdog interval and clock directly. Sending never raises: a
    lost notification is logged once, because a missing ``WATCHDOG=1`` already
    has a consequence (systemd restarts us) and crashing here would only add
    a second failure.
    """

    def __init__(
        self,
        address: str | None,
        *,
        watchdog_usec: int | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self._address = address
        self._clock = clock
        self._watchdog_interval = (
            watchdog_usec / 2_000_000 if watchdog_usec and watchdog_usec > 0 else None
        )
        self._last_watchdog: float | None = None
        self._sock: socket.socket | None = None
        self._warned = False

    @classmethod
    def from_environ(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        clock: Clock = time.monotonic,
        pid: int | None = None,
    ) -> Notifier:
        """Read ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and ``WATCHDOG_PID`` like libsystemd.

        ``WATCHDOG_PID`` names the process systemd expects pings from; if it is
        some other process (we were started by a wrapper that forwarded its
        environment), the watchdog is not ours to feed.
        """
        env = os.environ if environ is None else environ
        raw = env.get("NOTIFY_SOCKET", "")
        address = notify_address(raw) if raw else None
        if raw and address is None:
            log.warning("ignoring unusable NOTIFY_SOCKET=%r", raw)
        watchdog_usec: int | None = None
        try:
            watchdog_usec = int(env.get("WATCHDOG_USEC", "0")) or None
        except ValueError:
            log.warning("ignoring unparsable WATCHDOG_USEC=%r", env.get("WATCHDOG_USEC"))
        watchdog_pid = env.get("WATCHDOG_PID")
        own_pid = os.getpid() if pid is None else pid
        if watchdog_pid and watchdog_pid != str(own_pid):
            watchdog_usec = None
        return cls(address, watchdog_usec=watchdog_usec, clock=clock)

    @property
    def enabled(self) -> bool:
        """True when there is a notify socket to talk to."""
        return self._address is not None

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between ``WATCHDOG=1`` pings (half of ``WatchdogSec``), or None."""
        return self._watchdog_interval if self.enabled else None

    def send(self, *fields: str) -> bool:
        """Send ``KEY=VALUE`` fields as one datagram; return whether it went out."""
        if self._address is None or not fields:
            return False
        payload = "\n".join(fields).encode("utf-8")
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(payload, self._address)
        except OSError as exc:
            if not self._warned:
                log.warning("sd_notify to %r failed: %s", self._address, exc)
                self._warned = True
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """Tell systemd start-up is done (hardware initialised or degraded-but-running)."""
        fields = ["READY=1"]
        if status is not None:
            fields.append("STATUS=" + _one_line(status))
        return self.send(*fields)

    def status(self, text: str) -> bool:
        """Set the one-line status shown by ``systemctl status oanquan``."""
        return self.send("STATUS=" + _one_line(text))

    def watchdog(self) -> bool:
        """Feed the watchdog, at most once per half ``WatchdogSec``; call it every loop turn.

        Rate-limiting here lets the main loop call this unconditionally on
        every iteration (tens per second) without flooding PID 1. Returns True
        only when a ping was actually sent.
        """
        interval = self.watchdog_interval
        if interval is None:
            return False
        now = self._clock()
        if self._last_watchdog is not None and now - self._last_watchdog < interval:
            return False
        if self.send("WATCHDOG=1"):
            self._last_watchdog = now
            return True
        return False

    def extend_timeout(self, seconds: float) -> bool:
        """Ask for more time to start or stop (e.g. a camera that is slow to appear)."""
        return self.send(f"EXTEND_TIMEOUT_USEC={max(0, round(seconds * 1_000_000))}")

    def stopping(self, status: str | None = None) -> bool:
        """Tell systemd we are shutting down on purpose, so it does not count a failure."""
        fields = ["STOPPING=1"]
        if status is not None:
            fields.append("STATUS=" + _one_line(status))
        return self.send(*fields)

    def close(self) -> None:
        """Release the socket; later calls reopen it."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ShutdownRequested(SystemExit):
    """Raised in the main thread when SIGTERM (or another chosen signal) arrives.

    A :class:`SystemExit` subclass with status 0, so an uncaught one ends
    ``oanquan run`` cleanly after every ``finally`` block has run, and
    ``except Exception`` in the loop cannot swallow it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(0)
        self.signum = signum

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"


class ShutdownHandler:
    """Turn SIGTERM into :class:`ShutdownRequested`; use as a context manager.

    Only the first signal raises. A second SIGTERM (an impatient operator, or
    systemd re-sending) while the ``finally`` blocks blank the display is
    ignored, because raising again would abort that cleanup half-way.
    ``requested`` is also set, for loops that prefer to poll. Must be
    installed from the main thread (a rule of :func:`signal.signal`).

    >>> with ShutdownHandler() as shutdown:
    ...     shutdown.requested
    False
    """

    def __init__(
        self,
        signals: Iterable[int] = (signal.SIGTERM,),
        *,
        notifier: Notifier | None = None,
        raise_exit: bool = True,
    ) -> None:
        self._signals = tuple(signals)
        self._notifier = notifier
        self._raise_exit = raise_exit
        self._previous: dict[int, SignalHandler] = {}
        self.requested = False
        self.signum: int | None = None

    def install(self) -> ShutdownHandler:
        """Install the handler for each signal, remembering the previous ones."""
        for signum in self._signals:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def restore(self) -> None:
        """Put back the handlers that were there before :meth:`install`."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            log.info("ignoring %s: already shutting down", signal.Signals(signum).name)
            return
        self.requested = True
        self.signum = signum
        log.info("received %s, shutting down", signal.Signals(signum).name)
        if self._notifier is not None:
            self._notifier.stopping("shutting down")
        if self._raise_exit:
            raise ShutdownRequested(signum)

    def __enter__(self) -> ShutdownHandler:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.restore()
