"""Imports run one way: engine <- vision <- companion -> device; only companion wires them."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"engine", "vision", "device", "companion"}
STDLIB = set(sys.stdlib_module_names)

#: package -> (our packages it may import, third-party roots it may import; None = any)
ALLOWED: dict[str, tuple[set[str], set[str] | None]] = {
    "engine": (set(), set()),
    "vision": ({"engine.board", "engine.ring"}, {"numpy", "cv2"}),  # board geometry only
    "device": (set(), None),
    "companion": (OURS, None),
}


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_import_directions(package: str) -> None:
    ours_allowed, third_allowed = ALLOWED[package]
    problems = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in imports(path):
            root = name.split(".")[0]
            if root == package or root in STDLIB or root == "__future__":
                continue
            if root in OURS:
                if not any(
                    name == a or name.startswith(a + ".") or a == root for a in ours_allowed
                ):
                    problems.append(f"{path.relative_to(ROOT)} imports {name}")
            elif third_allowed is not None and root not in third_allowed:
                problems.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not problems


def test_packages_resolve_inside_the_repo() -> None:
    import companion
    import device
    import engine
    import vision

    for module in (engine, vision, device, companion):
        assert Path(module.__file__ or "").resolve().is_relative_to(ROOT)


#: companion's rooms -> (our modules they may import, third-party roots; None = any).
#: The referee is pure game-side judgement (numpy only, to weigh hundreds of candidate
#: runs at once), the UI draws and takes buttons, the appliance wires hardware, vision
#: and both; commands may use anything.
ROOMS: dict[str, tuple[set[str], set[str] | None]] = {
    "companion.referee": ({"engine", "companion.referee"}, {"numpy"}),
    "companion.ui": (
        {"engine", "companion.referee", "companion.ui", "device.ports", "device.clock"},
        {"PIL"},
    ),
    "companion.appliance": (
        {"engine", "vision", "device", "companion.referee", "companion.ui", "companion.appliance"},
        None,
    ),
    "companion.commands": (OURS, None),
}


def _within(name: str, allowed: set[str]) -> bool:
    return any(name == a or name.startswith(a + ".") for a in allowed)


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_companion_rooms_import_one_way(room: str) -> None:
    ours_allowed, third_allowed = ROOMS[room]
    folder = ROOT / Path(*room.split("."))
    problems = []
    for path in sorted(folder.rglob("*.py")):
        for name in imports(path):
            root = name.split(".")[0]
            if root in STDLIB or root == "__future__":
                continue
            if root in OURS:
                if not _within(name, ours_allowed):
                    problems.append(f"{path.relative_to(ROOT)} imports {name}")
            elif third_allowed is not None and root not in third_allowed:
                problems.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not problems


def test_every_companion_module_lives_in_a_room() -> None:
    """A newcomer finds the place for a change from the folder names alone."""
    loose = sorted(
        p.name
        for p in (ROOT / "companion").glob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    )
    assert loose == []
    assert {
        p.name for p in (ROOT / "companion").iterdir() if p.is_dir() and p.name != "__pycache__"
    } == {
        "referee",
        "ui",
        "appliance",
        "commands",
    }
