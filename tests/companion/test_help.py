"""What a new user reads first: ``oanquan --help`` and every command's ``--help``.

Each must work, say what every argument is, name only documents that exist,
and show plain text (no reStructuredText markup copied from a docstring).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from companion.__main__ import COMMANDS, main

REPO = Path(__file__).resolve().parents[2]


def help_of(words: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*words, "--help"])
    assert stop.value.code == 0, words
    return capsys.readouterr().out


def undescribed(text: str) -> list[str]:
    """Arguments listed without a word of help (argparse prints the name alone)."""
    lines = text.splitlines()
    bare = []
    for i, line in enumerate(lines):
        entry = re.fullmatch(r"  (-\S.*|[A-Za-z_]\S*)", line)
        if entry is None or "  " in line.strip():
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if not following.startswith(" " * 8):  # argparse puts long names' help below them
            bare.append(line.strip())
    return bare


@pytest.mark.parametrize("words", list(COMMANDS), ids=" ".join)
def test_every_command_help_is_plain_complete_and_points_at_real_docs(
    words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    text = help_of(words, capsys)
    assert text.startswith(f"usage: oanquan {' '.join(words)}")
    assert "``" not in text
    assert undescribed(text) == []
    for doc in re.findall(r"[\w./-]+\.md\b", text):
        assert (REPO / doc).is_file(), f"{' '.join(words)} --help names {doc}"


def test_the_checker_finds_an_argument_without_help() -> None:
    text = "positional arguments:\n  IMAGE\n\noptions:\n  -h, --help  show this help\n"
    assert undescribed(text) == ["IMAGE"]


def test_the_top_help_lists_every_command_and_says_where_options_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for words in COMMANDS:
        assert f"  {' '.join(words)} " in text
    assert "'oanquan COMMAND --help'" in text


def test_run_without_a_journal_off_the_pi_says_how_to_name_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OANQUAN_CONFIG", raising=False)
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\njournal_dir = "{tmp_path / "missing"}"\n')
    status = main(["run", "--config", str(config), "--manual", "--hardware", "fake"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert "does not exist" in err and "--journal ~/oanquan.jsonl" in err
