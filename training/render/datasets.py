"""Dataset manifests: the seed list is the dataset (training/render/datasets/*.toml).

A manifest names the generator version, the first seed and the count, and which ground
and piece families may be drawn; scene i of a dataset is seed `seed_start + i`. An
optional `lens = "drawn"` bends each scene through a lens of its camera's kind.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.render.families import check_families

MANIFESTS = Path(__file__).with_name("datasets")


class ManifestError(ValueError):
    """A manifest is missing or malformed."""


@dataclass(frozen=True)
class Dataset:
    name: str
    generator: str
    seed_start: int
    count: int
    grounds: tuple[str, ...]
    pieces: tuple[str, ...]
    purpose: str
    #: each scene's camera bends lines as a real lens does (``training.render.lens``);
    #: False (the manifests' ``lens = "pinhole"``) renders Blender's pinhole as it is
    lens: bool = False
    #: the pieces' size as a share of the square, drawn in this range for every scene;
    #: None draws each kind's size in millimetres (``sample.SIZE_MM``), a sixth of a
    #: square at most, as the training sets do
    piece_scale: tuple[float, float] | None = None

    def settings(self) -> dict[str, object]:
        """What a rendered folder's ``dataset.json`` records of the manifest: a folder keeps
        the settings it was started with (the sequence renderer checks them)."""
        return {
            "name": self.name,
            "generator": self.generator,
            "seed_start": self.seed_start,
            "grounds": list(self.grounds),
            "pieces": list(self.pieces),
            "lens": "drawn" if self.lens else "pinhole",
            "piece_scale": list(self.piece_scale) if self.piece_scale else None,
        }

    def seeds(self, count: int | None = None) -> list[tuple[int, int]]:
        """(index, seed) for the first `count` scenes (all by default)."""
        n = self.count if count is None else count
        return [(i, self.seed_start + i) for i in range(n)]


def _lens(value: object) -> bool:
    """The manifest's ``lens``: "pinhole" (the default) or "drawn" (one per scene)."""
    if value not in ("pinhole", "drawn"):
        raise ValueError(f'lens must be "pinhole" or "drawn", got {value!r}')
    return value == "drawn"


def _piece_scale(value: object) -> tuple[float, float] | None:
    """The manifest's ``piece_scale``: absent, or [lo, hi] with 0 < lo <= hi <= 0.5."""
    if value is None:
        return None
    bad = ValueError(f"piece_scale must be [lo, hi] with 0 < lo <= hi <= 0.5, got {value!r}")
    if not isinstance(value, list) or len(value) != 2:
        raise bad
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise bad
    lo, hi = float(value[0]), float(value[1])
    if not 0 < lo <= hi <= 0.5:
        raise bad
    return lo, hi


def load_manifest(name: str, folder: Path = MANIFESTS) -> Dataset:
    path = folder / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.toml")))
        raise ManifestError(f"no dataset manifest {path.name} (known: {known})")
    try:
        d = tomllib.loads(path.read_text())
        ds = Dataset(
            name=str(d["name"]),
            generator=str(d["generator"]),
            seed_start=int(d["seed_start"]),
            count=int(d["count"]),
            grounds=tuple(d["grounds"]),
            pieces=tuple(d["pieces"]),
            purpose=str(d.get("purpose", "")),
            lens=_lens(d.get("lens", "pinhole")),
            piece_scale=_piece_scale(d.get("piece_scale")),
        )
    except KeyError as e:
        raise ManifestError(f"{path.name}: missing key {e}") from e
    except (TypeError, ValueError, tomllib.TOMLDecodeError) as e:
        raise ManifestError(f"{path.name}: {e}") from e
    if ds.name != name:
        raise ManifestError(f"{path.name}: name is {ds.name!r}, expected {name!r}")
    check_families(ds.grounds, ds.pieces)
    return ds


def cache_root() -> Path:
    """$OANQUAN_CACHE, default ~/.cache/oanquan: rendered images live under it, never in git."""
    return Path(os.environ.get("OANQUAN_CACHE", Path.home() / ".cache" / "oanquan"))


def cache_dir(name: str) -> Path:
    """Where a dataset's images go: $OANQUAN_CACHE/renders/<name>, default ~/.cache/oanquan."""
    return cache_root() / "renders" / name


def write_settings(path: Path, settings: dict[str, Any], indent: int | None = None) -> None:
    """A rendered folder's ``dataset.json``, written whole or not at all: a second run
    started beside this one, or a run killed mid-write, must never find half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(settings, indent=indent))
    os.replace(tmp, path)
