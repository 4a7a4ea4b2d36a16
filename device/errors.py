"""The hardware layer's exception tree.

Each leaf also inherits the builtin a caller would naturally catch, so code that
knows nothing about ``device`` (``except FileNotFoundError``) still works, while
the app can catch :class:`DeviceError` to degrade instead of crash-looping.
"""

from __future__ import annotations

import errno as _errno


class DeviceError(Exception):
    """Root of every error the hardware layer raises on purpose."""


class DeviceNotFoundError(DeviceError, FileNotFoundError):
    """A device node or bus address that is not there (wiring, I2C/camera not enabled)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.filename = path

    def __str__(self) -> str:
        return str(self.args[0])


class DevicePermissionError(DeviceError, PermissionError):
    """A device node the process may not open (service user not in gpio/i2c/video)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.filename = path

    def __str__(self) -> str:
        return str(self.args[0])


class DeviceBusyError(DeviceError, OSError):
    """A pin or device already claimed by this or another process."""

    def __init__(self, message: str) -> None:
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])


class DeviceIOError(DeviceError, OSError):
    """A device that was found but failed while talking to it (loose cable, ESD)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])


class BackendUnavailableError(DeviceError, ImportError):
    """A hardware library (picamera2, lgpio, smbus2) is not installed in this environment."""


class CameraStoppedError(DeviceError, RuntimeError):
    """The camera delivers no more frames: stopped, unplugged or timed out (never a hang)."""


class EndOfFramesError(DeviceError, EOFError):
    """A replay or generated source has no more frames: a clean end, not a fault."""


class UnreadableImageError(DeviceError, ValueError):
    """A replayed image file that cannot be decoded; names the file."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def from_oserror(exc: OSError, what: str, path: str | None = None) -> DeviceError:
    """Translate an ``OSError`` into our tree by errno, naming ``what`` and the path.

    Anything that is not "missing" or "not allowed" is an I/O fault.
    """
    where = path if path is not None else exc.filename
    suffix = f" ({where})" if where else ""
    if exc.errno in (_errno.ENOENT, _errno.ENODEV, _errno.ENXIO):
        return DeviceNotFoundError(f"{what} not found{suffix}", where)
    if exc.errno in (_errno.EACCES, _errno.EPERM):
        return DevicePermissionError(f"{what}: permission denied{suffix}", where)
    if exc.errno == _errno.EBUSY:
        return DeviceBusyError(f"{what} is busy{suffix}")
    return DeviceIOError(f"{what}: {exc.strerror or exc}{suffix}")
