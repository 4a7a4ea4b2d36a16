"""Camera backends: replay folders, generated frames, OpenCV sources, picamera2 (faked)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from device.camera import (
    GeneratedCamera,
    OpenCvCamera,
    Picamera2Camera,
    ReplayCamera,
    choose_sensor_mode,
    flicker_safe,
    grey_frames,
)
from device.clock import FakeClock
from device.errors import (
    BackendUnavailableError,
    CameraStoppedError,
    DeviceError,
    DeviceNotFoundError,
    EndOfFramesError,
    UnreadableImageError,
)
from device.ports import Camera, Frame
from device.settings import CameraSettings


def solid(level: int, w: int = 32, h: int = 24) -> np.ndarray:
    image = np.zeros((h, w, 3), dtype=np.uint8)
    image[:, :] = (level, 255 - level, 7)  # B, G, R
    return image


def write_images(folder: Path, names_levels: dict[str, int]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, level in names_levels.items():
        assert cv2.imwrite(str(folder / name), solid(level))


# -- Frame ------------------------------------------------------------------------------


def test_frame_is_read_only_and_validated() -> None:
    frame = Frame(solid(10), 1.5, 0, "x")
    assert frame.size == (32, 24)
    with pytest.raises(ValueError):
        frame.image[0, 0, 0] = 1
    with pytest.raises(AttributeError):
        frame.seq = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="HxWx3"):
        Frame(np.zeros((4, 4), dtype=np.uint8), 0.0, 0, "x")
    with pytest.raises(ValueError, match="uint8"):
        Frame(np.zeros((4, 4, 3), dtype=np.float32), 0.0, 0, "x")


# -- replay -----------------------------------------------------------------------------


def test_replay_yields_images_in_file_name_order_with_clock_and_sequence(tmp_path: Path) -> None:
    write_images(tmp_path, {"f_010.png": 30, "f_001.png": 10, "f_002.png": 20})
    (tmp_path / "labels.json").write_text("{}")  # sidecars are not frames
    clock = FakeClock(7.0)
    camera = ReplayCamera(tmp_path, clock=clock)
    assert isinstance(camera, Camera)
    camera.start()
    frames = []
    for _ in range(3):
        frames.append(camera.grab())
        clock.advance(0.5)
    assert [f.source for f in frames] == ["f_001.png", "f_002.png", "f_010.png"]
    assert [int(f.image[0, 0, 0]) for f in frames] == [10, 20, 30]
    assert [f.seq for f in frames] == [0, 1, 2]
    assert [f.t for f in frames] == [7.0, 7.5, 8.0]
    assert frames[0].image.shape == (24, 32, 3)
    with pytest.raises(EndOfFramesError) as info:
        camera.grab()
    assert isinstance(info.value, EOFError)
    camera.stop()


def test_replay_iteration_ends_cleanly(tmp_path: Path) -> None:
    write_images(tmp_path, {"a.png": 1, "b.jpg": 2})
    with ReplayCamera(tmp_path, clock=FakeClock()) as camera:
        assert [f.source for f in camera] == ["a.png", "b.jpg"]


def test_replay_holds_each_image_for_several_frames(tmp_path: Path) -> None:
    write_images(tmp_path, {"a.png": 1, "b.png": 2})
    camera = ReplayCamera(tmp_path, clock=FakeClock(), hold=3)
    camera.start()
    frames = [camera.grab() for _ in range(6)]
    assert [f.source for f in frames] == ["a.png"] * 3 + ["b.png"] * 3
    assert [f.seq for f in frames] == list(range(6))
    assert [int(f.image[0, 0, 0]) for f in frames] == [1, 1, 1, 2, 2, 2]
    with pytest.raises(EndOfFramesError):
        camera.grab()
    with pytest.raises(ValueError, match="hold"):
        ReplayCamera(tmp_path, clock=FakeClock(), hold=0)


def test_replay_loops_when_asked(tmp_path: Path) -> None:
    write_images(tmp_path, {"a.png": 1, "b.png": 2})
    camera = ReplayCamera(tmp_path, clock=FakeClock(), loop=True)
    camera.start()
    assert [camera.grab().source for _ in range(5)] == ["a.png", "b.png", "a.png", "b.png", "a.png"]


def test_an_unreadable_image_is_a_clear_error_naming_the_file(tmp_path: Path) -> None:
    write_images(tmp_path, {"a.png": 1})
    (tmp_path / "b.png").write_bytes(b"this is not a png")
    (tmp_path / "c.png").write_bytes(b"")
    camera = ReplayCamera(tmp_path, clock=FakeClock())
    camera.start()
    assert camera.grab().source == "a.png"
    with pytest.raises(UnreadableImageError, match=r"b\.png") as info:
        camera.grab()
    assert isinstance(info.value, ValueError) and info.value.path.endswith("b.png")
    with pytest.raises(UnreadableImageError, match=r"c\.png"):
        camera.grab()  # the replay moves on; the caller decides whether to continue


def test_missing_or_empty_replay_folder(tmp_path: Path) -> None:
    with pytest.raises(DeviceNotFoundError, match="not found"):
        ReplayCamera(tmp_path / "nope", clock=FakeClock()).start()
    with pytest.raises(DeviceNotFoundError, match="no images"):
        ReplayCamera(tmp_path, clock=FakeClock()).start()


def test_a_stopped_camera_raises_instead_of_hanging(tmp_path: Path) -> None:
    write_images(tmp_path, {"a.png": 1})
    camera = ReplayCamera(tmp_path, clock=FakeClock())
    with pytest.raises(CameraStoppedError, match="not started"):
        camera.grab()
    camera.start()
    camera.stop()
    with pytest.raises(CameraStoppedError) as info:
        camera.grab()
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, DeviceError)


def test_restart_begins_again_at_sequence_zero(tmp_path: Path) -> None:
    write_images(tmp_path, {"a.png": 1, "b.png": 2})
    camera = ReplayCamera(tmp_path, clock=FakeClock())
    camera.start()
    camera.grab()
    camera.stop()
    camera.start()
    frame = camera.grab()
    assert (frame.seq, frame.source) == (0, "a.png")


# -- generated --------------------------------------------------------------------------


def test_generated_frames_come_from_the_callable_and_end_on_none() -> None:
    clock = FakeClock()
    camera = GeneratedCamera(lambda seq: solid(seq) if seq < 3 else None, clock=clock)
    camera.start()
    assert [int(f.image[0, 0, 0]) for f in camera] == [0, 1, 2]


def test_generated_frames_are_copied_so_the_producer_array_stays_writable() -> None:
    shared = solid(5)
    camera = GeneratedCamera(lambda seq: shared, clock=FakeClock())
    camera.start()
    frame = camera.grab()
    shared[0, 0, 0] = 99  # still writable; the frame is unaffected
    assert frame.image[0, 0, 0] == 5


def test_generated_grey_and_bgra_frames_become_bgr() -> None:
    grey = np.full((4, 6), 9, dtype=np.uint8)
    bgra = np.zeros((4, 6, 4), dtype=np.uint8)
    frames = iter([grey, bgra])
    camera = GeneratedCamera(lambda seq: next(frames, None), clock=FakeClock())
    camera.start()
    assert [f.image.shape for f in camera] == [(4, 6, 3), (4, 6, 3)]
    floats = np.zeros((4, 6), dtype=np.float64)
    bad = GeneratedCamera(lambda seq: floats, clock=FakeClock())  # type: ignore[arg-type,return-value]
    bad.start()
    with pytest.raises(ValueError, match="uint8"):
        bad.grab()


def test_grey_frames_is_endless_and_uniform() -> None:
    produce = grey_frames(8, 4, level=77)
    assert produce(0).shape == (4, 8, 3) and int(produce(1000).max()) == 77


# -- OpenCV -----------------------------------------------------------------------------


def test_opencv_camera_over_an_image_sequence_then_stops(tmp_path: Path) -> None:
    write_images(tmp_path, {f"f_{i:03d}.png": 40 + i for i in range(3)})
    settings = CameraSettings(kind="opencv", device=str(tmp_path / "f_%03d.png"))
    camera = OpenCvCamera(settings, clock=FakeClock(), api_preference=cv2.CAP_IMAGES)
    camera.start()
    assert [int(camera.grab().image[0, 0, 0]) for _ in range(3)] == [40, 41, 42]
    with pytest.raises(CameraStoppedError, match="no frame"):
        camera.grab()
    camera.stop()


def test_opencv_camera_that_cannot_open_names_the_source(tmp_path: Path) -> None:
    settings = CameraSettings(kind="opencv", device=str(tmp_path / "missing_%03d.png"))
    camera = OpenCvCamera(settings, clock=FakeClock(), api_preference=cv2.CAP_IMAGES)
    with pytest.raises(DeviceNotFoundError, match="missing_"):
        camera.start()
    assert not camera.running


class FakeCapture:
    """Stands in for cv2.VideoCapture on V4L2: records settings, serves scripted reads."""

    def __init__(self, reads: list[np.ndarray | None], refuse: set[int] | None = None) -> None:
        self.reads = reads
        self.refuse = refuse or set()
        self.set_calls: list[tuple[int, float]] = []
        self.grabs = 0
        self.released = False

    def isOpened(self) -> bool:
        return True

    def set(self, prop: int, value: float) -> bool:
        self.set_calls.append((prop, value))
        return prop not in self.refuse

    def get(self, prop: int) -> float:
        return {cv2.CAP_PROP_EXPOSURE: 156.0, cv2.CAP_PROP_WB_TEMPERATURE: 4600.0}.get(prop, 0.0)

    def grab(self) -> bool:
        self.grabs += 1
        return True

    def read(self) -> tuple[bool, np.ndarray | None]:
        image = self.reads.pop(0) if self.reads else None
        return image is not None, image

    def release(self) -> None:
        self.released = True


def test_usb_camera_settles_then_locks_exposure_and_white_balance() -> None:
    fake = FakeCapture([solid(1)], refuse={cv2.CAP_PROP_WB_TEMPERATURE})
    settings = CameraSettings(kind="opencv", device="/dev/video0", width=1280, height=720)
    camera = OpenCvCamera(settings, clock=FakeClock(), capture_factory=lambda src, api: fake)
    camera.start()
    props = dict(fake.set_calls)
    assert props[cv2.CAP_PROP_FRAME_WIDTH] == 1280 and props[cv2.CAP_PROP_FRAME_HEIGHT] == 720
    assert props[cv2.CAP_PROP_BUFFERSIZE] == 1
    assert props[cv2.CAP_PROP_AUTO_EXPOSURE] == 1 and props[cv2.CAP_PROP_AUTO_WB] == 0
    assert props[cv2.CAP_PROP_EXPOSURE] == 156.0  # the settled value, now fixed
    assert fake.grabs == settings.settle_frames
    assert "wb" not in camera.locked and camera.locked["exposure"] == 156.0
    assert int(camera.grab().image[0, 0, 0]) == 1
    with pytest.raises(CameraStoppedError):
        camera.grab()  # unplugged: reads fail
    camera.stop()
    assert fake.released


# -- picamera2 (faked: the real one only exists on the Pi) ------------------------------


class FakePicamera2:
    """The slice of the Picamera2 API the backend uses, with a scriptable stall."""

    def __init__(self, stall_after: int | None = None) -> None:
        self.config: dict[str, Any] | None = None
        self.controls: list[dict[str, Any]] = []
        self.started = self.stopped = self.closed = False
        self.stall_after = stall_after
        self.captures = 0
        self.timeouts: list[float | None] = []

    def create_still_configuration(self, **kwargs: Any) -> dict[str, Any]:
        return kwargs

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def close(self) -> None:
        self.closed = True

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.controls.append(controls)

    def capture_metadata(self, wait: bool = True) -> tuple[str, int]:
        return ("metadata", 0)

    def capture_array(self, name: str = "main", wait: bool = True) -> tuple[str, int]:
        return ("array", 0)

    def wait(self, job: tuple[str, int], timeout: float | None = None) -> Any:
        self.timeouts.append(timeout)
        if job[0] == "metadata":
            return {"ExposureTime": 12000, "AnalogueGain": 2.5, "ColourGains": (1.9, 1.6)}
        if self.stall_after is not None and self.captures >= self.stall_after:
            raise TimeoutError
        self.captures += 1
        return np.full((6, 8, 4), self.captures, dtype=np.uint8)  # XRGB-like 4 channels


def test_picamera2_locks_the_settled_exposure_and_white_balance() -> None:
    fake = FakePicamera2()
    settings = CameraSettings(settle_frames=3, width=640, height=480, timeout_s=2.0)
    camera = Picamera2Camera(settings, clock=FakeClock(), open_camera=lambda: fake)
    camera.start()
    assert fake.config is not None
    assert fake.config["main"] == {"size": (640, 480), "format": "RGB888"}
    assert fake.controls == [
        {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": 10000,  # settled 12000 us, rounded to whole 100 Hz flicker periods
            "AnalogueGain": 3.0,  # 2.5 * 12000 / 10000: same brightness
            "ColourGains": (1.9, 1.6),
        }
    ]
    frame = camera.grab()
    assert frame.image.shape == (6, 8, 3) and frame.source == "picamera2"
    assert set(fake.timeouts) == {2.0}  # every wait is bounded
    camera.stop()
    assert fake.stopped and fake.closed


def test_picamera2_uses_configured_values_over_settled_ones() -> None:
    fake = FakePicamera2()
    settings = CameraSettings(
        settle_frames=1, exposure_us=20000, analogue_gain=1.0, colour_gains=(2.0, 1.5)
    )
    camera = Picamera2Camera(settings, clock=FakeClock(), open_camera=lambda: fake)
    camera.start()
    assert camera.locked["ExposureTime"] == 20000
    assert camera.locked["AnalogueGain"] == 1.0
    assert camera.locked["ColourGains"] == (2.0, 1.5)


def test_flicker_rounding_can_be_switched_off() -> None:
    fake = FakePicamera2()
    settings = CameraSettings(settle_frames=1, flicker_period_us=None)
    camera = Picamera2Camera(settings, clock=FakeClock(), open_camera=lambda: fake)
    camera.start()
    assert (camera.locked["ExposureTime"], camera.locked["AnalogueGain"]) == (12000, 2.5)


@pytest.mark.parametrize(
    ("exposure", "gain", "expected"),
    [
        (23000, 2.0, (20000, 2.3)),
        (26000, 1.0, (20000, 1.3)),  # rounding up would need a gain below 1
        (15000, 1.0, (10000, 1.5)),  # the imx708's longest exposure at gain 1
        (10000, 4.0, (10000, 4.0)),
        (6000, 1.0, (10000, 1.0)),  # under one period: one period, 1.67x brighter, no bands
        (4000, 2.0, (10000, 1.0)),  # 8 ms worth of light: one period at gain 1
        (7000, 2.0, (10000, 1.4)),  # 14 ms worth: one period, gain keeps the brightness
        (3000, 1.0, (3000, 1.0)),  # daylight-bright (3.3x): left alone, would clip
    ],
)
def test_flicker_safe(exposure: int, gain: float, expected: tuple[int, float]) -> None:
    assert flicker_safe(exposure, gain, 10000) == expected


def test_flicker_safe_for_60_hz_mains() -> None:
    assert flicker_safe(20000, 1.0, 8333) == (16666, 1.2)
    assert flicker_safe(5000, 1.0, 8333) == (8333, 1.0)


# -- picamera2 on a faked Camera Module 3 / HQ camera --------------------------------------

IMX708_MODES = [
    {"size": (1536, 864), "crop_limits": (768, 432, 3072, 1728), "bit_depth": 10},
    {"size": (2304, 1296), "crop_limits": (0, 0, 4608, 2592), "bit_depth": 10},
    {"size": (4608, 2592), "crop_limits": (0, 0, 4608, 2592), "bit_depth": 10},
]
IMX477_MODES = [
    {"size": (1332, 990), "crop_limits": (696, 528, 2664, 1980), "bit_depth": 10},
    {"size": (2028, 1080), "crop_limits": (0, 440, 4056, 2160), "bit_depth": 12},
    {"size": (2028, 1520), "crop_limits": (0, 0, 4056, 3040), "bit_depth": 12},
    {"size": (4056, 3040), "crop_limits": (0, 0, 4056, 3040), "bit_depth": 12},
]


class FakeModule3(FakePicamera2):
    """A Camera Module 3: sensor modes, lens and flicker controls, a scripted AF sweep."""

    def __init__(
        self,
        af_states: list[int] | None = None,
        exposure: int = 12000,
        gain: float = 2.5,
        autofocus: bool = True,
    ) -> None:
        super().__init__()
        self.sensor_modes = IMX708_MODES
        self.camera_properties = {"PixelArraySize": (4608, 2592), "Model": "imx708"}
        self.camera_controls: dict[str, Any] = {
            "AeFlickerMode": (0, 2, 0),
            "AeFlickerPeriod": (100, 1000000, None),
        }
        if autofocus:
            self.camera_controls |= {"AfMode": (0, 2, 0), "LensPosition": (0.0, 15.0, 1.0)}
        self.af_states = list(af_states if af_states is not None else [1, 1, 2])
        self.exposure, self.gain = exposure, gain
        self.af_running = False

    def set_controls(self, controls: dict[str, Any]) -> None:
        super().set_controls(controls)
        if controls.get("AfMode") == 1 and controls.get("AfTrigger") == 0:
            self.af_running = True

    def wait(self, job: tuple[str, int], timeout: float | None = None) -> Any:
        if job[0] != "metadata":
            return super().wait(job, timeout)
        meta: dict[str, Any] = {
            "ExposureTime": self.exposure,
            "AnalogueGain": self.gain,
            "ColourGains": (1.9, 1.6),
            "LensPosition": 1.0,
            "AfState": 0,
        }
        if self.af_running and self.af_states:
            meta["AfState"] = self.af_states.pop(0)
            meta["LensPosition"] = 0.39 if meta["AfState"] == 2 else 0.8
        return meta


def test_module3_focus_is_swept_once_then_held_in_manual() -> None:
    """libcamera leaves the lens at ~1 m otherwise; at 2.55 m that blurs pebbles."""
    fake = FakeModule3(af_states=[1, 1, 2])
    camera = Picamera2Camera(
        CameraSettings(settle_frames=2), clock=FakeClock(), open_camera=lambda: fake
    )
    camera.start()
    assert {"AfMode": 1, "AfTrigger": 0} in fake.controls
    assert camera.locked["AfMode"] == 0  # manual: no hunting when hands move over the board
    assert camera.locked["LensPosition"] == 0.39
    assert fake.controls[-1] == camera.locked


def test_module3_fixed_focus_distance_sets_the_lens_in_dioptres() -> None:
    fake = FakeModule3()
    settings = CameraSettings(settle_frames=1, focus_m=2.55)
    camera = Picamera2Camera(settings, clock=FakeClock(), open_camera=lambda: fake)
    camera.start()
    assert not any(c.get("AfTrigger") == 0 for c in fake.controls)  # no sweep needed
    assert camera.locked["AfMode"] == 0
    assert camera.locked["LensPosition"] == pytest.approx(1 / 2.55, abs=1e-3)


def test_a_failed_autofocus_still_holds_the_lens_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeModule3(af_states=[1, 3])
    camera = Picamera2Camera(
        CameraSettings(settle_frames=1), clock=FakeClock(), open_camera=lambda: fake
    )
    camera.start()
    assert camera.locked["AfMode"] == 0 and camera.locked["LensPosition"] == 0.8
    assert any("focus_m" in r.getMessage() for r in caplog.records)


def test_a_fixed_focus_camera_gets_no_focus_controls() -> None:
    fake = FakeModule3(autofocus=False)
    camera = Picamera2Camera(
        CameraSettings(settle_frames=1), clock=FakeClock(), open_camera=lambda: fake
    )
    camera.start()
    assert not any("AfMode" in c or "LensPosition" in c for c in fake.controls)


def test_auto_exposure_avoids_flicker_while_it_settles() -> None:
    fake = FakeModule3()
    camera = Picamera2Camera(
        CameraSettings(settle_frames=1), clock=FakeClock(), open_camera=lambda: fake
    )
    camera.start()
    assert fake.controls[0] == {"AeFlickerMode": 1, "AeFlickerPeriod": 10000}


def test_a_bright_room_under_one_period_is_locked_at_one_period() -> None:
    """The imx708's AE settles at 6 ms in a bright room: 6 ms would band under lamps."""
    fake = FakeModule3(exposure=6000, gain=1.0)
    camera = Picamera2Camera(
        CameraSettings(settle_frames=1), clock=FakeClock(), open_camera=lambda: fake
    )
    camera.start()
    assert (camera.locked["ExposureTime"], camera.locked["AnalogueGain"]) == (10000, 1.0)


