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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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

    def relock(self) -> dict[str, Any]:
        """Re-measure exposure and white balance and lock them again; {} for recorded frames.

        Daylight drifts over a day while the lock holds: the app calls this
        between games (never mid-game, so the counter's brightness stays put).
        """
        return {}

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
    """Replays a folder of images in file-name order (laptop demo, regression tests);
    ``hold``: each image stands for that many frames in a row, as a camera over a still
    scene sees it."""

    def __init__(
        self, folder: Path | str, *, clock: Clock = monotonic, loop: bool = False, hold: int = 1
    ) -> None:
        if hold < 1:
            raise ValueError(f"hold: expected at least 1 frame an image, got {hold}")
        self.folder = Path(folder)
        super().__init__(f"replay:{self.folder.name}", clock)
        self.loop = loop
        self.hold = hold
        self._files: list[Path] = []
        self._index = 0
        self._held: tuple[BGRImage, str, dict[str, object]] | None = None
        self._held_left = 0

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
        self._held, self._held_left = None, 0

    def _read(self) -> tuple[BGRImage, str, dict[str, object]]:
        if self._held is not None and self._held_left > 0:
            self._held_left -= 1
            image, name, meta = self._held
            return image.copy(), name, dict(meta)
        frame = self._next_file()
        self._held, self._held_left = frame, self.hold - 1
        return frame[0].copy() if self.hold > 1 else frame[0], frame[1], frame[2]

    def _next_file(self) -> tuple[BGRImage, str, dict[str, object]]:
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

    def relock(self) -> dict[str, Any]:
        """Hand exposure and white balance back to the driver, let them settle, lock again."""
        import cv2

        cap = self._cap
        if cap is None:
            raise CameraStoppedError(f"camera {self.name}: not started")
        cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, 3)  # V4L2: 3 = aperture priority (auto)
        cap.set(cv2.CAP_PROP_AUTO_WB, 1)
        for _ in range(self.settings.settle_frames):
            cap.grab()
        self.locked = {}
        self._lock_v4l2(cap)
        return dict(self.locked)

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


#: Rounding a short exposure up to one flicker period brightens the image by
#: period / exposure (the gain is already 1). Up to this factor the rounding is
#: worth it; beyond it the light is daylight-bright, which does not flicker, and
#: rounding would clip the chalk.
MAX_FLICKER_BOOST = 2.0


