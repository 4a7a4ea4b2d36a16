"""The ``oanquan`` entry point: help, version, and command groups named alone."""

from __future__ import annotations

import pytest

from companion.__main__ import main


def test_version_names_the_installed_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("oanquan ") and "0." in out


def test_a_group_word_alone_lists_its_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    assert "rules replay" in capsys.readouterr().out
    assert main(["ai"]) == 0
    assert "ai serve" in capsys.readouterr().out


def test_an_unknown_subcommand_of_a_group_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "rewind"]) == 2
    err = capsys.readouterr().err
    assert "rules replay" in err and "unknown command 'rules rewind'" in err


def test_an_unknown_command_says_where_help_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fly"]) == 2
    assert "try 'oanquan --help'" in capsys.readouterr().err