def test_module3_runs_the_full_field_mode_at_its_16_9_shape() -> None:
    """A 4:3 request (the HQ camera's 2028x1520) must not crop 66 degrees to about 52."""
    fake = FakeModule3()
    settings = CameraSettings(settle_frames=1, width=2028, height=1520)
    camera = Picamera2Camera(settings, clock=FakeClock(), open_camera=lambda: fake)
    camera.start()
    assert fake.config is not None
    assert fake.config["main"]["size"] == (2028, 1140)
    assert fake.config["sensor"] == {"output_size": (2304, 1296), "bit_depth": 10}
    assert camera.sensor is not None and camera.sensor.mode_size == (2304, 1296)


def test_an_older_picamera2_gets_the_mode_through_the_raw_stream() -> None:
    class OldModule3(FakeModule3):
        def create_still_configuration(
            self, main: Any = None, raw: Any = None, buffer_count: int = 1
        ) -> dict[str, Any]:
            return {"main": main, "raw": raw, "buffer_count": buffer_count}

    fake = OldModule3()
    settings = CameraSettings(settle_frames=1, width=2028, height=1520)
    Picamera2Camera(settings, clock=FakeClock(), open_camera=lambda: fake).start()
    assert fake.config is not None
    assert fake.config["raw"] == {"size": (2304, 1296)}
    assert fake.config["main"]["size"] == (2028, 1140)


