"""The commands keep freed frame buffers in the heap (companion.appliance.memory)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import companion.__main__ as entry

# In a fresh interpreter: how many MiB of a 20 MiB buffer glibc maps apart from the
# heap (mallinfo2's hblkhd), and how many the heap still holds once it is freed.
_PROBE = """
import ctypes, sys
from companion.appliance.memory import keep_freed_memory
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                 "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
if sys.argv[1] == "keep":
    assert keep_freed_memory()
before = libc.mallinfo2()
buffer = ctypes.create_string_buffer(20 << 20)
during = libc.mallinfo2()
del buffer
after = libc.mallinfo2()
print((during.hblkhd - before.hblkhd) >> 20, (after.arena - before.arena) >> 20)
"""


def _probe(mode: str) -> tuple[int, int]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[0]), int(out[1])


def test_a_frame_sized_buffer_comes_from_the_heap_and_stays_there() -> None:
    mapped, kept = _probe("plain")
    assert mapped >= 20 and kept == 0  # glibc's default: mapped apart, given back when freed
    mapped, kept = _probe("keep")
    assert mapped == 0 and kept >= 20  # served by the heap, and kept for the next frame


def test_every_command_starts_with_the_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[int] = []

    def keep() -> bool:
        calls.append(1)
        return True

    monkeypatch.setattr(entry, "keep_freed_memory", keep)
    with pytest.raises(SystemExit):
        entry.main(["rules", "replay", "--help"])
    assert "usage" in capsys.readouterr().out and calls == [1]
    assert entry.main(["--version"]) == 0 and calls == [1]  # (no command, no frames)
