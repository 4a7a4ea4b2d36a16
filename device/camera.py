# mypy: disable-error-code="import-untyped,import-not-found"
"""Camera backends that all yield :class:`~device.ports.Frame`.

* :class:`Picamera2Camera` - CSI camera on the Pi (picamera2 from apt, imported lazily).
* :class:`OpenCvCamera` - USB/UVC camera (or any ``cv2.VideoCapture`` source).
* :class:`ReplayCamera` - a folder of images, sorted by file name.
* :class:`GeneratedCamera` - frames from a callable (tests, demos).

Live cameras lock exposure and white balance once settled, so the pebble
counter sees the same brightness all game. Every wait is bounded: a dead
camera raises :class:`CameraStoppedError`, never hangs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from device.clock import Clock, monotonic
from device.errors import (
    BackendUnavailableError,
    CameraStoppedError,
    DeviceError,
    DeviceNotFoundError,
    EndOfFramesError,
    UnreadableImageError,
    from_oserror,
)
from device.ports import Frame
from device.settings import CameraSettings

log = logging.getLogger(__name__)

BGRImage = npt.NDArray[np.uint8]

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})


class _FrameSource:
    """Shared start/stop bookkeeping and iteration; subclasses implement ``_read``."""

    def __init__(self, name: str, clock: Clock) -> None:
        self._name = name
        self._clock = clock
        self._running = False
        self._seq = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> None:
        if not self._running:
            self._open()
            self._running = True
            self._seq = 0

    def stop(self) -> None:
        if self._running:
            self._running = False
            self._close()

    def close(self) -> None:
        self.stop()

    def grab(self) -> Frame:
        if not self._running:
            raise CameraStoppedError(f"camera {self._name}: not started")
        image, source, meta = self._read()
        frame = Frame(image, self._clock(), self._seq, source, meta)
        self._seq += 1
        return frame

    def __iter__(self) -> Iterator[Frame]:
        while True:
            try:
                yield self.grab()
            except EndOfFramesError:
                return

    def __enter__(self) -> _FrameSource:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def _read(self) -> tuple[BGRImage, str, dict[str, object]]:
        raise NotImplementedError


def _as_bgr(image: Any, what: str) -> BGRImage:
    """Accept BGR, BGRA/XRGB (drop alpha) or grey frames; anything else is a bug upstream."""
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise ValueError(f"{what}: expected uint8 pixels, got {arr.dtype}")
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, None], 3, axis=2)
    elif arr.ndim == 3 and arr.shape[2] == 4:
        arr = arr[:, :, :3]
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise ValueError(f"{what}: expected an HxWx3 BGR image, got shape {arr.shape}")
    return np.ascontiguousarray(arr)


class ReplayCamera(_FrameSource):
    """Replays a folder of images in file-name order (laptop demo, regression tests)."""

    def __init__(self, folder: Path | str, *, clock: Clock = monotonic, loop: bool = False) -> None:
        self.folder = Path(folder)
        super().__init__(f"replay:{self.folder.name}", clock)
        self.loop = loop
        self._files: list[Path] = []
        self._index = 0

    @property
    def files(self) -> Sequence[Path]:
        return tuple(self._files)

    def _open(self) -> None:
        if not self.folder.is_dir():
            raise DeviceNotFoundError(
                f"camera replay folder not found: {self.folder}", str(self.folder)
            )
        self._files = sorted(
            (
                p
                for p in self.folder.iterdir()
                if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
            ),
            key=lambda p: p.name,
        )
        if not self._files:
            raise DeviceNotFoundError(
                f"camera replay folder has no images: {self.folder}", str(self.folder)
            )
        self._index = 0

    def _read(self) -> tuple[BGRImage, str, dict[str, object]]:
        import cv2

        if self._index >= len(self._files):
            if not self.loop:
                raise EndOfFramesError(
                    f"camera {self.name}: all {len(self._files)} images replayed"
                )
            self._index = 0
        path = self._files[self._index]
        self._index += 1
        try:
            data = np.fromfile(path, dtype=np.uint8)
        except OSError as exc:
            raise from_oserror(exc, "replayed image", str(path)) from exc
        image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
        if image is None:
            raise UnreadableImageError(f"camera {self.name}: cannot decode image {path}", str(path))
        return _as_bgr(image, str(path)), path.name, {"path": str(path)}


class GeneratedCamera(_FrameSource):
    """Frames from ``produce(seq)``; returning None ends the stream cleanly."""

    def __init__(
        self,
        produce: Callable[[int], BGRImage | None],
        *,
        clock: Clock = monotonic,
        name: str = "generated",
    ) -> None:
        super().__init__(name, clock)
        self._produce = produce

    def _read(self) -> tuple[BGRImage, str, dict[str, object]]:
        image = self._produce(self._seq)
        if image is None:
            raise EndOfFramesError(f"camera {self.name}: generator ended after {self._seq} frames")
        return _as_bgr(image, self.name).copy(), self.name, {}


def grey_frames(width: int = 640, height: int = 480, level: int = 128) -> Callable[[int], BGRImage]:
    """An endless uniform frame source: the default for the fake backend."""
    frame = np.full((height, width, 3), level, dtype=np.uint8)

    def produce(seq: int) -> BGRImage:
        return frame

    return produce


class OpenCvCamera(_FrameSource):
    """A ``cv2.VideoCapture`` source (USB camera by ``/dev/v4l/by-id/...`` or index).

    OpenCV cannot tell a finished source from an unplugged one: after
    ``max_failures`` failed reads in a row the camera counts as stopped.
    """

    def __init__(
        self,
        settings: CameraSettings,
        *,
        clock: Clock = monotonic,
        api_preference: int | None = None,
        max_failures: int = 3,
        capture_factory: Callable[[str | int, int], Any] | None = None,
    ) -> None:
        super().__init__(f"opencv:{settings.device}", clock)
        self.settings = settings
        self._api = api_preference
        self._max_failures = max_failures
        self._capture_factory = capture_factory
        self._cap: Any = None
        self.locked: dict[str, float] = {}

    def _open(self) -> None:
        import cv2

        api = self._api if self._api is not None else cv2.CAP_V4L2
        source = self.settings.device
        make = self._capture_factory or cv2.VideoCapture
        cap = make(source, api)
        if not cap.isOpened():
            cap.release()
            raise DeviceNotFoundError(f"camera {source!r} cannot be opened", str(source))
        self._cap = cap
        if api == cv2.CAP_V4L2:
            self._configure_v4l2(cap)

    def _configure_v4l2(self, cap: Any) -> None:
        """Ask for MJPG at the configured size and a 1-frame buffer (no stale images)."""
        import cv2

        cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter.fourcc(*"MJPG"))
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.settings.width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.settings.height)
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        # Bound every read (OpenCV >= 4.6 on V4L2) so an unplugged camera cannot hang us.
        cap.set(cv2.CAP_PROP_READ_TIMEOUT_MSEC, self.settings.timeout_s * 1000.0)
        for _ in range(self.settings.settle_frames):
            cap.grab()
        self._lock_v4l2(cap)

    def _lock_v4l2(self, cap: Any) -> None:
        """Freeze exposure/white balance at the settled values; drivers differ, so log refusals."""
        import cv2

        exposure = self.settings.exposure_us
        wanted: list[tuple[int, float, str]] = [
            (cv2.CAP_PROP_AUTO_EXPOSURE, 1, "manual exposure"),  # V4L2: 1 manual, 3 auto
            (cv2.CAP_PROP_AUTO_WB, 0, "manual white balance"),
        ]
        if exposure is not None:
            wanted.append(
                (cv2.CAP_PROP_EXPOSURE, exposure / 100.0, "exposure")
            )  # V4L2 units: 100 us
        else:
            wanted.append(
                (cv2.CAP_PROP_EXPOSURE, float(cap.get(cv2.CAP_PROP_EXPOSURE)), "exposure")
            )
        wanted.append(
            (cv2.CAP_PROP_WB_TEMPERATURE, float(cap.get(cv2.CAP_PROP_WB_TEMPERATURE)), "wb")
        )
        for prop, value, label in wanted:
            if cap.set(prop, value):
                self.locked[label] = float(value)
            else:
                log.info("camera %s: driver refused %s=%s", self.name, label, value)

    def _read(self) -> tuple[BGRImage, str, dict[str, object]]:
        for _ in range(self._max_failures):
            ok, image = self._cap.read()
            if ok and image is not None:
                return _as_bgr(image, self.name), self.name, {}
        raise CameraStoppedError(
            f"camera {self.name}: no frame after {self._max_failures} attempts (unplugged or ended)"
        )

    def _close(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()


def flicker_safe(exposure_us: int, gain: float, period_us: int | None) -> tuple[int, float]:
    """Round a settled exposure to whole mains-flicker periods, keeping brightness via gain.

    Lamps on 50 Hz mains flicker at 100 Hz: exposures that are not a multiple of
    10 ms show bands that move from frame to frame. Exposures shorter than one
    period are left alone (rounding up would overexpose: gain cannot go below 1),
    and so is the gain floor: then the exposure is rounded down.

    >>> flicker_safe(23000, 2.0, 10000)
    (20000, 2.3)
    """
    if not period_us or exposure_us < period_us:
        return exposure_us, gain
    rounded = max(period_us, round(exposure_us / period_us) * period_us)
    if gain * exposure_us / rounded < 1.0:  # gain cannot go below 1: round down instead
        rounded = exposure_us // period_us * period_us
    return rounded, round(gain * exposure_us / rounded, 3)


class Picamera2Camera(_FrameSource):
    """A CSI camera through picamera2, with AE/AWB locked after settling.

    ``open_camera`` builds the Picamera2 object; tests pass a fake, the Pi
    leaves it None and picamera2 is imported here (apt package, not on PyPI).
    """

    def __init__(
        self,
        settings: CameraSettings,
        *,
        clock: Clock = monotonic,
        open_camera: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__("picamera2", clock)
        self.settings = settings
        self._open_camera = open_camera
        self._cam: Any = None
        #: Controls in force after locking; store them to reuse after a reboot.
        self.locked: dict[str, Any] = {}

    def _open(self) -> None:
        cam = self._create()
        try:
            config = cam.create_still_configuration(
                main={"size": (self.settings.width, self.settings.height), "format": "RGB888"},
                buffer_count=2,
            )
            cam.configure(config)
            cam.start()
            self._cam = cam
            self.locked = self._lock(cam)
        except CameraStoppedError:
            self._shutdown(cam)
            raise
        except Exception as exc:
            self._shutdown(cam)
            raise DeviceError(f"camera picamera2: cannot start: {exc}") from exc

    def _create(self) -> Any:
        if self._open_camera is not None:
            return self._open_camera()
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise BackendUnavailableError(
                f"picamera2 is not importable ({exc}); on the Pi: apt install python3-picamera2 "
                "and a venv with --system-site-packages"
            ) from exc
        try:
            return Picamera2()
        except IndexError as exc:  # picamera2 raises this when no camera is attached
            raise DeviceNotFoundError("camera picamera2: no camera attached", None) from exc
        except RuntimeError as exc:
            raise DeviceError(f"camera picamera2: {exc}") from exc

    def _wait(self, job: Any) -> Any:
        try:
            return self._cam.wait(job, timeout=self.settings.timeout_s)
        except TimeoutError as exc:
            raise CameraStoppedError(
                f"camera picamera2: no frame within {self.settings.timeout_s:g} s"
            ) from exc

    def _lock(self, cam: Any) -> dict[str, Any]:
        """Let AE/AWB settle, then pin exposure, gain and colour gains (configured or settled)."""
        s = self.settings
        metadata: dict[str, Any] = {}
        for _ in range(max(1, s.settle_frames)):
            metadata = self._wait(cam.capture_metadata(wait=False))
        exposure = s.exposure_us if s.exposure_us is not None else metadata.get("ExposureTime")
        gain = s.analogue_gain if s.analogue_gain is not None else metadata.get("AnalogueGain")
        if s.exposure_us is None and exposure is not None and gain is not None:
            exposure, gain = flicker_safe(int(exposure), float(gain), s.flicker_period_us)
        gains = s.colour_gains if s.colour_gains is not None else metadata.get("ColourGains")
        controls: dict[str, Any] = {"AeEnable": False, "AwbEnable": False}
        if exposure is not None:
            controls["ExposureTime"] = int(exposure)
        if gain is not None:
            controls["AnalogueGain"] = float(gain)
        if gains is not None:
            controls["ColourGains"] = (float(gains[0]), float(gains[1]))
        cam.set_controls(controls)
        log.info("camera picamera2: locked %s", controls)
        return controls

    def _read(self) -> tuple[BGRImage, str, dict[str, object]]:
        image = self._wait(self._cam.capture_array("main", wait=False))
        # "RGB888" is B, G, R in memory: already OpenCV order.
        return _as_bgr(image, self.name), self.name, {"controls": dict(self.locked)}

    def _shutdown(self, cam: Any) -> None:
        for method in ("stop", "close"):
            try:
                getattr(cam, method)()
            except Exception as exc:
                log.warning("camera picamera2: %s failed: %s", method, exc)

    def _close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            self._shutdown(cam)