def test_the_site_configs_size_is_module3_full_resolution() -> None:
    fake = FakeModule3()  # systemd/config.toml asks for 4608x2592
    settings = CameraSettings(settle_frames=1, width=4608, height=2592)
    camera = Picamera2Camera(settings, clock=FakeClock(), open_camera=lambda: fake)
    camera.start()
    assert fake.config is not None
    assert fake.config["main"]["size"] == (4608, 2592)
    assert fake.config["sensor"]["output_size"] == (4608, 2592)


@pytest.mark.parametrize(
    ("modes", "array", "wanted", "mode", "output"),
    [
        (IMX708_MODES, (4608, 2592), (4608, 2592), (4608, 2592), (4608, 2592)),
        (IMX708_MODES, (4608, 2592), (1536, 864), (2304, 1296), (1536, 864)),  # not the crop
        (IMX477_MODES, (4056, 3040), (4608, 2592), (4056, 3040), (4056, 3040)),  # capped
        (IMX477_MODES, (4056, 3040), (2028, 1520), (2028, 1520), (2028, 1520)),
        (IMX477_MODES, (4056, 3040), (2028, 1080), (2028, 1520), (2028, 1520)),  # no 16:9 crop
    ],
)
def test_choose_sensor_mode(
    modes: list[dict[str, Any]],
    array: tuple[int, int],
    wanted: tuple[int, int],
    mode: tuple[int, int],
    output: tuple[int, int],
) -> None:
    choice = choose_sensor_mode(modes, array, wanted)
    assert choice is not None
    assert (choice.mode_size, choice.output) == (mode, output)