def flicker_safe(
    exposure_us: int, gain: float, period_us: int | None, *, max_boost: float = MAX_FLICKER_BOOST
) -> tuple[int, float]:
    """Round a settled exposure to whole mains-flicker periods, keeping brightness via gain.

    Lamps on 50 Hz mains flicker at 100 Hz: an exposure that is not a multiple
    of 10 ms shows bands that move from frame to frame, and a short one (the
    imx708's auto exposure runs up to 15 ms at gain 1 before raising the gain)
    bands worst. The total exposure x gain is kept where the gain allows it;
    gain cannot go below 1, so a shorter exposure is rounded up to one period
    and the frame gets brighter, by at most ``max_boost``; a scene brighter than
    that is left alone (see :data:`MAX_FLICKER_BOOST`).

    >>> flicker_safe(23000, 2.0, 10000)
    (20000, 2.3)
    >>> flicker_safe(6000, 1.0, 10000)
    (10000, 1.0)
    """
    if not period_us:
        return exposure_us, gain
    total = exposure_us * gain
    periods = max(1, round(exposure_us / period_us))
    if total < periods * period_us:  # the gain would have to go below 1
        periods = max(1, int(total // period_us))
    rounded = periods * period_us
    if total * max_boost < rounded:
        return exposure_us, gain
    return rounded, round(max(1.0, total / rounded), 3)


@dataclass(frozen=True)
class SensorChoice:
    """The sensor mode to run and the output size that keeps its whole field of view."""

    mode_size: tuple[int, int]
    bit_depth: int | None
    output: tuple[int, int]


def _full_field(mode: Mapping[str, Any], array: tuple[int, int]) -> bool:
    crop = mode.get("crop_limits")
    if not crop or len(crop) != 4:
        return True
    return bool(crop[2] >= 0.98 * array[0] and crop[3] >= 0.98 * array[1])


def choose_sensor_mode(
    modes: Sequence[Mapping[str, Any]],
    pixel_array: tuple[int, int],
    wanted: tuple[int, int],
    *,
    match_aspect: bool = True,
) -> SensorChoice | None:
    """Pick a full-field sensor mode for ``wanted`` and an output size of the sensor's shape.

    Without this, libcamera may pick a cropped mode (the HQ camera's 2028x1080,
    the imx708's 1536x864) or the ISP crops the sides to a 4:3 request on the
    16:9 Camera Module 3. The output keeps the requested width, capped at the
    sensor width, and takes the sensor's aspect ratio (even sizes). The mode is
    the smallest full-field one at least that large (binned modes are faster),
    else the largest. None if the camera lists no modes (old picamera2, fakes).
    """
    full = [m for m in modes if m.get("size") and _full_field(m, pixel_array)]
    if not full:
        return None
    aw, ah = pixel_array
    width, height = wanted
    if match_aspect:
        width = min(width, aw)
        height = round(width * ah / aw)
    width, height = width - width % 2, height - height % 2
    by_area = sorted(full, key=lambda m: int(m["size"][0]) * int(m["size"][1]))
    big_enough = [m for m in by_area if m["size"][0] >= width and m["size"][1] >= height]
    mode = big_enough[0] if big_enough else by_area[-1]
    depth = mode.get("bit_depth")
    return SensorChoice(
        (int(mode["size"][0]), int(mode["size"][1])),
        None if depth is None else int(depth),
        (width, height),
    )


# libcamera control values (controls.AfModeEnum, AfTriggerEnum, AfStateEnum,
# AeFlickerModeEnum); plain ints so this module needs no libcamera import.
AF_MODE_MANUAL = 0
AF_MODE_AUTO = 1
AF_TRIGGER_START = 0
AF_STATE_FOCUSED = 2
AF_STATE_FAILED = 3
AE_FLICKER_MANUAL = 1
#: Frames an autofocus sweep may take before we give up and keep where it got to.
AF_MAX_FRAMES = 60


class Picamera2Camera(_FrameSource):
    """A CSI camera through picamera2: full-field mode, focus held, AE/AWB locked.

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
        #: The sensor mode and output size chosen at start (None: picamera2 chose).
        self.sensor: SensorChoice | None = None

    def _open(self) -> None:
        cam = self._create()
        try:
            cam.configure(self._configuration(cam))
            cam.start()
            self._cam = cam
            self.locked = self._lock(cam)
        except CameraStoppedError:
            self._shutdown(cam)
            raise
        except Exception as exc:
            self._shutdown(cam)
            raise DeviceError(f"camera picamera2: cannot start: {exc}") from exc

    def _configuration(self, cam: Any) -> Any:
        s = self.settings
        modes = getattr(cam, "sensor_modes", None) or []
        props = getattr(cam, "camera_properties", None) or {}
        array = props.get("PixelArraySize")
        choice = None
        if modes and array:
            choice = choose_sensor_mode(
                modes, (int(array[0]), int(array[1])), (s.width, s.height),
                match_aspect=s.match_sensor,
            )  # fmt: skip
        self.sensor = choice
        size = choice.output if choice is not None else (s.width, s.height)
        if choice is not None and array is not None and size != (s.width, s.height):
            log.warning(
                "camera picamera2: %dx%d does not have the sensor's shape (%dx%d); "
                "capturing %dx%d so the whole field of view is kept",
                s.width, s.height, array[0], array[1], size[0], size[1],
            )  # fmt: skip
        kwargs: dict[str, Any] = {"main": {"size": size, "format": "RGB888"}, "buffer_count": 2}
        if choice is None:
            return cam.create_still_configuration(**kwargs)
        sensor: dict[str, Any] = {"output_size": choice.mode_size}
        if choice.bit_depth is not None:
            sensor["bit_depth"] = choice.bit_depth
        try:
            return cam.create_still_configuration(**kwargs, sensor=sensor)
        except TypeError:
            # picamera2 before the ``sensor`` argument (0.3.13) picks the mode by
            # the raw stream's size instead.
            return cam.create_still_configuration(**kwargs, raw={"size": choice.mode_size})

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

    def _metadata(self, cam: Any) -> dict[str, Any]:
        return dict(self._wait(cam.capture_metadata(wait=False)))

    def _supports(self, cam: Any, *names: str) -> bool:
        controls = getattr(cam, "camera_controls", None) or {}
        return all(name in controls for name in names)

    def _focus(self, cam: Any) -> dict[str, Any]:
        """Where to hold the lens: 1/focus_m dioptres, or where one AF sweep ended.

        libcamera leaves a Camera Module 3 in manual focus at its tuning default
        (about 1 dioptre = 1 m); at 2.5 m that blurs a pebble by several pixels.
        Fixed-focus cameras (HQ, v2, USB) have no AfMode and get nothing.
        """
        if not self._supports(cam, "AfMode", "LensPosition"):
            return {}
        s = self.settings
        low, high = (float(v) for v in cam.camera_controls["LensPosition"][:2])
        if s.focus_m is not None:
            position: float | None = 1.0 / s.focus_m
        else:
            cam.set_controls({"AfMode": AF_MODE_AUTO, "AfTrigger": AF_TRIGGER_START})
            metadata: dict[str, Any] = {}
            for _ in range(AF_MAX_FRAMES):
                metadata = self._metadata(cam)
                if metadata.get("AfState") in (AF_STATE_FOCUSED, AF_STATE_FAILED):
                    break
            position = metadata.get("LensPosition")
            if metadata.get("AfState") != AF_STATE_FOCUSED:
                log.warning(
                    "camera picamera2: autofocus did not settle (AfState %s); holding the lens "
                    "at %s dioptres; set camera.focus_m to the lens-to-board distance",
                    metadata.get("AfState"), position,
                )  # fmt: skip
        if position is None:
            return {"AfMode": AF_MODE_MANUAL}
        focus = float(position)
        if high > low:
            focus = min(max(focus, low), high)
        return {"AfMode": AF_MODE_MANUAL, "LensPosition": round(focus, 3)}

    def _lock(self, cam: Any, focus: dict[str, Any] | None = None) -> dict[str, Any]:
        """Hold the focus, let AE/AWB settle, then pin exposure, gain and colour gains.

        ``focus`` None: find it (:meth:`_focus`); otherwise keep that lens setting.
        """
        s = self.settings
        if s.flicker_period_us and self._supports(cam, "AeFlickerMode", "AeFlickerPeriod"):
            # While AE settles: let it choose whole flicker periods itself.
            cam.set_controls(
                {"AeFlickerMode": AE_FLICKER_MANUAL, "AeFlickerPeriod": s.flicker_period_us}
            )
        if focus is None:
            focus = self._focus(cam)
        metadata: dict[str, Any] = {}
        for _ in range(max(1, s.settle_frames)):
            metadata = self._metadata(cam)
        exposure = s.exposure_us if s.exposure_us is not None else metadata.get("ExposureTime")
        gain = s.analogue_gain if s.analogue_gain is not None else metadata.get("AnalogueGain")
        if s.exposure_us is None and exposure is not None and gain is not None:
            settled = int(exposure), float(gain)
            exposure, gain = flicker_safe(*settled, s.flicker_period_us)
            if (
                s.flicker_period_us
                and (exposure, gain) == settled
                and settled[0] < s.flicker_period_us
            ):
                log.warning(
                    "camera picamera2: scene too bright for a flicker-free exposure (%d us at "
                    "gain %.2f); bands may show under mains lamps: dim the light or shade the lens",
                    *settled,
                )  # fmt: skip
        gains = s.colour_gains if s.colour_gains is not None else metadata.get("ColourGains")
        controls: dict[str, Any] = {"AeEnable": False, "AwbEnable": False, **focus}
        if exposure is not None:
            controls["ExposureTime"] = int(exposure)
        if gain is not None:
            controls["AnalogueGain"] = float(gain)
        if gains is not None:
            controls["ColourGains"] = (float(gains[0]), float(gains[1]))
        cam.set_controls(controls)
        log.info("camera picamera2: locked %s", controls)
        return controls

    def relock(self) -> dict[str, Any]:
        """Hand exposure and white balance back to auto, settle, lock again.

        The focus stays where it was held: the camera and board have not moved,
        and a new sweep would cost seconds between games.
        """
        cam = self._cam
        if cam is None or not self._running:
            raise CameraStoppedError("camera picamera2: not started")
        focus = {k: v for k, v in self.locked.items() if k in ("AfMode", "LensPosition")}
        cam.set_controls({"AeEnable": True, "AwbEnable": True})
        self.locked = self._lock(cam, focus)
        return dict(self.locked)

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
