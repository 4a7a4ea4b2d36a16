"""The ``oanquan`` command: one entry point, each subcommand loaded lazily.

Subcommands live in their own modules and take their own argument list, so a
command that needs OpenCV does not slow down ``oanquan rules replay``, and a
missing optional backend breaks only the command that uses it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from importlib import metadata

from companion.appliance.memory import keep_freed_memory

#: command words -> "module:function"; the function takes argv and returns an exit status.
COMMANDS: dict[tuple[str, ...], tuple[str, str]] = {
    ("rules", "replay"): ("companion.commands.replay:main", "replay games given as JSON Lines"),
    ("play",): ("companion.commands.play:main", "play a game in the terminal"),
    ("analyze",): (
        "companion.commands.analyze:analyze_main",
        "read board images and print the counts",
    ),
    ("calibrate",): (
        "companion.commands.calibrate:calibrate_main",
        "give the board corners by hand",
    ),
    ("tally",): ("companion.commands.tally:main", "count spread pieces to settle a score"),
    ("track",): ("companion.commands.track:main", "referee a folder of frames"),
    ("ai", "serve"): ("companion.commands.ai_serve:main", "answer move requests as JSON Lines"),
    ("journal", "export"): (
        "companion.commands.journal:main",
        "write the journal's games as saved games",
    ),
    ("screens",): ("companion.commands.screens:main", "write every OLED screen as PNG"),
    ("selftest",): ("companion.commands.selftest:main", "check display, buttons and camera"),
    ("run",): ("companion.commands.run:main", "run the appliance on the configured hardware"),
    ("demo",): (
        "companion.commands.demo:main",
        "run the whole companion on emulated hardware",
    ),
}


def _usage() -> str:
    lines = ["usage: oanquan [--version] COMMAND [ARGS...]", "", "commands:"]
    for words, (_, text) in COMMANDS.items():
        lines.append(f"  {' '.join(words):<16} {text}")
    lines += ["", "'oanquan COMMAND --help' shows a command's options."]
    return "\n".join(lines)


def _resolve(target: str) -> Callable[[list[str]], int]:
    module_name, func_name = target.split(":")
    module = importlib.import_module(module_name)
    func: Callable[[list[str]], int] = getattr(module, func_name)
    return func


def version() -> str:
    """The installed package's version (the checkout's when run from it uninstalled)."""
    try:
        return metadata.version("oanquan-referee")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _group_usage(first: str) -> str:
    """``oanquan rules`` alone: the subcommands under that word, instead of "unknown"."""
    lines = [f"usage: oanquan {first} SUBCOMMAND [ARGS...]", "", "subcommands:"]
    for words, (_, text) in COMMANDS.items():
        if len(words) > 1 and words[0] == first:
            lines.append(f"  {' '.join(words):<16} {text}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if args[0] in ("-V", "--version"):
        print(f"oanquan {version()}")
        return 0
    for words, (target, _) in sorted(COMMANDS.items(), key=lambda item: -len(item[0])):
        if tuple(args[: len(words)]) == words:
            keep_freed_memory()  # (before any frame: see companion.appliance.memory)
            return _resolve(target)(args[len(words) :])
    groups = {words[0] for words in COMMANDS if len(words) > 1}
    if args[0] in groups:
        asked = len(args) == 1 or args[1] in ("-h", "--help")
        print(_group_usage(args[0]), file=sys.stdout if asked else sys.stderr)
        if asked:
            return 0
        print(f"oanquan: unknown command {' '.join(args[:2])!r}", file=sys.stderr)
        return 2
    print(f"oanquan: unknown command {' '.join(args[:2])!r}; try 'oanquan --help'", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