def test_choose_sensor_mode_can_keep_the_requested_shape() -> None:
    choice = choose_sensor_mode(IMX708_MODES, (4608, 2592), (2028, 1520), match_aspect=False)
    assert choice is not None and choice.output == (2028, 1520)
    assert choose_sensor_mode([], (4608, 2592), (2028, 1520)) is None


def test_relock_between_games_measures_again() -> None:
    """Daylight drifts: the exposure locked at 9:00 is wrong at 16:00."""
    fake = FakeModule3(exposure=12000, gain=2.5)
    camera = Picamera2Camera(
        CameraSettings(settle_frames=1), clock=FakeClock(), open_camera=lambda: fake
    )
    camera.start()
    assert camera.locked["AnalogueGain"] == 3.0
    fake.exposure, fake.gain = 20000, 4.0  # the afternoon is darker
    fake.controls.clear()
    locked = camera.relock()
    assert fake.controls[0] == {"AeEnable": True, "AwbEnable": True}
    assert (locked["ExposureTime"], locked["AnalogueGain"]) == (20000, 4.0)
    assert camera.locked == locked == fake.controls[-1]
    assert not any(c.get("AfTrigger") == 0 for c in fake.controls)  # the focus is kept
    assert locked["LensPosition"] == 0.39
    camera.stop()
    with pytest.raises(CameraStoppedError):
        camera.relock()


