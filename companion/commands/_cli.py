"""What every command does at its edges: Ctrl-C, a closed pipe, an output path that fails.

A person pressing Ctrl-C or piping into ``head`` gets no traceback: Ctrl-C
ends the command with status 130 (as a shell reports SIGINT), and a reader
that went away ends it quietly with status 1 (standard output is pointed at
``/dev/null`` first, or Python's own flush at exit would print the broken
pipe again). An output file or folder that cannot be written is one line
naming the path and the reason.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

#: Exit status for Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130


def guarded(prog: str, body: Callable[[], int]) -> int:
    """Run a command's body; Ctrl-C and a closed standard output end it without a traceback."""
    try:
        return body()
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):
            print(f"\n{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        quiet_stdout()
        return 1


def quiet_stdout() -> None:
    """Point standard output at /dev/null: its reader has gone, nothing more can reach it."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def why(exc: OSError) -> str:
    """The reason in an OSError, in words (``No such file or directory``)."""
    return exc.strerror or str(exc) or type(exc).__name__


def kind_of(path: Path, what: str) -> str:
    """ "file", "folder", "missing" or "other"; ValueError naming it when it cannot be looked at.

    ``Path.exists()`` raises for a name too long or a path through a file on
    Python 3.11; that is the user's mistake, said in one line.
    """
    try:
        if path.is_dir():
            return "folder"
        if path.is_file():
            return "file"
        return "other" if path.exists() else "missing"
    except OSError as exc:
        raise ValueError(f"{what} {path}: {why(exc)}") from None


def output_dir(path: str | Path, what: str) -> Path:
    """Create (if needed) a folder to write into, or raise ValueError with one line naming it."""
    folder = Path(path)
    if kind_of(folder, what) not in ("folder", "missing"):
        raise ValueError(f"{what} {folder}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{what} {folder}: cannot create the folder: {why(exc)}") from None
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{what} {folder}: the folder is not writable")
    return folder


def output_file(path: str | Path, what: str, suffixes: tuple[str, ...] = ()) -> Path:
    """Check a file can be written (its folder exists, right suffix), or raise ValueError."""
    target = Path(path)
    if suffixes and target.suffix.lower() not in suffixes:
        raise ValueError(f"{what} {target}: the name must end in {' or '.join(suffixes)}")
    if kind_of(target, what) == "folder":
        raise ValueError(f"{what} {target}: is a folder, not a file")
    parent = target.parent
    if kind_of(parent, what) != "folder":
        raise ValueError(f"{what} {target}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise ValueError(f"{what} {target}: not writable")
    return target


def write_text(path: Path, text: str, what: str) -> None:
    """Write a whole text file, or raise ValueError with one line naming it."""
    try:
        path.write_text(text, "utf-8")
    except OSError as exc:
        raise ValueError(f"{what} {path}: cannot write: {why(exc)}") from None
