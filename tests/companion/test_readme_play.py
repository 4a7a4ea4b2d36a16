"""README's ``oanquan play`` sample is what the command prints, so it cannot drift again.

The sample once showed a preview line the engine never printed. Here
``oanquan play`` runs with the same input, its prompts echoing what was
typed as a terminal would, and the README block must be the start of that
output, line for line; a ``...`` line stands for the lines left out.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from companion.commands import play

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def readme_sample() -> list[str]:
    """The code block of "Try the rules in the terminal" that shows a session (``> ?``)."""
    section = README[README.index("## Try the rules in the terminal") :]
    blocks = section.split("```")[1::2]
    sample = next(b for b in blocks if "\n> ?\n" in b)
    return sample.strip("\n").splitlines()


class EchoingInput(io.StringIO):
    """Standard input as a terminal shows it: what is read appears after the prompt."""

    def readline(self, size: int | None = -1) -> str:
        line = super().readline(-1 if size is None else size)
        sys.stdout.write(line)
        return line


def session(argv: list[str], typed: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stdin", EchoingInput(typed))
    assert play.main(argv) == 0
    return out.getvalue().strip("\n").splitlines()


def matches(sample: list[str], output: list[str]) -> bool:
    """Whether ``sample`` is the start of ``output``, each ``...`` standing for 1+ lines."""
    if not sample:
        return True
    head, rest = sample[0], sample[1:]
    if head.strip() == "...":
        return any(matches(rest, output[skip:]) for skip in range(1, len(output) + 1))
    return bool(output) and output[0] == head and matches(rest, output[1:])


def test_the_play_sample_is_what_play_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    sample = readme_sample()
    typed = "".join(line[2:] + "\n" for line in sample if line.startswith("> "))
    assert typed == "?\n"
    output = session([], typed, monkeypatch)
    assert matches(sample, output), "\n".join(["README:", *sample, "", "printed:", *output])


def test_the_matcher_notices_a_changed_line() -> None:
    output = ["a", "b", "c", "d"]
    assert matches(["a", "...", "d"], output)
    assert matches(["a", "b"], output)
    assert not matches(["a", "...", "x"], output)
    assert not matches(["a", "c"], output)
    assert not matches(["a", "...", "a"], output)