def test_recorded_frames_have_nothing_to_relock(tmp_path: Path) -> None:
    assert GeneratedCamera(grey_frames(), clock=FakeClock()).relock() == {}


def test_picamera2_stall_is_a_camera_stopped_error() -> None:
    fake = FakePicamera2(stall_after=1)
    camera = Picamera2Camera(
        CameraSettings(timeout_s=0.5), clock=FakeClock(), open_camera=lambda: fake
    )
    camera.start()
    camera.grab()
    with pytest.raises(CameraStoppedError, match=r"0\.5 s"):
        camera.grab()


def test_picamera2_missing_library_is_reported_not_worked_around(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)
    camera = Picamera2Camera(CameraSettings(), clock=FakeClock())
    with pytest.raises(BackendUnavailableError, match="python3-picamera2"):
        camera.start()
    assert not camera.running


def test_picamera2_start_failure_closes_the_camera() -> None:
    class Failing(FakePicamera2):
        def configure(self, config: dict[str, Any]) -> None:
            raise RuntimeError("Camera in Configured state trying acquire()")

    fake = Failing()
    camera = Picamera2Camera(CameraSettings(), clock=FakeClock(), open_camera=lambda: fake)
    with pytest.raises(DeviceError, match="cannot start"):
        camera.start()
    assert fake.closed and not camera.running


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "webcam"}, "kind"),
        ({"width": 4}, "size"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"exposure_us": 0}, "exposure_us"),
        ({"analogue_gain": 0.5}, "analogue_gain"),
        ({"colour_gains": (1.0, 0.0)}, "colour_gains"),
        ({"kind": "replay"}, "replay_dir"),
        ({"focus_m": 0.0}, "focus_m"),
    ],
)
def test_invalid_camera_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CameraSettings(**kwargs)  # type: ignore[arg-type]
